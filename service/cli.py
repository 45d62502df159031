"""The `ricochet` command: the game's own commands plus running the service."""

from __future__ import annotations

import argparse
import sys

from solver.cli import build_parser
from solver.cli import main as solver_main


def main(argv: list[str] | None = None) -> int:
    parser, sub = build_parser()
    p = sub.add_parser("serve", help="run the HTTP API")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.set_defaults(run=_serve)
    return solver_main(argv, parser)


def _serve(args: argparse.Namespace) -> int:
    from werkzeug.serving import run_simple

    from .app import create_app

    print(f"ricochet: serving on http://{args.host}:{args.port}/ (Ctrl-C stops)", file=sys.stderr)
    run_simple(args.host, args.port, create_app(), threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
