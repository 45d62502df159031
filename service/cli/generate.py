"""`ricochet generate`: puzzles of an exact optimal length (pools first, then search), one JSON line each."""

from __future__ import annotations

import argparse
import json

from solver.errors import InvalidInput
from solver.model.board import BoardKind
from solver.model.puzzle import Ricochet, Rules
from solver.production.generate import NoPuzzleFound, generate
from solver.production.pools import Library, shipped

from .common import EXIT_OK, InputError, progress_bar


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("generate", help="generate puzzles of an exact optimal length (JSON lines)")
    p.add_argument("--length", type=int, help="exact optimal length (or --min-length and --max-length)")
    p.add_argument("--min-length", type=int, help="shortest optimal length wanted")
    p.add_argument("--max-length", type=int, help="longest optimal length wanted")
    p.add_argument("--count", type=int, default=1, help="puzzles to print (1 to 100000, default 1)")
    p.add_argument("--seed", default="0", help="same seed and options, same puzzles (default 0)")
    p.add_argument("--board", default=BoardKind.RANDOM_2013.value,
                   help="a board spec, random-2013, random-1999 or random-beginner (no barrier sections)")
    p.add_argument("--robots", type=int, choices=(4, 5), default=4, help="robots (default 4)")
    p.add_argument("--target", default="any", help="a colour, vortex or any (default)")
    p.add_argument("--ricochet", choices=Ricochet.options(), default=Ricochet.TURN.value,
                   help="the ricochet rule (default turn)")
    p.add_argument("--format", choices=("json", "driftingdroids"), default="json",
                   help="json: one docs/formats.md puzzle with solution and report per line; driftingdroids: one "
                        "DriftingDroids game ID per line (boards without diagonal barriers, e.g. --board "
                        "random-1999)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.count < 1 or args.count > 100_000:
        raise InputError("--count must be from 1 to 100000")
    library = Library(shipped())  # the pools shipped with the package: the starter set and the catalogue
    with progress_bar(args.count if args.count > 1 else 0, "generate", " puzzles") as bar:
        for i in range(args.count):
            try:
                g = generate(args.length, min_length=args.min_length, max_length=args.max_length, board=args.board,
                             robots=args.robots, target=args.target, rules=Rules(ricochet=args.ricochet),
                             seed=f"{args.seed}:{i}", pools=library)
            except (InvalidInput, NoPuzzleFound) as e:
                raise InputError(str(e)) from None
            if args.format == "driftingdroids":
                if g.to_json()["driftingdroids_id"] is None:
                    raise InputError(f"{g.puzzle.board.spec} has diagonal barriers, which DriftingDroids does not "
                                     "show: use --board random-1999 or random-beginner")
                print(g.to_json()["driftingdroids_id"], flush=True)
            else:
                print(json.dumps(g.to_json()), flush=True)
            bar.update(1)
    return EXIT_OK
