"""`ricochet themes`: the puzzle library's themes (maintainers, in a checkout):
the offline pass over the pools, the targeted search for short and rare-themed
puzzles, and a report of what the library holds per theme and rating band."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from solver.model.puzzle import Ricochet
from workers.messages import THEMES_PASS

if TYPE_CHECKING:
    from types import ModuleType

    from solver.production.library import Index, Tables
    from solver.production.pools import Library

from .common import EXIT_OK, InputError, progress_bar


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("themes", help="the library's themes: the offline pass, the targeted search, a report "
                                      "(maintainers, in a checkout)")
    p.add_argument("--pass", dest="run_pass", choices=("cheap", "thorough", "targeted", "rare"),
                   help="read the pools' rows' themes into their tables: cheap (no search: minutes), thorough "
                        "(every listing: hours), targeted (the listings that may find a rare theme first), rare "
                        "(the rows that may show many-ways from a partial listing or diagonal from a solution that "
                        "bounces, shortest first); stop it at any time, run it again and it goes on where "
                        "it stopped")
    p.add_argument("--shelf", action="store_true",
                   help="search for short and rare-themed puzzles until the shelf holds enough (or --seconds)")
    p.add_argument("--only", choices=("ricochet-rule", "many-ways", "diagonal", "blocker-moved-again"),
                   help="with --shelf (ricochet-rule, many-ways): search for this rare theme alone, each puzzle "
                        "tried first by what is cheap to know, every one found shelved; with --pass rare: read "
                        "only the rows that may show this theme")
    p.add_argument("--ricochet", choices=[r.value for r in Ricochet],
                   help="with --pass rare: only the pools of this ricochet option (two runs, one each, share no table)")
    p.add_argument("--shard", default="0/1", help="with --pass rare: K/N, the K-th of every N pools (0/2 and 1/2 in "
                                                   "two processes share the work and no table; default 0/1)")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long (the work done is kept)")
    p.add_argument("--seed", default="shelf", help="where the shelf's search starts (a new seed for each run that "
                                                   "adds to it; default shelf)")
    p.add_argument("--queue", action="store_true",
                   help="with --pass: queue it as a task on the analysis workers of the deployment at REDIS_URL "
                        "(their tables in Redis; each run goes on where the last stopped) instead of running it here")
    p.add_argument("--tables", default=None,
                   help="where the tables are (default: the package's, solver/production/data/themes)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from solver.production import library as lib
    from solver.production.pools import Library, shipped

    if args.queue:
        return _queue(args)
    if args.shelf and args.only and args.only not in lib.RARE_SOUGHT:
        raise InputError(f"--shelf --only searches for {', '.join(lib.RARE_SOUGHT)}; --pass rare reads the pools' "
                         "rows for the others")
    deadline = time.monotonic() + args.seconds if args.seconds else None
    tables = lib.TableDirectory(Path(args.tables) if args.tables else lib.TABLES)
    if args.run_pass == "rare":
        _rare(lib, Library(shipped()), tables, deadline, (args.only,) if args.only else tuple(lib.SOUGHT),
              (Ricochet(args.ricochet),) if args.ricochet else tuple(Ricochet), _shard(args.shard))
    elif args.run_pass:
        pools = Library(shipped())
        bar = progress_bar(len(pools.entries()), f"themes ({args.run_pass})", " pools")

        def progress(done: int, total: int, read: int) -> None:
            bar.update(done - bar.n)
            bar.set_postfix_str(f"{read} rows read")

        counts = lib.theme_pass(pools, tables, thorough=args.run_pass != "cheap", progress=progress,
                                stop=(lambda: time.monotonic() > deadline) if deadline else None,
                                rows=lib.may_be_rare if args.run_pass == "targeted" else None)
        bar.close()
        print(f"ricochet: {counts['pools_done']} of {counts['pools']} pools read, {counts['rows_read']} rows this "
              f"run{' (stopped: run it again to go on)' if counts['stopped'] else ''}", file=sys.stderr)
    if args.shelf:
        grown = lib.seek_rare(lib.read_shelf(), args.only, seconds=args.seconds or 600.0, seed=args.seed) \
            if args.only else lib.grow_shelf(lib.read_shelf(), seconds=args.seconds or 600.0, seed=args.seed)
        lib.write_shelf(grown)
        print(f"ricochet: the shelf holds {len(grown)} puzzles", file=sys.stderr)
    _report(lib.Index(Library(shipped()), [tables], lib.read_shelf()))
    return EXIT_OK


def _rare(lib: ModuleType, pools: Library, tables: Tables, deadline: float | None, sought: tuple[str, ...],
          options: tuple[Ricochet, ...], shard: tuple[int, int]) -> None:
    """The rare themes' pass (library.rare_pass), a line of progress per length."""

    def progress(moved: int, length: int, read: int, found: dict[str, int]) -> None:
        print(f"ricochet: rare pass: rows moving {moved}+ robots, lengths to {length} done, {read} rows read, given "
              + ", ".join(f"{t} {n}" for t, n in found.items()), file=sys.stderr, flush=True)

    if any(t not in lib.SOUGHT for t in sought):
        raise InputError(f"--pass rare reads rows for {', '.join(lib.SOUGHT)}; the shelf's search finds the others")
    counts = lib.rare_pass(pools, tables, sought, options=options, shard=shard, progress=progress,
                           stop=(lambda: time.monotonic() > deadline) if deadline else None)
    print(f"ricochet: rare pass: {counts['rows_read']} rows read this run, given "
          + ", ".join(f"{t} {counts[t]}" for t in sought)
          + (" (stopped: run it again to go on)" if counts["stopped"] else ""), file=sys.stderr)


def _shard(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and int(k) < int(n)):
        raise InputError(f"--shard wants K/N with K < N (0/2, 1/2), not {text!r}")
    return int(k), int(n)


def _queue(args: argparse.Namespace) -> int:
    """The pass as a task on the deployment's analysis workers; where the last one got."""
    from application import catalogue

    from .catalogue import _deployment, _within_visibility

    if not args.run_pass:
        raise InputError("--queue queues a pass: give --pass cheap, targeted or thorough")
    if args.run_pass == "rare":
        raise InputError("--pass rare runs here, in a checkout (its tables are the package's)")
    seconds = args.seconds or 3000.0
    _within_visibility(seconds / 60)
    ctx = _deployment()
    catalogue.queue(ctx, [THEMES_PASS.of({"mode": args.run_pass, "seconds": seconds})])
    print(f"ricochet: the {args.run_pass} themes pass queued on {THEMES_PASS.queue} for {seconds:g} s; last pass: "
          f"{ctx.required_stores().pools.pass_progress() or 'none yet'}", file=sys.stderr)
    return EXIT_OK


def _report(index: Index) -> None:
    """What the library holds: per theme and option, the count and the rating range."""
    from solver.production.library import THEME_NAMES

    for option in Ricochet:
        for theme in THEME_NAMES:
            span = index.span(theme, option)
            where = f"{span[0]:.0f}-{span[1]:.0f}" if span else "-"
            print(f"{option.value:5} {theme:20} {index.count(theme, option):7d}  {where}")
