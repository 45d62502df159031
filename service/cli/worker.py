"""`ricochet worker` and `ricochet beat`: the Celery processes of a deployment (REDIS_URL names the Redis)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from workers.settings import settings_or_exit

from .common import InputError

DEFAULT_QUEUES = "ricochet,packs"


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("worker", help="run a Celery worker (REDIS_URL names the Redis)")
    p.add_argument("--concurrency", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument("--queues", default=DEFAULT_QUEUES,
                   help="queues to take work from, the first first: ricochet (solves, single puzzles, the "
                        "daily), packs, analysis (pool builds, about 4 GiB each: give those workers "
                        "--concurrency 1), webhooks (deliveries: give them a worker of their own, --pool threads); "
                        "default ricochet,packs")
    p.add_argument("--pool", choices=("prefork", "threads"), default=None,
                   help="Celery's pool: prefork (processes, the default) or threads (for the webhooks queue, whose "
                        "tasks wait on receivers)")
    p.add_argument("-n", "--hostname", default=None,
                   help="the worker's node name, unique in the deployment (default: QUEUE-PID@HOST)")
    p.set_defaults(run=run_worker)
    p = sub.add_parser("beat", help="run the Celery beat scheduler: daily puzzles published ahead, pools grown")
    p.set_defaults(run=run_beat)


def command(concurrency: int | None, queues: str = DEFAULT_QUEUES, hostname: str | None = None,
            pool: str | None = None) -> list[str]:
    """The Celery worker's command line (`ricochet serve` starts one too)."""
    name = hostname or f"{queues.split(',')[0]}-{os.getpid()}@%h"
    cmd = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "warning",
           "--without-gossip", "--without-mingle", "--queues", queues, "--hostname", name]
    return cmd + (["--concurrency", str(concurrency)] if concurrency else []) + (["--pool", pool] if pool else [])


WEBHOOK_THREADS = 4  # deliveries one webhook worker attempts at once (each waits up to its timeouts, 8 s)


def webhook_command(hostname: str | None = None) -> list[str]:
    """The webhook worker's command line: the webhooks queue alone, on threads."""
    return command(WEBHOOK_THREADS, queues="webhooks", hostname=hostname, pool="threads")


def beat_command(schedule_dir: Path | None = None) -> list[str]:
    """Celery beat's command line (`ricochet serve` keeps its schedule in its instance folder)."""
    cmd = [sys.executable, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "warning"]
    return cmd + (["--schedule", str(schedule_dir / "celerybeat-schedule")] if schedule_dir is not None else [])


def _redis_url() -> None:
    if not settings_or_exit().redis_url:
        raise InputError("set REDIS_URL to the Redis the API uses")


def run_worker(args: argparse.Namespace) -> int:
    _redis_url()
    cmd = command(args.concurrency, queues=args.queues, hostname=args.hostname, pool=args.pool)
    os.execv(cmd[0], cmd)  # become the worker: signals reach Celery itself
    return 0


def run_beat(args: argparse.Namespace) -> int:
    _redis_url()
    cmd = beat_command()
    os.execv(cmd[0], cmd)  # become beat: signals reach Celery itself
    return 0
