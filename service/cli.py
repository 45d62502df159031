"""The `ricochet` command: the game's own commands plus running the service."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from solver.cli import build_parser
from solver.cli import main as solver_main
from solver.errors import InvalidInput


def main(argv: list[str] | None = None) -> int:
    parser, sub = build_parser()
    p = sub.add_parser("serve", help="run the HTTP API (with a private Redis and a worker when REDIS_URL is unset)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--instance", default="instance", help="folder for the private Redis's files")
    p.set_defaults(run=_serve)
    p = sub.add_parser("worker", help="run a Celery worker (REDIS_URL names the Redis)")
    p.add_argument("--concurrency", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument("--queues", default="ricochet,packs",
                   help="queues to take work from, the first first: ricochet (solves, single puzzles, the "
                        "daily), packs, analysis (pool builds, about 4 GiB each: give those workers "
                        "--concurrency 1); default ricochet,packs")
    p.set_defaults(run=_worker)
    p = sub.add_parser("beat", help="run the Celery beat scheduler: daily puzzles published ahead, pools grown")
    p.set_defaults(run=_beat)
    p = sub.add_parser("pack", help="make a pack without a server: one JSON puzzle per line, the same items as "
                                    "POST /v1/packs with the same fields (starter pools)")
    p.add_argument("--count", type=int, required=True, help="puzzles in the pack (1 to 1000)")
    p.add_argument("--length", type=int, help="exact optimal length (or --min-length and --max-length)")
    p.add_argument("--min-length", type=int, help="shortest optimal length")
    p.add_argument("--max-length", type=int, help="longest optimal length")
    p.add_argument("--seed", default="0", help="same seed and fields, same pack (default 0)")
    p.add_argument("--board", default="random-2013",
                   help="a board spec, random-2013 (default), random-1999 or random-beginner")
    p.add_argument("--robots", type=int, choices=(4, 5), default=4, help="robots (default 4)")
    p.add_argument("--ricochet", choices=("turn", "none"), default="turn", help="the ricochet rule (default turn)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="processes searching in parallel (default 1)")
    p.set_defaults(run=_pack)
    pool = sub.add_parser("pool", help="pools: proven, rated puzzles of every length from one board analysis")
    verbs = pool.add_subparsers(dest="verb", required=True, metavar="{build,list,import}")
    p = verbs.add_parser("build", help="analyse one board and target (about 4 GiB, minutes) and store its pools")
    p.add_argument("board", help="a real board spec like 'green-C,red-D,blue-A,yellow-D'")
    p.add_argument("target", help="one of the board's chips, as colour-symbol (red-moon) or vortex")
    p.add_argument("--per-length", type=int, default=None,
                   help="positions drawn per length before one per solution is kept (default 2000)")
    p.add_argument("--min-length", type=int, default=None, help="shortest length kept (default 8)")
    p.add_argument("--threads", type=int, default=2, help="threads for the analysis and the proofs (default 2)")
    p.add_argument("--robots", type=int, choices=(2, 3, 4), default=4,
                   help="robots (default 4, what requests draw on; fewer for quick experiments)")
    p.add_argument("--output", help="write <id>.pool.gz files into this folder instead of the Redis at REDIS_URL")
    p.set_defaults(run=_pool_build)
    p = verbs.add_parser("list", help="the pools the service sees: starter set, then REDIS_URL's")
    p.add_argument("--json", action="store_true", help="one JSON object per pool")
    p.set_defaults(run=_pool_list)
    p = verbs.add_parser("import", help="copy pool files (from `pool build --output`) into the Redis at REDIS_URL")
    p.add_argument("files", nargs="+", help="<id>.pool.gz files")
    p.set_defaults(run=_pool_import)
    return solver_main(argv, parser)


def _redis_pools() -> Any:
    from workers.stores import Stores

    url = os.environ.get("REDIS_URL")
    return Stores.from_url(url).pools() if url else None


def _pool_build(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from solver.production import pools
    from workers.tasks import pool_target

    try:
        goal = pool_target(args.board, args.target)
    except InvalidInput as e:
        print(f"ricochet: {e}", file=sys.stderr)
        return 2
    store = pools.DirectorySource(args.output) if args.output else _redis_pools()
    if store is None:
        print("ricochet: set REDIS_URL to the deployment's Redis, or give --output FOLDER", file=sys.stderr)
        return 2
    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(total=total, desc=stage, unit=" positions" if stage != "analysis" else "",
                                     file=sys.stderr, leave=True)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    options = {k: v for k, v in (("per_length", args.per_length), ("min_length", args.min_length)) if v}
    built = pools.build(args.board, goal, robots=args.robots, threads=args.threads, progress=progress, **options)
    for pool in built:
        if isinstance(store, pools.DirectorySource):
            where = store.write(pool)
        else:
            store.write(pool.id, pool.dumps())
            where = "Redis"
        lengths = pool.lengths()
        print(f"ricochet: {pool.id}: {len(pool.rows)} puzzles of {min(lengths, default=0)}-"
              f"{max(lengths, default=0)} moves -> {where}", file=sys.stderr)
    return 0


def _pack(args: argparse.Namespace) -> int:
    """A pack on standard output, items in order; items that could not be made on standard error."""
    import json

    from tqdm import tqdm

    from solver.production.packs import make
    from workers.schemas import PackRequest, load

    lo = args.min_length if args.length is None else args.length
    hi = args.max_length if args.length is None else args.length
    if lo is None or hi is None:
        print("ricochet: give --length, or --min-length and --max-length", file=sys.stderr)
        return 2
    if not 1 <= args.jobs <= 64:
        print("ricochet: --jobs must be from 1 to 64", file=sys.stderr)
        return 2
    try:
        request = load(PackRequest(), {"count": args.count, "min_length": lo, "max_length": hi, "seed": args.seed,
                                      "board": args.board, "robots": args.robots, "ricochet": args.ricochet})
    except InvalidInput as e:
        print(f"ricochet: {e}", file=sys.stderr)
        return 2
    failed = 0
    with tqdm(total=args.count, desc="pack", unit=" puzzles", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
        for index, item in make(request, processes=args.jobs, progress=bar.update):
            if isinstance(item, str):
                failed += 1
                print(f"ricochet: item {index}: {item}", file=sys.stderr)
                continue
            print(json.dumps({"index": index, **item}, separators=(",", ":")), flush=True)
    bar.close()
    return 1 if failed else 0


def _pool_list(args: argparse.Namespace) -> int:
    import json

    from solver.production import pools

    sources = [pools.packaged()] + ([store] if (store := _redis_pools()) is not None else [])
    library = pools.Library(sources)
    for entry in library.entries():
        pool = library.load(entry.id)
        lengths = {n: len(rows) for n, rows in sorted(pool.lengths().items())} if pool else {}
        if args.json:
            print(json.dumps({"id": entry.id, "board": entry.board, "cell": list(entry.cell), "colour": entry.colour,
                              "robots": entry.robots, "ricochet": entry.ricochet, "lengths": lengths}))
        else:
            longest = max(lengths, default=0)
            print(f"{entry.id}  {sum(lengths.values())} puzzles, up to {longest} moves")
    return 0


def _pool_import(args: argparse.Namespace) -> int:
    from solver.production.pools import Pool

    store = _redis_pools()
    if store is None:
        print("ricochet: set REDIS_URL to the deployment's Redis", file=sys.stderr)
        return 2
    for name in args.files:
        try:
            pool = Pool.loads(Path(name).read_bytes())
        except (OSError, ValueError) as e:
            print(f"ricochet: {name}: {e}", file=sys.stderr)
            return 2
        store.write(pool.id, pool.dumps())
        print(f"ricochet: {pool.id} imported", file=sys.stderr)
    return 0


def _worker_command(concurrency: int | None, beat: bool = False, queues: str = "ricochet,packs") -> list[str]:
    cmd = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "warning",
           "--without-gossip", "--without-mingle", "--queues", queues]
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
    cmd = _worker_command(args.concurrency, queues=args.queues)
    os.execv(cmd[0], cmd)  # become the worker: signals reach Celery itself
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _serve(args: argparse.Namespace) -> int:
    """gunicorn with the production settings (service/gunicorn_config.py); without
    REDIS_URL, a private Redis and one worker (that also runs the beat) beside it."""
    embedded = worker = web = None
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops the stack as Ctrl-C does
    env = dict(os.environ)
    try:
        if not env.get("REDIS_URL"):
            from workers.embedded import EmbeddedRedis

            embedded = EmbeddedRedis(Path(args.instance) / "redis").start()
            env["REDIS_URL"] = embedded.url
            worker = subprocess.Popen(_worker_command(1, beat=True, queues="ricochet,packs,analysis"), env=env)
            print(f"ricochet: private Redis on 127.0.0.1:{embedded.port}, one worker", file=sys.stderr)
        env.setdefault("RICOCHET_ACCESS_LOG", "")
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_config",
                                "--bind", f"{args.host}:{args.port}", "service.app:create_app()"], env=env)
        print(f"ricochet: serving on http://{args.host}:{args.port}/ with gunicorn (Ctrl-C stops)", file=sys.stderr)
        web.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for proc in (web, worker):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if embedded is not None:
            embedded.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
