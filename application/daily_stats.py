"""How others did on a day's puzzle: each player's first finish of it, counted
as the ratings judge answers (docs/api.md, "How others did"), and the day's
figures: players, the share who solved it, the average moves of a solve."""

from __future__ import annotations

import datetime as dt
from contextlib import suppress
from typing import TypedDict

from solver.model.puzzle import Puzzle
from solver.play import daily
from workers.stores import Unavailable
from workers.stores.days import Finishes

from . import Context

COUNTED_FOR = 2  # days (UTC) a day's puzzle is counted: its own and the next (a day begun before midnight)


class Judged(TypedDict):
    """What `finished` reads of a verify's verdict (application/ratings/finisher.py's Verdict)."""

    solved: bool
    length: int
    optimal: bool


class DayStats(TypedDict):
    """service/shapes.py's DayStats: GET /v1/daily/{day}/stats."""

    date: str
    players: int
    solved: int
    optimal: int
    solved_share: float
    average_moves: float | None
    moves: dict[str, int]


_CODES: dict[str, str] = {}  # a published day's code never changes: each process keeps those it looked up


def _code(ctx: Context, day: dt.date) -> str:
    """The day's code as this deployment published it, else the calendar's."""
    code = _CODES.get(day.isoformat())
    if code is None:
        found = ctx.stores.days.get(day.isoformat()) if ctx.stores is not None else None
        code = _CODES.setdefault(day.isoformat(), (found or daily.daily_json(day))["code"])
    return code


def counted_day(ctx: Context, p: Puzzle) -> dt.date | None:
    """The day whose figures a finish of `p` counts in now: `p` is the puzzle of
    today or of a day before within COUNTED_FOR (UTC)."""
    today = min(daily.today(), daily.last_day())
    code = p.code()
    for back in range(COUNTED_FOR):
        day = today - dt.timedelta(days=back)
        if day >= daily.FIRST_DAY and _code(ctx, day) == code:
            return day
    return None


def finished(ctx: Context, p: Puzzle, player: str, verdict: Judged, *, own: bool, shown: bool) -> None:
    """A player's attempt at `p` was recorded (application/ratings/finisher.py):
    counted in its day's figures if it is the player's first finish there and
    the ratings took it for the player's `own` answer (a rated attempt: solved
    or not) or refused it as one made after the client was `shown` the answer
    (counted as not solved: giving up on the play page sends such an attempt).
    An address counts one player a day, as its rounds rate one player's answer
    (docs/ratings.md); an API key, each of its players."""
    if not (own or shown) or ctx.stores is None:
        return
    day = counted_day(ctx, p)
    if day is None:
        return
    who = ctx.client if ctx.client.startswith("addr:") else f"{ctx.client}:{player}"
    solved = own and verdict["solved"]
    ends = dt.datetime.combine(day + dt.timedelta(days=COUNTED_FOR), dt.time(), dt.UTC)
    with suppress(Unavailable):  # the attempt is recorded: the figures miss one finish
        ctx.stores.days.finished(day.isoformat(), who, verdict["length"] if solved else None,
                                 solved and verdict["optimal"], int(ends.timestamp()))


def stats(ctx: Context, day: dt.date) -> DayStats:
    """A published day's figures: players counted, those who solved it and found
    the fewest moves, the share who solved it, the average moves of a solve and
    the solves by moves (nothing is counted without Redis)."""
    counts = ctx.stores.days.finishes(day.isoformat()) if ctx.stores is not None else Finishes(
        players=0, solved=0, optimal=0, moves={})
    players, solved = counts["players"], counts["solved"]
    total = sum(moves * n for moves, n in counts["moves"].items())
    return {"date": day.isoformat(), "players": players, "solved": solved, "optimal": counts["optimal"],
            "solved_share": round(solved / players, 3) if players else 0.0,
            "average_moves": round(total / solved, 1) if solved else None,
            "moves": {str(moves): n for moves, n in counts["moves"].items()}}
