"""One writer per line format, for everything that writes puzzles a line at a
time: the puzzle database's export (`ricochet export`, GET /v1/puzzles/export)
and packs (`ricochet pack --format ndjson|csv`, GET /v1/packs/{id}?format=ndjson|csv)
alike; a pack's CSV rows are the export's (solver/production/export.py builds them).

    ndjson_line({"code": "..."})            # '{"code":"..."}\\n'
    csv_line(("code", "board"))             # 'code,board\\n'
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping

COMPACT = (",", ":")  # the export's and `ricochet pack`'s separators
SPACED = (", ", ": ")  # json.dumps's own, which GET /v1/packs/{id}?format=ndjson has always served


def ndjson_line(value: Mapping[str, object], spaced: bool = False) -> str:
    """One NDJSON line: `value` as a JSON object, its keys in their order, then a
    newline.  Compact unless `spaced` (the packs' HTTP lines keep json.dumps's
    default spacing, so their bytes stay what clients have been served)."""
    return json.dumps(value, separators=SPACED if spaced else COMPACT) + "\n"


def csv_line(values: Iterable[object]) -> str:
    """One CSV row (RFC 4180 quoting, as Python's csv module writes it) ending in a
    bare newline."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(values)
    return out.getvalue()
