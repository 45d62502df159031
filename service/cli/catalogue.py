"""`ricochet catalogue build`: grow the catalogue of long puzzles over an edition
(solver/production/catalogue.py) from the starter pools' and the bank's long
puzzles, and merge what it proves into the catalogue's pool files.  It resumes
where it stopped: the boards of the pairs already in the catalogue are not
proven again."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

from .common import EXIT_OK, InputError


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("catalogue", help="grow the catalogue of long puzzles over an edition")
    actions = p.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build", help="prove board variants of long puzzles, and merge them in")
    build.add_argument("--edition", choices=("2013",), default="2013", help="the edition (2013)")
    build.add_argument("--minutes", type=float, default=10.0, help="stop after this long (default 10)")
    build.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    build.add_argument("--seeds", type=int, default=400, help="long puzzles to start from (default 400)")
    build.add_argument("--out", default=None, help="the catalogue's folder (default: the package's)")
    build.add_argument("--queue", action="store_true", help="fan the seeds out as Celery tasks on the analysis "
                       "queue of the deployment at REDIS_URL, for any number of workers, instead of processes here")
    build.add_argument("--batches", type=int, default=32, help="with --queue, tasks to send (default 32)")
    build.set_defaults(run=run_build)
    status = actions.add_parser("status", help="what the deployment's workers have grown (REDIS_URL)")
    status.set_defaults(run=run_status)
    merge_cmd = actions.add_parser("merge", help="write what the deployment's workers grew into the catalogue's "
                                   "files (REDIS_URL), beside what they hold")
    merge_cmd.add_argument("--out", default=None, help="the catalogue's folder (default: the package's)")
    merge_cmd.set_defaults(run=run_merge)


def _stores() -> Any:
    from workers.settings import settings_or_exit
    from workers.stores import Stores

    url = settings_or_exit().redis_url
    if not url:
        raise InputError("the workers' catalogue lives in the deployment's Redis: set REDIS_URL")
    return Stores.from_url(url)


def _out(path: str | None) -> Any:
    from solver.production.catalogue import CATALOGUE
    from solver.production.pools import DirectorySource, Pool

    out = DirectorySource(Path(path) if path else CATALOGUE)
    return out, [p for i in out.ids() if (p := Pool.loads(out.read(i))) is not None]


def run_status(args: argparse.Namespace) -> int:  # noqa: ARG001 - every command takes its args
    stores = _stores()
    pools = stores.catalogue.pool_ids()
    rows = sum(len(stores.catalogue.rows(p)) for p in pools)
    print(json.dumps({"tried": stores.catalogue.tried(), "puzzles": rows, "pairs": len(pools),
                      "queued": stores.queued("analysis")}))
    return EXIT_OK


def run_merge(args: argparse.Namespace) -> int:
    stores = _stores()
    out, have = _out(args.out)
    found = [(code, item) for p in stores.catalogue.pool_ids() for code, item in stores.catalogue.rows(p).items()]
    merged = merge(out, have, found)
    print(f"ricochet: the catalogue holds {sum(len(p.rows) for p in merged)} puzzles on {len(merged)} pairs",
          file=sys.stderr)
    return EXIT_OK


_tried: set[str] = set()  # in each process of a local build: the variants it tried
SLICE = 120.0  # seconds one seed's growth may take before the next seed's turn


def _known(codes: list[str]) -> None:
    _tried.update(codes)


def _grow(job: tuple[str, float, int]) -> list[tuple[str, dict[str, Any]]]:
    """One seed's growth for a slice of time (a local build's task)."""
    from solver.model.puzzle import Puzzle
    from solver.production.catalogue import claimer, found_json, grow

    code, deadline, seed = job
    claim = claimer(_tried)
    until = time.monotonic() + max(0.0, min(SLICE, deadline - time.time()))
    return [(g.puzzle.code(), found_json(g))
            for g in grow([Puzzle.from_code(code)], seed=seed, claim=claim, until=until)]


def run_build(args: argparse.Namespace) -> int:
    from solver.production.catalogue import SEED_FROM, seeds_for
    from solver.production.pools import Library, packaged

    if args.processes < 1 or args.seeds < 1 or args.minutes <= 0 or args.batches < 1:
        raise InputError("--processes, --seeds, --batches and --minutes must be positive")
    out, have = _out(args.out)
    seeds = seeds_for(Library([packaged(), out]), args.seeds, SEED_FROM)
    if args.queue:
        return _fan_out(seeds, args)
    # What is kept is not proven again: its puzzles, and its pairs (a variant is tried once per pair).
    known = sorted({p.puzzle(i).code() for p in have for i in range(len(p.rows))} | {p.id for p in have}
                   | set(packaged().ids()))
    deadline = time.time() + 60 * args.minutes
    started = last = time.time()
    found: list[tuple[str, dict[str, Any]]] = []
    with multiprocessing.get_context("spawn").Pool(args.processes, _known, (known,)) as workers:
        for batch in workers.imap_unordered(_grow, [(c, deadline, k) for k, c in enumerate(seeds)]):
            found += batch
            if time.time() - last > 60:  # what is proven is written as it comes: a stopped build keeps it
                have = merge(out, have, found)
                found, last = [], time.time()
                print(f"ricochet: {sum(len(p.rows) for p in have)} puzzles on {len(have)} pairs after "
                      f"{last - started:.0f} s", file=sys.stderr, flush=True)
            if time.time() > deadline:
                workers.terminate()
                break
    have = merge(out, have, found)
    print(f"ricochet: the catalogue holds {sum(len(p.rows) for p in have)} puzzles on {len(have)} pairs "
          f"after {time.time() - started:.0f} s", file=sys.stderr)
    return EXIT_OK


def _fan_out(seeds: list[str], args: argparse.Namespace) -> int:
    """The seeds in batches, each a task on the analysis queue."""
    from workers.app import ANALYSIS_QUEUE, make_celery
    from workers.settings import settings_or_exit

    _stores()  # REDIS_URL is set
    celery = make_celery(settings_or_exit().redis_url)
    for k in range(args.batches):
        celery.send_task("ricochet.catalogue_grow", args=[seeds[k::args.batches], 60 * args.minutes],
                         queue=ANALYSIS_QUEUE)
    print(f"ricochet: {args.batches} tasks queued on {ANALYSIS_QUEUE} ({len(seeds)} seeds, about {args.minutes:g} "
          "minutes each); `ricochet catalogue status` follows them, `ricochet catalogue merge` writes what they "
          "grew into the catalogue's files", file=sys.stderr)
    return EXIT_OK


def merge(out: Any, have: list[Any], found: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The catalogue's pools with the found puzzles added, written back (a pair
    the starter pools hold already is theirs: their id comes first; a pair
    analysed whole keeps its pool as the analysis made it; a puzzle the bank
    holds is the bank's)."""
    from solver.production import bank
    from solver.production.catalogue import from_json, pools_of
    from solver.production.pools import packaged

    analysed = {pool.id for pool in have if "analysis_seconds" in pool.built}
    generated = [pool.generated(i) for pool in have if pool.id not in analysed for i in range(len(pool.rows))]
    generated += [from_json(code, item) for code, item in found]
    banked = {e["code"] for e in bank.entries()}  # the growth comes back to its seeds' boards now and then
    kept = set(packaged().ids()) | analysed
    merged = [p for p in pools_of(g for g in generated if g.puzzle.code() not in banked) if p.id not in kept]
    for pool in merged:
        out.write(pool)
    return merged
