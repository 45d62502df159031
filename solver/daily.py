"""The daily puzzle: a pure function of the date (UTC) and the published schedule.

Difficulty rises over the week, Monday short, Sunday long:

| day | optimal length |
|---|---|
| Monday | 5-6 |
| Tuesday | 7-8 |
| Wednesday | 9-10 |
| Thursday | 11-12 |
| Friday | 13-14 |
| Saturday | 15-16 |
| Sunday | 17-20 (from the bank) |

Every replica and every restart computes the same puzzle for a date: the
generator is seeded with the date and the schedule's version.
"""

from __future__ import annotations

import datetime as dt
import random

from .production import bank
from .production.generate import Generated, generate

SCHEDULE_VERSION = 1
# The bank only grows (lines are appended); the daily draws on its first lines
# only, so a release that adds puzzles changes no published day.
DAILY_BANK_ENTRIES = 20
DAILY_BANK_FROM = 17  # days asking for at least this many moves draw on those first lines
SCHEDULE = {0: (5, 6), 1: (7, 8), 2: (9, 10), 3: (11, 12), 4: (13, 14), 5: (15, 16), 6: (17, 20)}
FIRST_DAY = dt.date(2026, 1, 1)
DAYS_AHEAD = 7  # how far past today a daily puzzle is published


def lengths_for(day: dt.date) -> tuple[int, int]:
    return SCHEDULE[day.weekday()]


def daily_puzzle(day: dt.date) -> Generated:
    lo, hi = lengths_for(day)
    seed = f"daily:v{SCHEDULE_VERSION}:{day.isoformat()}"
    if lo >= DAILY_BANK_FROM:
        pool = [e for e in bank.entries()[:DAILY_BANK_ENTRIES]
                if lo <= e["length"] <= hi and e["robots"] == 4 and e["ricochet"] == "turn"]
        if pool:
            return bank.generated(random.Random(seed).choice(pool))
    # No walk from bank puzzles: the bank grows between releases, the day must not change.
    return generate(min_length=lo, max_length=hi, board="random-2013", robots=4, seed=seed, bank_seeds=False)


def published(day: dt.date, today: dt.date | None = None) -> bool:
    today = today or dt.datetime.now(dt.UTC).date()
    return FIRST_DAY <= day <= today + dt.timedelta(days=DAYS_AHEAD)


def daily_json(day: dt.date) -> dict:
    """The published form of a day's puzzle: FORMATS.md puzzle, code, length,
    difficulty, and the solution (served only on request)."""
    g = daily_puzzle(day)
    return {"date": day.isoformat(), "schedule_version": SCHEDULE_VERSION, "puzzle": g.puzzle.to_json(),
            "code": g.puzzle.code(), "optimal_length": g.solution.length, "difficulty": g.difficulty,
            "solution": [m.to_json() for m in g.solution.moves]}
