"""The daily puzzle over HTTP: today's, any past day's by date or number, the
archive, solutions and hints (never before the day, UTC), pictures, and how
others did on a day's puzzle."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, cast
from urllib.parse import urlencode

from flask import Blueprint, Response, request

from application import daily as days
from application import daily_stats
from application.daily import DailyView
from application.puzzles import LAST_HINT
from solver.formats.svg import captioned_svg
from solver.model.puzzle import Puzzle
from solver.play import daily
from solver.play.daily import DayRecord

from .common import context, public_root
from .declare import Reply, Shape, dumped, operation
from .errors import Problem, count_in
from .pictures import PNG, picture
from .requests import HintQuery
from .requests.daily import ArchiveQuery, DayOrPicturePath, DayPath
from .shapes import Archive, Daily, DailyHint, DailySolution, DayStats

bp = Blueprint("daily", __name__)


def _day(value: str) -> dt.date:
    """A path's day: a date (YYYY-MM-DD) or a day number (1 = 2026-01-01), published."""
    number = count_in(value, 6)
    if number is not None:
        if number < 1:
            raise Problem("not-found", "day numbers start at 1 (2026-01-01)", field="day")
        day = daily.day_of(number)
    else:
        try:
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):  # fromisoformat also reads 20260103
                raise ValueError(value)
            day = dt.date.fromisoformat(value)
        except ValueError:
            raise Problem("invalid-input", f"{value!r} is neither a date (YYYY-MM-DD) nor a day number "
                          "(1 = 2026-01-01)", field="day") from None
    return days.published(day)


RATED_MAX_AGE = 300  # seconds a client may keep a day's JSON, which carries the rating play moves


def _cache_control(day: dt.date, rated: bool = False) -> str:
    """A day's picture never changes once published; its JSON carries the rating
    play moves (`rated`): five minutes.  Today's replies are kept no later than
    midnight (UTC), when GET /v1/daily names the next day."""
    today = daily.today()
    if day < today:
        return f"public, max-age={RATED_MAX_AGE}" if rated else "public, max-age=2592000, immutable"
    midnight = dt.datetime.combine(today + dt.timedelta(days=1), dt.time(), dt.UTC)
    seconds = int((midnight - dt.datetime.now(dt.UTC)).total_seconds())
    return f"public, max-age={max(1, min(seconds, RATED_MAX_AGE if rated else 3600))}"


# A published day never changes, so each process keeps the bytes it served
# (body and ETag) and answers later requests without Redis or serialising; a
# day's puzzle, which carries its rating, is built again after RATED_FOR seconds.
_SERVED: dict[tuple[str, str], tuple[bytes, str, float]] = {}
_SERVED_MAX = 4096
RATED_FOR = 60.0


def _cacheable(day: dt.date, variant: str, build: Callable[[DayRecord], Mapping[str, Any]], shape: Shape,
               rated: bool = False) -> Response:
    """The day's reply, built by `build` and dumped by `shape`, its bytes kept."""
    key = (day.isoformat(), variant)
    served = _SERVED.get(key)
    if served is None or rated and time.monotonic() - served[2] > RATED_FOR:
        data = dumped(shape, build(days.record(context(), day)))
        served = (data, hashlib.sha256(data).hexdigest(), time.monotonic())
        if len(_SERVED) >= _SERVED_MAX:
            _SERVED.clear()
        _SERVED[key] = served
    response = Response(served[0], mimetype="application/json")
    response.set_etag(served[1])
    response.headers["Cache-Control"] = _cache_control(day, rated)
    return cast(Response, response.make_conditional(request))  # it returns self; werkzeug types its base class


def _rated(found: DayRecord) -> DailyView:
    return days.rated(context(), found)


def _shown_day(day: dt.date) -> Response:
    """A day's puzzle (its solution left out): a round opens for this client."""
    response = _cacheable(day, "puzzle", _rated, Daily, rated=True)
    days.hand_out(context(), day)
    return response


@operation(bp, "get /v1/daily", "dailyToday", tag="daily", errors=(304, 503), replies={200: "Daily"},
           summary="Today's daily puzzle (UTC), the same for everyone; the solution only on request")
def daily_today() -> Response:
    return _shown_day(_day(daily.today().isoformat()))


@operation(bp, "get /v1/daily/<day>", "dailyOn", tag="daily", path=DayOrPicturePath,
           summary="A published day's puzzle, by date or number; its PNG picture when the day ends in `.png`",
           description="A day is published from 00:00 UTC on its date; before that it answers 404 (title \"Not yet "
                       "published\"), solution, hint and picture alike. The calendar runs from 2026-01-01 (day 1) "
                       "to 2036-12-31.", errors=(304, 400, 404, 503), replies={200: "Daily"})
def daily_on(day: str) -> Response:
    if day.endswith(".png"):
        shown = _day(day[:-4])
        found = days.record(context(), shown)
        caption = (f"Ricochet Robots daily #{daily.number(shown)} · {shown.isoformat()} · "
                   f"{found['optimal_length']} moves")
        return picture(captioned_svg(Puzzle.from_code(found["code"]), caption), PNG, _cache_control(shown))
    return _shown_day(_day(day))


@operation(bp, "get /v1/daily/<day>/solution", "dailySolution", tag="daily", path=DayPath,
           summary="An optimal solution of a published day's puzzle", errors=(304, 400, 404, 503),
           replies={200: Reply("The solution, in the docs/formats.md answer shape", DailySolution, cached=True)})
def daily_solution(day: str) -> Response:
    shown = _day(day)
    days.read_solution(context(), shown)  # this client's answers to the day are no longer rated
    return _cacheable(shown, "solution", days.solution, DailySolution)


@operation(bp, "get /v1/daily/<day>/hint", "dailyHint", tag="daily", path=DayPath, query=HintQuery,
           summary="A hint for a published day's puzzle (levels 1 to 4, as DriftingDroids gives them)",
           errors=(304, 400, 404, 503), replies={200: Reply("The hint", DailyHint, cached=True)})
def daily_hint(day: str, query: dict[str, Any]) -> Response:
    level = query["level"]
    shown = _day(day)
    if level >= LAST_HINT:
        days.read_solution(context(), shown)
    return _cacheable(shown, f"hint{level}", lambda found: days.day_hint(found, level), DailyHint)


STATS_MAX_AGE = 60  # seconds a client may keep a day's figures, which grow as players finish


@operation(bp, "get /v1/daily/<day>/stats", "dailyStats", tag="daily", path=DayPath,
           summary="How others did on a published day's puzzle: players, the share who solved it, the average moves",
           description="Counts each player once: their first finish of the day's puzzle on its day or the next "
                       "(UTC), through POST /v1/verify with `player`. An answer the ratings take as the player's own "
                       "(a rated attempt: docs/ratings.md) counts as solved when it reaches the target; an attempt "
                       "made after the answer was shown to the client (its solution, its last hint) counts as not "
                       "solved; other attempts are not counted. An address without an API key counts one player a "
                       "day, as its rounds rate one; an API key, each of its players. A future day answers 404, as "
                       "the day itself does.", errors=(304, 400, 404, 503),
           replies={200: Reply("The day's figures", DayStats, cached=f"public, max-age={STATS_MAX_AGE}")})
def daily_stats_of(day: str) -> Any:
    return daily_stats.stats(context(), _day(day))


ARCHIVE_HEADERS = {"Link": {"schema": {"type": "string"}, "description": "RFC 8288 links: first, prev, next, last"},
                   "X-Total-Count": {"schema": {"type": "integer"}}, "Cache-Control": "CacheControl"}


@operation(bp, "get /v1/daily/archive", "dailyArchive", tag="daily", query=ArchiveQuery,
           summary="Published days, oldest first, a page at a time",
           description="Lists the days from `from` to `to` (both clamped to the published days: 2026-01-01 to "
                       "today, UTC; nothing of a future day is listed). Pages are linked by an RFC 8288 `Link` "
                       "header (rel first, prev, next, last); `X-Total-Count` gives the days in the range.",
           errors=(400, 503), replies={200: Reply("One page of days", Archive, headers=ARCHIVE_HEADERS)})
def archive(query: dict[str, Any]) -> Any:
    limit = query["limit"]
    items, total, start, end = days.archive(context(), query.get("from"), query.get("to"), limit)
    links = {"first": daily.FIRST_DAY}
    if start > daily.FIRST_DAY:
        links["prev"] = max(daily.FIRST_DAY, start - dt.timedelta(days=limit))
    if total > limit:
        links["next"] = start + dt.timedelta(days=limit)
    links["last"] = start + dt.timedelta(days=max(0, total - 1) // limit * limit)
    pages = {rel: urlencode({"from": s.isoformat(), "to": end.isoformat(), "limit": limit}) for rel, s in links.items()}
    link = ", ".join(f'<{public_root()}{request.path}?{page}>; rel="{rel}"' for rel, page in pages.items())
    return {"items": items, "total": total, "limit": limit}, 200, {
        "Link": link, "X-Total-Count": str(total), "Cache-Control": "public, max-age=300"}
