"""The `ricochet` command: the game's own commands plus running the service."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from solver.cli import build_parser
from solver.cli import main as solver_main


def main(argv: list[str] | None = None) -> int:
    parser, sub = build_parser()
    p = sub.add_parser("serve", help="run the HTTP API (with a private Redis and a worker when REDIS_URL is unset)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--instance", default="instance", help="folder for the private Redis's files")
    p.set_defaults(run=_serve)
    p = sub.add_parser("worker", help="run a Celery worker (REDIS_URL names the Redis)")
    p.add_argument("--concurrency", type=int, default=None)
    p.set_defaults(run=_worker)
    p = sub.add_parser("beat", help="run the Celery beat scheduler: daily puzzles published ahead")
    p.set_defaults(run=_beat)
    return solver_main(argv, parser)


def _worker_command(concurrency: int | None, beat: bool = False) -> list[str]:
    cmd = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "warning",
           "--without-gossip", "--without-mingle"]
    if beat:  # the embedded default: one process also schedules the daily precompute
        cmd += ["--beat", "--schedule", str(Path("instance") / "celerybeat-schedule")]
    return cmd + (["--concurrency", str(concurrency)] if concurrency else [])


def _beat(args: argparse.Namespace) -> int:
    if not os.environ.get("REDIS_URL"):
        print("ricochet: set REDIS_URL to the Redis the API uses", file=sys.stderr)
        return 2
    cmd = [sys.executable, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "warning"]
    os.execv(cmd[0], cmd)  # become beat: signals reach Celery itself
    return 0


def _worker(args: argparse.Namespace) -> int:
    if not os.environ.get("REDIS_URL"):
        print("ricochet: set REDIS_URL to the Redis the API uses", file=sys.stderr)
        return 2
    cmd = _worker_command(args.concurrency)
    os.execv(cmd[0], cmd)  # become the worker: signals reach Celery itself
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _serve(args: argparse.Namespace) -> int:
    from werkzeug.serving import run_simple

    from .app import create_app

    embedded = worker = None
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops the stack as Ctrl-C does
    try:
        if not os.environ.get("REDIS_URL"):
            from workers.embedded import EmbeddedRedis

            embedded = EmbeddedRedis(Path(args.instance) / "redis").start()
            os.environ["REDIS_URL"] = embedded.url
            worker = subprocess.Popen(_worker_command(1, beat=True))
            print(f"ricochet: private Redis on 127.0.0.1:{embedded.port}, one worker", file=sys.stderr)
        print(f"ricochet: serving on http://{args.host}:{args.port}/ (Ctrl-C stops)", file=sys.stderr)
        run_simple(args.host, args.port, create_app(), threaded=True)
    except KeyboardInterrupt:
        pass
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
        if embedded is not None:
            embedded.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
