"""`ricochet export`: every puzzle the deployment holds, once, as CSV or NDJSON
(docs/ratings.md): the starter pools, the bank and the published daily puzzles,
and with REDIS_URL set, the deployment's own pools and what play made of each."""

from __future__ import annotations

import argparse
import sys

from solver.model.puzzle import Ricochet

from .common import EXIT_OK, InputError, context


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="every puzzle held, once, with its solution and rating (CSV or NDJSON)")
    p.add_argument("--format", choices=("csv", "ndjson"), default="csv", help="CSV with a header row (default), "
                   "or one JSON object per line")
    p.add_argument("--min-length", type=int, default=2, help="only puzzles of at least this many moves")
    p.add_argument("--max-length", type=int, default=64, help="only puzzles of at most this many moves")
    p.add_argument("--robots", type=int, choices=(4, 5), default=None, help="only puzzles with this many robots")
    p.add_argument("--ricochet", choices=Ricochet.options(), default=None, help="only puzzles under this rule")
    p.add_argument("--source", action="append", choices=("bank", "daily", "pools"),
                   help="only these sources (repeat it; default all)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from application.export import lines
    from solver.production.export import SOURCES, Filter

    if not 2 <= args.min_length <= args.max_length:
        raise InputError("--min-length must be at least 2 and at most --max-length")
    ctx = context()
    wanted = Filter(args.min_length, args.max_length, args.robots, args.ricochet, tuple(args.source or SOURCES))
    out = sys.stdout
    for line in lines(ctx, args.format, wanted):
        out.write(line)
    return EXIT_OK
