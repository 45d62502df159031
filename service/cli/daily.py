"""`ricochet daily`: daily puzzles, one JSON line per day, as GET /v1/daily/{date} shows them."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys

from application.daily import shown
from solver.play import daily

from .common import EXIT_OK, InputError


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date: use YYYY-MM-DD") from None


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("daily", help="print daily puzzles, one JSON line per day as GET /v1/daily/{date} shows it")
    p.add_argument("--from", dest="start", type=_date, default=None, help="first day, YYYY-MM-DD (default today, UTC)")
    p.add_argument("--to", dest="end", type=_date, default=None, help="last day, YYYY-MM-DD (default --from)")
    p.add_argument("--solutions", action="store_true", help="add each day's optimal solution")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    start = args.start or daily.today()
    end = args.end or start
    if end < start:
        raise InputError("--to must not come before --from")
    if start < daily.FIRST_DAY or end > daily.last_day():
        raise InputError(f"the calendar runs from {daily.FIRST_DAY} to {daily.last_day()}")
    out = sys.stdout
    day = start
    while day <= end:
        out.write(json.dumps(shown(daily.daily_json(day), solutions=args.solutions),
                             separators=(",", ":")) + "\n")
        day += dt.timedelta(days=1)
    out.flush()
    return EXIT_OK
