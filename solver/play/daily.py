"""The daily puzzle: one proven puzzle per day (UTC), read from a frozen calendar.

Difficulty rises over the week, Monday short, Sunday long:

| day | optimal length |
|---|---|
| Monday | 5-6 |
| Tuesday | 7-8 |
| Wednesday | 9-10 |
| Thursday | 11-12 |
| Friday | 13-14 |
| Saturday | 15-16 |
| Sunday | 17-20 |

Day 1 is 2026-01-01.  Each schedule version is a calendar file built once
(`solver.production.calendar`) and shipped in the package with its SHA-256
pinned below: the file is refused if it differs, so no release can change a
day by accident.  A new version is appended to `VERSIONS` with the first day
it governs, and that day must come after the day it was built: days already
published stay on the version they were published under.  A deployment also
keeps every day it served in Redis and never replaces it (see
`workers.stores`), so even a calendar shipped with a mistake cannot change a
served day there.

Grades: each calendar carries the difficulty report of the day it was built,
whose grade word came from a score scale fitted to random positions (nearly
every day "extreme").  From REGRADED_FROM on, a day's grade is the word on the
players' scale (solver/play/grades.py) for its length and the fewest robots its
optimal solutions move; the days before keep the figures they were published
with and are shown with today's word (application/daily.py, through
grades.relabelled), and no day's puzzle changes.

Version 1 (2026) computed days from the generator at run time; it repeated
Sunday puzzles (its Sundays drew from 20 bank lines).  Version 2 is a calendar
for 2026-01-01 to 2036-12-31 with no repeats; it replaced version 1 for every
day, and deployments keep the version-1 days they had served.
"""

from __future__ import annotations

import datetime as dt
import functools
import gzip
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

from solver.model.puzzle import Puzzle
from solver.play.grades import DifficultyReport, grade_of

SCHEDULE = {0: (5, 6), 1: (7, 8), 2: (9, 10), 3: (11, 12), 4: (13, 14), 5: (15, 16), 6: (17, 20)}
FIRST_DAY = dt.date(2026, 1, 1)
DAYS_AHEAD = 7  # how far ahead workers copy days into a deployment's store (never shown before their day)
DATA = Path(__file__).resolve().parents[1] / "data"
REGRADED_FROM = dt.date(2026, 12, 1)  # the first day graded on the players' scale (published days keep theirs)


@dataclass(frozen=True)
class Version:
    number: int
    first_day: dt.date  # the first day this version governs
    built: dt.date  # when its calendar was built; first_day comes after it, except for the first calendar
    file: str
    sha256: str  # of the uncompressed calendar


VERSIONS = (
    Version(2, FIRST_DAY, dt.date(2026, 11, 23), "daily-v2.jsonl.gz",
            "9624792381d41b0658de55a8c6eb6e3c4982c1231dff5c7a2581ae1062f673c4"),
)
SCHEDULE_VERSION = VERSIONS[-1].number


class NotInCalendar(LookupError):
    """The day has no puzzle: before day 1 or past the last calendar's end."""


def today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def number(day: dt.date) -> int:
    """The day's number: day 1 is 2026-01-01."""
    return (day - FIRST_DAY).days + 1


def day_of(n: int) -> dt.date:
    return FIRST_DAY + dt.timedelta(days=n - 1)


def version_for(day: dt.date) -> Version:
    return next(v for v in reversed(VERSIONS) if v.first_day <= day)


class _Days(Mapping[str, dict[str, Any]]):
    """A calendar's days by date, each kept as its JSON line and read into a new
    dict when asked for: 4 MiB for ten years where the dicts took 25 MiB in every
    process that read one day (the webhook worker announcing a day), and reading a
    day in a web process writes to nothing gunicorn's master shares with it."""

    def __init__(self, lines: list[bytes]) -> None:
        self._lines = {json.loads(line)["date"]: line for line in lines}

    def __getitem__(self, date: str) -> dict[str, Any]:
        return json.loads(self._lines[date])

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)


@functools.cache
def _calendar(version: Version) -> Mapping[str, dict[str, Any]]:
    raw = gzip.decompress((DATA / version.file).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != version.sha256:
        raise RuntimeError(f"{version.file} is not the calendar of schedule version {version.number} "
                           f"(sha256 {digest}, expected {version.sha256}): published days would change")
    return _Days(raw.splitlines())


def load_calendars() -> None:
    """Read every schedule version's calendar now (a server does, before it forks)."""
    for version in VERSIONS:
        _calendar(version)


@functools.cache
def last_day() -> dt.date:
    return max(dt.date.fromisoformat(d) for d in _calendar(VERSIONS[-1]))


class DayPuzzle(TypedDict):
    """What every form of a day carries: its date, the calendar's version, the
    docs/formats.md puzzle, its code, optimal length and difficulty report."""

    date: str
    schedule_version: int
    puzzle: dict[str, Any]
    code: str
    optimal_length: int
    difficulty: DifficultyReport


class DayRecord(DayPuzzle):
    """A day's record as `daily_json` makes it and workers/stores/days.py keeps it:
    the day's puzzle and its solution (moves as JSON)."""

    solution: list[dict[str, str]]


def daily_json(day: dt.date) -> DayRecord:
    """A day's whole record: docs/formats.md puzzle, code, length, difficulty and solution."""
    version = version_for(day) if day >= FIRST_DAY else None
    found = _calendar(version).get(day.isoformat()) if version else None
    if found is None or version is None:  # no version, no calendar: found is None too
        raise NotInCalendar(f"there is no daily puzzle for {day.isoformat()}: the calendar runs from "
                            f"{FIRST_DAY.isoformat()} to {last_day().isoformat()}")
    p = Puzzle.from_code(found["code"])
    return graded({"date": found["date"], "schedule_version": version.number, "puzzle": p.to_json(),
                   "code": found["code"], "optimal_length": found["optimal_length"],
                   "difficulty": found["difficulty"], "solution": found["solution"]})


def graded(record: DayRecord) -> DayRecord:
    """A day's record with the grade it is shown with: from REGRADED_FROM on, the
    players' scale's (a deployment may hold such a day stored with the old word)."""
    if dt.date.fromisoformat(record["date"]) < REGRADED_FROM:
        return record
    report = record["difficulty"]
    grade = grade_of(record["optimal_length"], report.get("fewest_robots_moved") or 1)
    return record if report.get("grade") == grade else {**record, "difficulty": {**report, "grade": grade}}
