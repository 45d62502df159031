"""`ricochet catalogue build`: grow the catalogue of long puzzles over an edition
(solver/production/catalogue.py) from the starter pools' and the bank's long
puzzles, and merge what it proves into the catalogue's pool files.  It resumes
where it stopped: the boards already holding a long puzzle are not swept
again.  `ricochet catalogue fill` adds 20-move puzzles to the pairs holding
few, `ricochet catalogue lift` lifts every pair that can hold one and holds
none, and `ricochet catalogue deepen` analyses its longest pairs whole."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from solver.model.puzzle import Ricochet
from workers.messages import ANALYSIS_QUEUE, CATALOGUE_FILL, CATALOGUE_GROW, CATALOGUE_LIFT, Message

from .common import EXIT_OK, InputError, deployment


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("catalogue", help="grow the catalogue of long puzzles over an edition")
    actions = p.add_subparsers(dest="action", required=True)
    build = actions.add_parser("build", help="sweep and lift the boards of every family, likeliest first, "
                               "and merge them in")
    build.add_argument("--edition", choices=("2013",), default="2013", help="the edition (2013)")
    build.add_argument("--minutes", type=float, default=10.0, help="stop after this long (default 10)")
    build.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    build.add_argument("--seeds", type=int, default=400, help="long puzzles to start from, at most 16 per family "
                       "(default 400)")
    build.add_argument("--screen", type=int, default=None, help="families without seeds to lift long "
                       "puzzles on too (default: every family of the edition)")
    build.add_argument("--out", default=None, help="the catalogue's folder (default: the package's)")
    build.add_argument("--queue", action="store_true", help="fan the seeds out as Celery tasks on the analysis "
                       "queue of the deployment at REDIS_URL, for any number of workers, instead of processes here")
    build.add_argument("--batches", type=int, default=4, help="shares each family's growth is split into, "
                       "each a task with --queue (default 4)")
    build.set_defaults(run=run_build)
    status = actions.add_parser("status", help="what the deployment's workers have grown (REDIS_URL)")
    status.set_defaults(run=run_status)
    merge_cmd = actions.add_parser("merge", help="write what the deployment's workers grew into the catalogue's "
                                   "files (REDIS_URL), beside what they hold")
    merge_cmd.add_argument("--out", default=None, help="the catalogue's folder (default: the package's)")
    merge_cmd.set_defaults(run=run_merge)
    deepen = actions.add_parser("deepen", help="analyse the catalogue's longest pairs whole (4 GiB and about "
                                "4 minutes of 2 cores each) and keep a sample of their proven puzzles")
    deepen.add_argument("--pairs", type=int, default=1, help="pairs to analyse, longest first (default 1)")
    deepen.add_argument("--candidates", action="store_true", help="analyse new pairs instead: the boards of long "
                        "families that hold no 20-move puzzle yet, likeliest first (the sweeps miss many)")
    deepen.add_argument("--threads", type=int, default=2, help="threads per analysis (default 2)")
    deepen.add_argument("--out", default=None, help="the catalogue's folder (default: the package's)")
    deepen.add_argument("--queue", action="store_true", help="queue the analyses as pool jobs on the deployment "
                        "at REDIS_URL (its analysis workers), instead of running them here; `ricochet catalogue "
                        "merge` then writes them into the catalogue's files")
    deepen.set_defaults(run=run_deepen)
    fill = actions.add_parser("fill", help="more 20-move puzzles on the pairs that hold few (fewest first), "
                              "and merge them in")
    fill.add_argument("--minutes", type=float, default=10.0, help="stop after this long (default 10)")
    fill.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    fill.add_argument("--pairs", type=int, default=None, help="at most this many pairs, fewest first (default: all)")
    fill.add_argument("--enough", type=int, default=None, help="fill each pair until it holds this many (default and "
                      "at most: what a pair keeps, 48); a lower one first spreads a short run over more pairs")
    fill.add_argument("--out", default=None, help="the catalogue's folder (default: the package's)")
    fill.add_argument("--queue", action="store_true", help="queue one task per pair on the analysis queue of the "
                      "deployment at REDIS_URL instead of running them here; `ricochet catalogue merge` then "
                      "writes what they found into the catalogue's files")
    fill.set_defaults(run=run_fill)
    lift = actions.add_parser("lift", help="lift every pair of the edition that can hold a 20-move puzzle and holds "
                              "none yet, longest 2-robot position first (see docs/production.md)")
    lift.add_argument("--minutes", type=float, default=10.0, help="stop after this long (default 10)")
    lift.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    lift.add_argument("--pairs", type=int, default=None, help="at most this many pairs, longest first (default: all)")
    lift.add_argument("--family", action="append", default=None, help="only this family's boards, e.g. "
                      "yellow-B@1:14-2-red (see docs/production.md; repeat for more; default: every family)")
    lift.add_argument("--out", default=None, help="the catalogue's folder (default: the package's)")
    lift.add_argument("--queue", action="store_true", help="queue one task per pair on the analysis queue of the "
                      "deployment at REDIS_URL instead of running them here; `ricochet catalogue merge` then "
                      "writes what they found into the catalogue's files")
    lift.set_defaults(run=run_lift)


def _deployment() -> Any:
    return deployment("the workers' catalogue lives in the deployment's Redis: set REDIS_URL")


def _within_visibility(minutes: float) -> None:
    """A queued catalogue task is acknowledged when it ends: one that runs past the
    broker's visibility timeout is handed to a second worker while the first still
    runs.  Refused here, before anything is queued (the workers share this
    environment: docs/operations.md)."""
    from workers.settings import Settings

    timeout = Settings.from_env().visibility_timeout
    if 60 * minutes > timeout - 60:
        raise InputError(f"--minutes {minutes:g} with --queue: a queued task must end a minute within "
                         f"RICOCHET_VISIBILITY_TIMEOUT ({timeout} s), or the broker hands it to a second worker "
                         f"while it runs; ask for at most {(timeout - 60) / 60:g} minutes, or raise the timeout "
                         "for every process of the deployment")


def _stores() -> Any:
    return _deployment().stores


def _out(path: str | None) -> Any:
    from solver.production.catalogue import CATALOGUE
    from solver.production.pools import DirectorySource, Pool

    out = DirectorySource(Path(path) if path else CATALOGUE)
    return out, [Pool.loads(raw) for i in out.ids() if (raw := out.read(i)) is not None]


def run_status(args: argparse.Namespace) -> int:  # noqa: ARG001 - every command takes its args
    stores = _stores()
    pools = stores.catalogue.pool_ids()
    rows = sum(len(stores.catalogue.rows(p)) for p in pools)
    print(json.dumps({"tried": stores.catalogue.tried(), "puzzles": rows, "pairs": len(pools),
                      "queued": stores.queued("analysis")}))
    return EXIT_OK


def run_merge(args: argparse.Namespace) -> int:
    """What the workers grew, and the long pairs they analysed whole (`deepen
    --queue`), written into the catalogue's files."""
    from solver.production.catalogue import DEEP_SEED, analysed, trimmed
    from solver.production.pools import Pool, packaged

    stores = _stores()
    out, have = _out(args.out)
    starters = set(packaged().ids())
    for pool_id in stores.pools.ids():
        data = stores.pools.read(pool_id)
        pool = Pool.loads(data) if data is not None and pool_id not in starters else None
        if pool is not None and analysed(pool) and pool.built.get("seed") == DEEP_SEED:
            kept = trimmed(pool)
            if kept.rows:
                out.write(kept)
                have = [p for p in have if p.id != pool.id] + [kept]
    found = [(code, item) for p in stores.catalogue.pool_ids() for code, item in stores.catalogue.rows(p).items()]
    merged = merge(out, have, found)
    print(f"ricochet: the catalogue holds {sum(len(p.rows) for p in merged)} puzzles on {len(merged)} pairs",
          file=sys.stderr)
    return EXIT_OK


_tried: set[str] = set()  # in each process of a local build: the boards and positions it tried


def _known(codes: list[str]) -> None:
    _tried.update(codes)


Job = tuple[str, list[str], tuple[int, int], float, int, list[str]]
GROWN = "grown.txt"  # beside a catalogue's files: the shares local builds finished, one per line


def _grow(job: Job) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """A share of one family's growth (a local build's task): the share's name
    when it finished before the deadline, and what it found."""
    from solver.model.puzzle import Puzzle
    from solver.production.catalogue import claimer, found_json, grow

    name, codes, part, deadline, seed, discover = job
    until = time.monotonic() + max(0.0, deadline - time.time())
    found = [(g.puzzle.code(), found_json(g)) for g in grow([Puzzle.from_code(c) for c in codes], seed=seed,
                                                            claim=claimer(_tried), until=until, part=part,
                                                            discover=discover)]
    return (name if time.monotonic() < until else None), found


def _to_discover(families: dict[str, list[str]], count: int | None) -> list[str]:
    from solver.production.catalogue import all_families

    return [f for f in all_families() if f not in families][:count]


def _families(seeds: list[str]) -> dict[str, list[str]]:
    """The seeds' families and those of their sections at the other quadrants,
    each with its placements' codes."""
    from solver.model.puzzle import Puzzle
    from solver.production.catalogue import families

    return {f: [p.code() for p in ps] for f, ps in families([Puzzle.from_code(c) for c in seeds], moved=True).items()}


def _swept(pools: list[Any]) -> set[str]:
    """The boards of families that need no sweep nor lift: those holding a SEED_FROM-move puzzle."""
    from solver.production.catalogue import SEED_FROM, family_of

    return {f"{how}{family_of(p.puzzle(0))}|{p.board.spec}" for p in pools
            if p.rows and p.board.spec and max(p.lengths()) >= SEED_FROM for how in ("", "lift|")}


def run_build(args: argparse.Namespace) -> int:
    from solver.production.catalogue import SEED_FROM, seeds_for
    from solver.production.pools import Library, packaged

    if args.processes < 1 or args.seeds < 1 or args.minutes <= 0 or args.batches < 1 or (args.screen or 0) < 0:
        raise InputError("--processes, --seeds, --batches and --minutes must be positive, --screen not negative")
    if args.queue:
        _within_visibility(args.minutes)
    out, have = _out(args.out)
    library = Library([packaged(), out])
    families = _families(seeds_for(library, args.seeds, SEED_FROM))
    # What is kept is not tried again: its puzzles, and the boards already holding a long one.
    starters = [p for e in library.entries() if (p := library.load(e.id)) is not None]
    if args.queue:
        return _fan_out(families, args, sorted(_swept(starters)))
    known = sorted({p.puzzle(i).code() for p in have for i in range(len(p.rows))} | _swept(starters))
    deadline = time.time() + 60 * args.minutes
    grown = out.path / GROWN  # a build run again goes on with the shares not finished
    finished = set(grown.read_text().split("\n")) if grown.exists() else set()
    jobs: list[Job] = [(name, codes, part, deadline, n, discover) for n, (family, codes, part, discover) in
                       enumerate(_shares(families, args.screen, args.batches))
                       if (name := f"{family} {part[0]}/{part[1]}") not in finished]
    _run_here(_grow, jobs, known, out, have, deadline, args.processes, grown)
    return EXIT_OK


def _run_here(task: Any, jobs: list[Any], known: list[str], out: Any, have: list[Any], deadline: float,
              processes: int, done: Path | None = None) -> None:
    """A local build's or fill's jobs on `processes` processes (each knowing the
    codes and keys `known`), what they prove merged into the catalogue's files
    every minute and at the end (a stopped run keeps it), the name of each job
    `task` finished written to `done`."""
    started = last = time.time()
    found: list[tuple[str, dict[str, Any]]] = []
    with multiprocessing.get_context("spawn").Pool(processes, _known, (known,)) as workers:
        for name, batch in workers.imap_unordered(task, jobs):
            found += batch
            if name and done is not None:
                out.path.mkdir(parents=True, exist_ok=True)
                with done.open("a") as f:
                    f.write(name + "\n")
            if time.time() - last > 60:
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


def _shares(families: dict[str, list[str]], screen: int | None, batches: int) -> list[
        tuple[str, list[str], tuple[int, int], list[str]]]:
    """Every task of a build, as (family, its placements' codes, share,
    families to discover): each seeded family and `screen` (default: every) other family of
    the edition, in `batches` shares each, the likeliest long first (see
    `catalogue.promise`)."""
    from solver.production.catalogue import promise

    named = [(f, codes) for f, codes in families.items()] + [(f, []) for f in _to_discover(families, screen)]
    named.sort(key=lambda item: -promise(item[0]))
    return [(f, codes, (k, batches), [] if codes else [f]) for f, codes in named for k in range(batches)]


def _fan_out(families: dict[str, list[str]], args: argparse.Namespace, known: list[str]) -> int:
    """Each family's growth (see `_shares`), each share a task on the analysis
    queue; the boards `known` long marked tried first."""
    from application import catalogue

    ctx = _deployment()
    ctx.stores.catalogue.mark(known)
    shares = _shares(families, args.screen, args.batches)
    catalogue.queue(ctx, [CATALOGUE_GROW.of({"codes": codes, "seconds": 60 * args.minutes, "part": list(part),
                                             "discover": discover}) for _, codes, part, discover in shares])
    print(f"ricochet: {len(shares)} tasks queued on {CATALOGUE_GROW.queue} ({len(shares) // args.batches} families in "
          f"{args.batches} shares each, about {args.minutes:g} minutes each at most); `ricochet catalogue status` "
          "follows them, `ricochet catalogue merge` writes what they grew into the catalogue's files",
          file=sys.stderr)
    return EXIT_OK


def _to_deepen(have: list[Any], pairs: int, skip: set[str], new: bool = False) -> list[tuple[str, str, int]]:
    from solver.production.catalogue import analysed, candidates, long_pairs

    done = {p.id.rsplit("-", 1)[0] for p in have if analysed(p)} | skip
    # a pool's goal is one of its board's chips, so each pair has a chip name
    todo = [(board, chip, longest) for board, chip, longest in (candidates(have) if new else long_pairs(have))
            if chip is not None and _pair_of(board, chip) not in done]
    return todo[:pairs]


def _pair_of(board: str, chip: str) -> str:
    from solver.production.pools import pool_id, target_named

    return pool_id(board, target_named(board, chip), 4, Ricochet.TURN).rsplit("-", 1)[0]


def run_deepen(args: argparse.Namespace) -> int:
    """The catalogue's longest pairs not analysed yet, analysed whole: here, one
    after another (each written as it is done, so a stopped run resumes), or
    queued on the deployment's analysis workers."""
    from solver.production import pools
    from solver.production.catalogue import DEEP_PER_LENGTH, DEEP_SEED, MIN_LENGTH, trimmed

    if args.pairs < 1 or not 1 <= args.threads <= 8:
        raise InputError("--pairs must be positive and --threads 1 to 8")
    out, have = _out(args.out)
    if args.queue:
        return _queue_deepen(have, args.pairs, args.candidates)
    for board, chip, longest in _to_deepen(have, args.pairs, set(), args.candidates):
        started = time.time()
        built = pools.build(board, pools.target_named(board, chip), per_length=DEEP_PER_LENGTH,
                            min_length=MIN_LENGTH, seed=DEEP_SEED, threads=args.threads)
        kept = [trimmed(pool) for pool in built]
        for pool in kept:
            if pool.rows:
                out.write(pool)
        print(f"ricochet: {board} {chip} (longest known {longest}) analysed in {time.time() - started:.0f} s: "
              + ", ".join(f"{k.ricochet} {len(k.rows)} kept of {len(p.rows)}" for k, p in zip(kept, built)),
              file=sys.stderr, flush=True)
    return EXIT_OK


def _queue_deepen(have: list[Any], pairs: int, new: bool) -> int:
    from application.pools import queue_build
    from solver.production.catalogue import DEEP_PER_LENGTH, DEEP_SEED, MIN_LENGTH
    from workers.messages import POOL_BUILD

    ctx = _deployment()
    grown = {i.rsplit("-", 1)[0] for i in ctx.stores.pools.ids()}
    todo = _to_deepen(have, pairs, grown, new)
    for board, chip, _ in todo:
        job = queue_build(ctx, board, chip, per_length=DEEP_PER_LENGTH, min_length=MIN_LENGTH, seed=DEEP_SEED)
        print(json.dumps({"job": job["id"], "board": board, "target": chip}))
    print(f"ricochet: {len(todo)} analyses queued on {POOL_BUILD.queue} (their jobs above); `ricochet catalogue merge` "
          "writes them into the catalogue's files once done", file=sys.stderr)
    return EXIT_OK


FillJob = tuple[list[tuple[str, dict[str, Any]]], float, int]
FILLED = "filled.txt"  # beside a catalogue's files: the pairs local fills finished, with what they held, one per line


def _fill_name(items: list[tuple[str, dict[str, Any]]]) -> str:
    """A pair's line in FILLED: its pool id and how many it held when its fill
    began (a fill again from there repeats the same proofs: its order is drawn
    from the pair's first puzzle)."""
    from solver.production.catalogue import catalogue_pool_id, from_json

    return f"{catalogue_pool_id(from_json(*items[0]))}|{len(items)}"


def _fill(job: FillJob) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """One pair's fill (a local fill's task): its name when it finished before the deadline, and what it found."""
    from solver.production.catalogue import claimer, fill_pair, found_json

    items, deadline, enough = job
    found = [(g.puzzle.code(), found_json(g))
             for g in fill_pair(items, claimer(_tried), deadline - time.time(), enough)]
    return (_fill_name(items) if time.time() < deadline else None), found


def run_fill(args: argparse.Namespace) -> int:
    """The pairs holding fewer than `--enough` puzzles of SEED_FROM moves,
    filled here (merged as they come; a run again skips the pairs whose fill
    finished and found nothing) or queued on the deployment's analysis
    workers."""
    from solver.production.catalogue import PER_SEED, found_json, thin
    from solver.production.pools import Library, packaged

    enough = PER_SEED if args.enough is None else args.enough
    if args.processes < 1 or args.minutes <= 0 or (args.pairs is not None and args.pairs < 1):
        raise InputError("--processes, --minutes and --pairs must be positive")
    if not 1 <= enough <= PER_SEED:
        raise InputError(f"--enough must be from 1 to {PER_SEED} (what a pair keeps at 20 moves)")
    if args.queue:
        _within_visibility(args.minutes)
    out, have = _out(args.out)
    done_path = out.path / FILLED
    done = set(done_path.read_text().split("\n")) if done_path.exists() else set()
    pairs = [[(g.puzzle.code(), found_json(g)) for g in items] for items in thin(Library([packaged(), out]), enough)]
    todo = [items for items in pairs if args.queue or _fill_name(items) not in done][:args.pairs]
    if args.queue:
        return _queue("fills", [CATALOGUE_FILL.of({"items": items, "seconds": 60 * args.minutes, "enough": enough})
                                for items in todo])
    known = sorted({p.puzzle(i).code() for p in have for i in range(len(p.rows))})
    deadline = time.time() + 60 * args.minutes
    print(f"ricochet: filling {len(todo)} pairs ({len(pairs) - len(todo)} more hold fewer than {enough}: "
          f"their fill found nothing before, or --pairs)", file=sys.stderr, flush=True)
    _run_here(_fill, [(items, deadline, enough) for items in todo], known, out, have, deadline, args.processes,
              done_path)
    return EXIT_OK


def _queue(what: str, tasks: Sequence[Message[Any]]) -> int:
    """One Celery task per pair on the analysis queue of the deployment at REDIS_URL."""
    from application import catalogue

    catalogue.queue(_deployment(), tasks)
    print(f"ricochet: {len(tasks)} {what} queued on {ANALYSIS_QUEUE}; `ricochet catalogue status` follows them, "
          "`ricochet catalogue merge` writes what they found into the catalogue's files", file=sys.stderr)
    return EXIT_OK


LiftJob = tuple[str, str, float]
LIFTED = "lifted.txt"  # beside a catalogue's files: the pairs local lifts finished, one per line


def _lift(job: LiftJob) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """One pair's lift (a local lift's task): its name when it finished before the deadline, and what it found."""
    from solver.production.catalogue import claimer, found_json, lift_pair

    family, spec, deadline = job
    found = [(g.puzzle.code(), found_json(g)) for g in lift_pair(family, spec, claimer(_tried), deadline - time.time())]
    return (f"{family}|{spec}" if time.time() < deadline else None), found


def run_lift(args: argparse.Namespace) -> int:
    """The pairs a lift may find a SEED_FROM-move puzzle on and that hold none,
    longest 2-robot position first: lifted here (merged as they come; a run
    again goes on with the pairs not finished) or queued on the deployment's
    analysis workers."""
    from solver.production.catalogue import all_families, family_cell, liftable
    from solver.production.pools import Library, packaged

    if args.processes < 1 or args.minutes <= 0 or (args.pairs is not None and args.pairs < 1):
        raise InputError("--processes, --minutes and --pairs must be positive")
    if args.queue:
        _within_visibility(args.minutes)
    out, have = _out(args.out)
    elsewhere = Library([packaged(), *([_stores().catalogue] if args.queue else [])])
    held = _holding([*have, *(p for e in elsewhere.entries() if (p := elsewhere.load(e.id)) is not None)])
    done_path = out.path / LIFTED
    done = set(done_path.read_text().split("\n")) if done_path.exists() else set()
    families = args.family or all_families()
    if unknown := sorted(set(families) - set(all_families())):
        raise InputError(f"--family: no family {', '.join(unknown)} in the 2013 edition (a section, its quadrant "
                         "and one of its chips, as lifted.txt names them: e.g. yellow-B@1:14-2-red)")
    print(f"ricochet: ranking the boards of {len(families)} families by their longest 2-robot position",
          file=sys.stderr, flush=True)
    with multiprocessing.get_context("spawn").Pool(args.processes) as workers:
        ranked = sorted((-n, spec, family) for family, boards in zip(families, workers.map(liftable, families))
                        for n, spec in boards if f"{family}|{spec}" not in done)
    todo = [(family, spec) for _, spec, family in ranked if (spec, family_cell(family)) not in held][:args.pairs]
    if args.queue:
        return _queue("lifts", [CATALOGUE_LIFT.of({"family": f, "spec": spec, "seconds": 60 * args.minutes})
                                for f, spec in todo])
    known = sorted({p.puzzle(i).code() for p in have for i in range(len(p.rows))})
    deadline = time.time() + 60 * args.minutes
    print(f"ricochet: lifting {len(todo)} pairs", file=sys.stderr, flush=True)
    _run_here(_lift, [(f, spec, deadline) for f, spec in todo], known, out, have, deadline, args.processes,
              done_path)
    return EXIT_OK


def _holding(pools: list[Any]) -> set[tuple[str, tuple[int, int]]]:
    """The (board, target cell) pairs of `pools` holding a SEED_FROM-move puzzle (4 robots, ricochet rule)."""
    from solver.production.catalogue import SEED_FROM

    return {(pool.board.spec, pool.goal.cell) for pool in pools
            if len(pool.colours) == 4 and pool.ricochet == Ricochet.TURN and SEED_FROM in pool.lengths()}


def merge(out: Any, have: list[Any], found: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """The catalogue's pools with the found puzzles added, written back, and
    those analysed whole as they were (a pair
    the starter pools hold already is theirs: their id comes first; a pair
    analysed whole keeps its pool as the analysis made it; a puzzle the bank
    holds is the bank's)."""
    from solver.production import bank
    from solver.production.catalogue import analysed, from_json, pools_of
    from solver.production.pools import packaged

    whole = {pool.id for pool in have if analysed(pool)}
    generated = [pool.generated(i) for pool in have if pool.id not in whole for i in range(len(pool.rows))]
    generated += [from_json(code, item) for code, item in found]
    banked = {e["code"] for e in bank.entries()}  # the growth comes back to its seeds' boards now and then
    kept = set(packaged().ids()) | whole
    merged = [p for p in pools_of(g for g in generated if g.puzzle.code() not in banked) if p.id not in kept]
    for pool in merged:
        out.write(pool)
    return merged + [pool for pool in have if pool.id in whole]
