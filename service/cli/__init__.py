"""The `ricochet` command line: one module per subcommand, each adding its parser
(`add`) and running it (`run`).

Exit status: 0 when the work was done (the input could be read and judged), 1
when some of it could not be (a pack item that could not be made), 2 with a
message on standard error for unreadable or invalid input.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from solver.production.pools import keep_packed_in
from workers.settings import Settings, SettingsError

from . import bank, board, catalogue, check, daily, export, generate, keys, pack, pool, serve, solve, themes, worker
from .common import EXIT_INPUT, EXIT_OK, InputError, version

SUBCOMMANDS = (board, check, solve, generate, daily, pack, pool, catalogue, export, serve, worker, bank, keys, themes)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ricochet", description="Ricochet Robots puzzles: boards, solving, "
                                     "checking, generating, packs, pools, and running the service.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in SUBCOMMANDS:
        module.add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Many commands open every pool; one that reads the settings says what is wrong with them, the others
    # run without the cache.
    with contextlib.suppress(SettingsError):
        keep_packed_in(Settings.from_env().pool_cache)
    try:
        return args.run(args)
    except InputError as e:
        print(f"ricochet: {e}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
