"""`ricochet pool build|list|import`: pools, proven and rated puzzles of every length from one analysis."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from solver.errors import InvalidInput

from .common import EXIT_OK, InputError, context, progress_bar


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.set_defaults(run=build)
    p = verbs.add_parser("list", help="the pools the service sees: starter set, then REDIS_URL's")
    p.add_argument("--json", action="store_true", help="one JSON object per pool")
    p.set_defaults(run=show)
    p = verbs.add_parser("import", help="copy pool files (from `pool build --output`) into the Redis at REDIS_URL")
    p.add_argument("files", nargs="+", help="<id>.pool.gz files")
    p.set_defaults(run=load)


def _redis_pools() -> Any:
    return ctx.stores.pools if (ctx := context()).stores is not None else None


def build(args: argparse.Namespace) -> int:
    from solver.production import pools

    try:
        goal = pools.target_named(args.board, args.target)
    except InvalidInput as e:
        raise InputError(str(e)) from None
    store = pools.DirectorySource(args.output) if args.output else _redis_pools()
    if store is None:
        raise InputError("set REDIS_URL to the deployment's Redis, or give --output FOLDER")
    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = progress_bar(total, stage, " positions" if stage != "analysis" else "")
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    options = {k: v for k, v in (("per_length", args.per_length), ("min_length", args.min_length)) if v}
    built = pools.build(args.board, goal, robots=args.robots, threads=args.threads, progress=progress, **options)
    for pool in built:
        where: Path | str
        if isinstance(store, pools.DirectorySource):
            where = store.write(pool)
        else:
            store.write(pool.id, pool.dumps())
            where = "Redis"
        lengths = pool.lengths()
        print(f"ricochet: {pool.id}: {len(pool.rows)} puzzles of {min(lengths, default=0)}-"
              f"{max(lengths, default=0)} moves -> {where}", file=sys.stderr)
    return EXIT_OK


def show(args: argparse.Namespace) -> int:
    from solver.production import pools

    sources = pools.shipped() + ([store] if (store := _redis_pools()) is not None else [])
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
    return EXIT_OK


def load(args: argparse.Namespace) -> int:
    from solver.production.pools import Pool

    store = _redis_pools()
    if store is None:
        raise InputError("set REDIS_URL to the deployment's Redis")
    for name in args.files:
        try:
            pool = Pool.loads(Path(name).read_bytes())
        except (OSError, ValueError) as e:
            raise InputError(f"{name}: {e}") from None
        store.write(pool.id, pool.dumps())
        print(f"ricochet: {pool.id} imported", file=sys.stderr)
    return EXIT_OK
