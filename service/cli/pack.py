"""`ricochet pack`: a whole pack without a server, the same items as POST /v1/packs with the same fields
(rating, popularity and themes: the deployment's with REDIS_URL set, else a new puzzle's)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, cast

from solver.errors import InvalidInput
from solver.formats.lines import ndjson_line
from solver.model.board import BoardKind
from solver.model.puzzle import Ricochet

from .common import EXIT_FAILED, EXIT_OK, InputError, context, progress_bar

if TYPE_CHECKING:
    from application.packs import MadeItem, PackItem
    from solver.production.packs import PackRequest as Asked  # the schema's load, typed


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("pack", help="make a pack without a server: one JSON puzzle per line (or CSV rows), the "
                                    "same items as POST /v1/packs with the same fields (starter pools)")
    p.add_argument("--count", type=int, required=True, help="puzzles in the pack (1 to 1000)")
    p.add_argument("--length", type=int, help="exact optimal length (or --min-length and --max-length)")
    p.add_argument("--min-length", type=int, help="shortest optimal length")
    p.add_argument("--max-length", type=int, help="longest optimal length")
    p.add_argument("--seed", default="0", help="same seed and fields, same pack (default 0)")
    p.add_argument("--board", default=BoardKind.RANDOM_2013.value,
                   help="a board spec, random-2013 (default), random-1999 or random-beginner")
    p.add_argument("--robots", type=int, choices=(4, 5), default=4, help="robots (default 4)")
    p.add_argument("--ricochet", choices=Ricochet.options(), default=Ricochet.TURN.value,
                   help="the ricochet rule (default turn)")
    p.add_argument("--min-rating", type=int, help="only puzzles starting at this rating or above (400 to 3600)")
    p.add_argument("--max-rating", type=int, help="only puzzles starting at this rating or below (400 to 3600)")
    p.add_argument("--theme", help="only puzzles with this theme (one of GET /v1/themes', e.g. many-ways, diagonal, "
                                   "ricochet-rule; docs/ratings.md says what each means)")
    p.add_argument("--format", choices=("ndjson", "csv"), default="ndjson",
                   help="ndjson (default): one JSON puzzle per line; csv: the columns of `ricochet export --format "
                        "csv` (docs/ratings.md), a header row first, source 'pack'")
    p.add_argument("-j", "--jobs", type=int, default=1, help="processes searching in parallel (default 1)")
    p.add_argument("--pdf", metavar="FILE", help="also write the pack as a printable book (PDF) to FILE; '-' "
                                                 "writes it to standard output instead of the lines")
    p.add_argument("--paper", choices=("a4", "letter"), default="a4", help="the book's paper (default a4)")
    p.add_argument("--per-page", type=int, choices=(1, 2, 4, 6, 9, 12, 20), default=4,
                   help="the book's puzzles a page (default 4)")
    p.add_argument("--no-solutions", action="store_true", help="the book without its solutions at the back")
    p.add_argument("--title", help="the book's title, on every page and in its metadata (default: what it holds, "
                                   "like 'Ricochet Robots — 24 puzzles, 10–12 moves')")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """A pack on standard output, items in order; items that could not be made on
    standard error (and exit 1)."""
    from application.packs import csv_line, described
    from solver.production.export import csv_header
    from solver.production.packs import make
    from workers.schemas import PackRequest, load

    lo = args.min_length if args.length is None else args.length
    hi = args.max_length if args.length is None else args.length
    if lo is None or hi is None:
        raise InputError("give --length, or --min-length and --max-length")
    if not 1 <= args.jobs <= 64:
        raise InputError("--jobs must be from 1 to 64")
    try:
        wanted = {k: v for k, v in (("min_rating", args.min_rating), ("max_rating", args.max_rating),
                                    ("theme", args.theme), ("title", args.title)) if v is not None}
        request = cast("Asked", load(PackRequest(), {
            "count": args.count, "min_length": lo, "max_length": hi, "seed": args.seed, "board": args.board,
            "robots": args.robots, "ricochet": args.ricochet, **wanted}))
    except InvalidInput as e:
        raise InputError(str(e)) from None
    ctx = context()
    failed, made = 0, []
    if args.format == "csv" and args.pdf != "-":
        print(csv_header(), end="", flush=True)  # the export's CSV header and rows
    with progress_bar(args.count, "pack", " puzzles") as bar:
        for index, item in make(request, processes=args.jobs, progress=bar.update):
            if isinstance(item, str):
                failed += 1
                bar.write(f"ricochet: item {index}: {item}", file=sys.stderr)
                continue
            made.append(described(ctx, [cast("MadeItem", {**item, "index": index})])[0])  # as a pack stores it
            if args.pdf != "-":  # the export's writers
                line = csv_line(made[-1], "pack") if args.format == "csv" else ndjson_line(made[-1])
                print(line, end="", flush=True)
    if args.pdf is not None:
        _write_book(args, request, made)
    return EXIT_FAILED if failed else EXIT_OK


def _write_book(args: argparse.Namespace, request: Asked, items: list[PackItem]) -> None:
    from application.books import book
    from application.packs import title

    document = book(items, title(request), args.paper, args.per_page, not args.no_solutions)
    if args.pdf == "-":
        sys.stdout.buffer.write(document)
        sys.stdout.flush()
        return
    with open(args.pdf, "wb") as f:
        f.write(document)
    print(f"ricochet: the book is in {args.pdf} ({len(document) // 1024} KiB)", file=sys.stderr)
