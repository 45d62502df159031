"""The daily puzzle: which days are published, a day's record (the one this
deployment first served, else the calendar's), how a day is shown, its
solution and hints, and the archive."""

from __future__ import annotations

import datetime as dt
from contextlib import suppress
from typing import NotRequired, TypedDict, cast

from solver.formats.driftingdroids import driftingdroids_id
from solver.model.puzzle import Puzzle, moves_from_json
from solver.play import daily
from solver.play.daily import DayPuzzle, DayRecord
from solver.play.grades import relabelled
from solver.search.solution import hint
from workers.stores import Unavailable

from . import Context, ratings
from .problems import Problem
from .ratings.themes import PuzzleRating


class DayLinked(DayPuzzle):
    """A day's puzzle with its number, DriftingDroids id and the addresses of its
    solution, hint and picture."""

    number: int
    driftingdroids_id: str | None
    solution_url: str
    hint_url: str
    image_url: str


class DayShown(DayLinked):
    """A day as `ricochet daily` shows it (the solution only when asked)."""

    solution: NotRequired[list[dict[str, str]]]


class DailyView(DayLinked):
    """service/shapes.py's Daily: GET /v1/daily and /v1/daily/{date}."""

    rating: PuzzleRating
    popularity: int
    themes: list[str]


class DailySolution(TypedDict):
    """service/shapes.py's DailySolution."""

    date: str
    code: str
    length: int
    moves: list[dict[str, str]]
    status: str


class DailyHint(TypedDict):
    """service/shapes.py's DailyHint: solver/search/solution.py's hint, with the day and its code."""

    date: str
    code: str
    level: int
    optimal_length: int
    robots_moved: NotRequired[int]
    robots: NotRequired[list[str]]
    first_move: NotRequired[dict[str, str] | None]


class ArchiveDay(TypedDict):
    """service/shapes.py's ArchiveDay: a published day in the archive."""

    number: int
    date: str
    code: str
    optimal_length: int
    grade: str
    url: str


def published(day: dt.date) -> dt.date:
    """`day`, if its puzzle is published: from 00:00 UTC on its date, within the calendar."""
    today = daily.today()
    if day > today:
        wait = (day - today).days
        raise Problem("not-yet-published", f"the puzzle of {day.isoformat()} is published on that day at "
                      f"00:00 UTC, in {wait} day{'s' if wait != 1 else ''}; nothing of it is shown before",
                      field="day")
    if day < daily.FIRST_DAY or day > daily.last_day():
        raise Problem("not-found", f"there is no daily puzzle for {day.isoformat()}: they run from "
                      f"{daily.FIRST_DAY.isoformat()} to {daily.last_day().isoformat()}", field="day")
    return day


def record(ctx: Context, day: dt.date) -> DayRecord:
    """The day's record: the one this deployment first served, else the calendar's
    (stored now, so that it stands), its grade word on today's scale."""
    if ctx.stores is None:
        return regraded(daily.daily_json(day))
    found = ctx.stores.days.get(day.isoformat()) or ctx.stores.days.publish(day.isoformat(), daily.daily_json(day))
    return regraded(found)


def regraded(found: DayRecord) -> DayRecord:
    """A day as shown: its puzzle and figures as published, its grade word the one
    players read today (a day published under the old scale read "extreme" for
    most of November's 17-move and shorter puzzles)."""
    report = relabelled(found["difficulty"], found["optimal_length"])
    return found if report is found["difficulty"] else {**found, "difficulty": report}


def shown(found: DayRecord, *, solutions: bool = False) -> DayShown:
    """A day as GET /v1/daily/{date} and `ricochet daily` show it (the solution
    only when asked), from its record, with the addresses of its solution, hint
    and picture; its grade word today's."""
    day = dt.date.fromisoformat(found["date"])
    p = Puzzle.from_code(found["code"])
    # every key of the record as it was kept (an older record's too), in its order, but its solution
    out = cast(DayShown, {k: v for k, v in regraded(found).items() if k != "solution"})
    out["number"] = daily.number(day)
    out["driftingdroids_id"] = driftingdroids_id(p)
    out["solution_url"] = f"/v1/daily/{found['date']}/solution"
    out["hint_url"] = f"/v1/daily/{found['date']}/hint?level=1"
    out["image_url"] = f"/v1/daily/{found['date']}.png"
    if solutions:
        out["solution"] = found["solution"]
    return out


def rated(ctx: Context, found: DayRecord) -> DailyView:
    """A day as GET /v1/daily shows it: `shown`, with what play made of its
    puzzle (rating, popularity, themes; the grade from the rating once enough
    players tried it)."""
    p = Puzzle.from_code(found["code"])
    described = ratings.describe(ctx, p, moves_from_json(found["solution"]), found["difficulty"])
    return cast(DailyView, {**shown(found), **described})  # `difficulty` graded by the rating, when it is


def solution(found: DayRecord) -> DailySolution:
    """A day's solution (the same bytes for everyone: `read_solution` says who read it)."""
    return {"date": found["date"], "code": found["code"], "length": found["optimal_length"],
            "moves": found["solution"], "status": "optimal"}


_CODES: dict[str, str] = {}  # a published day's code never changes: each process keeps those it served


def _day_puzzle(ctx: Context, day: dt.date) -> Puzzle:
    code = _CODES.get(day.isoformat())
    if code is None:
        code = _CODES.setdefault(day.isoformat(), record(ctx, day)["code"])
    return Puzzle.from_code(code)


def hand_out(ctx: Context, day: dt.date) -> None:
    """The day's puzzle was shown to the client without its solution: a round
    (its players' first answers are rated until it reads the solution).  The
    day is served without Redis too: then no round opens."""
    with suppress(Unavailable):
        ratings.open_round(ctx, _day_puzzle(ctx, day))


def read_solution(ctx: Context, day: dt.date) -> None:
    """The client read the day's solution (or its last hint): its players'
    answers to that day are not rated (without Redis, no answer is rated either)."""
    with suppress(Unavailable):
        ratings.reveal(ctx, _day_puzzle(ctx, day))


def day_hint(found: DayRecord, level: int) -> DailyHint:
    # solver/search/solution.py's hint: level, optimal_length, and by level robots_moved, robots, first_move
    return cast(DailyHint, {"date": found["date"], "code": found["code"],
                            **hint(moves_from_json(found["solution"]), level)})


def archive(ctx: Context, start: dt.date | None, end: dt.date | None, limit: int
            ) -> tuple[list[ArchiveDay], int, dt.date, dt.date]:
    """Up to `limit` published days from `start` to `end` (clamped to the
    published days), the days in that range, and the range itself."""
    if start and end and start > end:
        raise Problem("invalid-input", "from must not be after to", field="from")
    today = min(daily.today(), daily.last_day())
    start = max(start or daily.FIRST_DAY, daily.FIRST_DAY)
    end = min(end or today, today)
    total = max(0, (end - start).days + 1)
    days = [start + dt.timedelta(days=i) for i in range(min(limit, total))]
    stored = ctx.stores.days.get_many([d.isoformat() for d in days]) if ctx.stores is not None else {}
    items: list[ArchiveDay] = []
    for d in days:
        found = regraded(stored.get(d.isoformat()) or daily.daily_json(d))
        items.append({"number": daily.number(d), "date": d.isoformat(), "code": found["code"],
                      "optimal_length": found["optimal_length"], "grade": found["difficulty"]["grade"],
                      "url": f"/v1/daily/{d.isoformat()}"})
    return items, total, start, end


def precompute(ctx: Context, days_ahead: int = daily.DAYS_AHEAD) -> list[str]:
    """Today's puzzle and the next days' stored before anyone asks
    (ricochet.precompute_daily); nothing is shown before its day: `published`
    keeps the embargo.  Returns the days stored."""
    stores = ctx.required_stores()
    today = dt.datetime.now(dt.UTC).date()
    done = []
    for offset in range(days_ahead + 1):
        day = today + dt.timedelta(days=offset)
        try:
            stores.days.publish(day.isoformat(), daily.daily_json(day))
        except daily.NotInCalendar:
            break
        done.append(day.isoformat())
    return done
