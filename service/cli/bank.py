"""`ricochet bank`: grow the bank of proven long puzzles (maintainers, in a checkout; hours)."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from solver.model.puzzle import Ricochet

from .common import EXIT_OK, InputError, TimedBar, board_and_target


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bank", help="grow the bank of verified long puzzles (maintainers, in a checkout)")
    p.add_argument("--bank", default="solver/production/data/bank.jsonl",
                   help="the bank file to grow (default: the checkout's, relative to the current folder)")
    p.add_argument("--min-length", type=int, default=16, help="bank puzzles of at least this many moves (default 16)")
    p.add_argument("--robots", type=int, choices=(4, 5), default=4, help="robots (default 4)")
    p.add_argument("--ricochet", choices=Ricochet.options(), default=Ricochet.TURN.value,
                   help="the ricochet rule (default turn)")
    p.add_argument("--minutes", type=float, default=10.0, help="how long to search (default 10)")
    p.add_argument("--seed", default="0", help="where the random search starts (default 0)")
    p.add_argument("--edition", choices=("2013", "1999"), default="2013", help="the boards searched (default 2013)")
    p.add_argument("--threads", type=int, default=2, help="solver threads (default 2)")
    p.add_argument("--output", help="append finds here instead of to --bank")
    p.add_argument("--merge", nargs="+", metavar="FILE",
                   help="append the new entries of FILEs (from --output runs) to the bank, then stop")
    p.add_argument("--walk", action="store_true",
                   help="walk from the bank's long puzzles (generate) instead of sampling random positions")
    p.add_argument("--spread", type=int, metavar="N",
                   help="at most N entries per board and target, at every length: a run that looks for new "
                        "boards and targets (a pack spreads over them) rather than more of the same")
    p.add_argument("--exhaustive", nargs=2, metavar=("BOARD", "TARGET"),
                   help="analyse every position of one board and target (e.g. green-B,blue-B,red-B,yellow-D "
                        "yellow-square; 4 GiB, minutes) and bank its longest fair positions")
    p.add_argument("--per-length", type=int, default=20,
                   help="with --exhaustive: at most this many entries per length for that board and target")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from solver.production.maintain import exhaustive_search, merge, search

    if args.merge:
        missing = [f for f in [*args.merge, args.bank] if not Path(f).is_file()]
        if missing:
            raise InputError(f"no such file: {', '.join(missing)} (merge what `ricochet bank --output` wrote)")
        added = merge([Path(f) for f in args.merge], Path(args.bank))
        print(f"ricochet: {len(added)} new puzzles appended to {args.bank}", file=sys.stderr)
        return EXIT_OK

    seconds = args.minutes * 60
    path = args.output or args.bank
    Path(path).touch()  # the file is there from the start: a run stopped early still leaves one to merge
    if args.exhaustive:
        board, goal = board_and_target(*args.exhaustive)
        finds = exhaustive_search(board, goal, args.min_length, Ricochet(args.ricochet), args.seed, seconds,
                                  edition=args.edition, threads=args.threads, per_length=args.per_length)
    else:
        finds = search(args.min_length, args.robots, Ricochet(args.ricochet), args.seed, seconds,
                       edition=args.edition, threads=args.threads, walk=args.walk, spread=args.spread)
    lengths: Counter[int] = Counter()
    with open(path, "a", encoding="utf-8") as f, TimedBar(seconds, "bank") as bar:
        for entry in finds:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            lengths[entry["length"]] += 1
            bar.found(" ".join(f"{n}:{k}" for n, k in sorted(lengths.items())) + " (moves:found)")
            bar.write(f"ricochet: banked {entry['code']} ({entry['length']} moves)")
    print(f"ricochet: {sum(lengths.values())} new puzzles in {path}", file=sys.stderr)
    return EXIT_OK
