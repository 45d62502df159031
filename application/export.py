"""The puzzle database to download (`ricochet export`, GET /v1/puzzles/export):
every puzzle the deployment holds, once, with what play made of it."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from solver.production.export import Filter, csv_header, csv_line, held, ndjson_line

from . import Context, ratings

BATCH = 500  # puzzles whose ratings are read in one round trip


def lines(ctx: Context, fmt: str, wanted: Filter) -> Iterator[str]:
    """The export as lines of `fmt` (csv, with its header, or ndjson)."""
    line = csv_line if fmt == "csv" else ndjson_line
    if fmt == "csv":
        yield csv_header()
    puzzles = held(ctx.pools, wanted)
    while batch := list(itertools.islice(puzzles, BATCH)):
        played = ratings.describe_many(ctx, [(h.puzzle, h.moves) for h in batch])
        for h, more in zip(batch, played, strict=True):
            yield line(h, more)
