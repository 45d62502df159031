"""The daily puzzle over HTTP: today's, any past day's by date or number, the
archive, solutions and hints (never before the day, UTC) and pictures."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, current_app, jsonify, request

from solver import daily
from solver.puzzle import Puzzle, moves_from_json
from solver.solution import hint
from solver.svg import puzzle_svg
from workers.schemas import load

from .errors import Problem, count_in
from .pictures import PNG, picture
from .schemas import ArchiveQuery, HintQuery

bp = Blueprint("daily", __name__)
ARCHIVE_QUERY = ArchiveQuery()
HINT_QUERY = HintQuery()


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
    if day > daily.today():
        wait = (day - daily.today()).days
        raise Problem("not-yet-published", f"the puzzle of {day.isoformat()} is published on that day at "
                      f"00:00 UTC, in {wait} day{'s' if wait != 1 else ''}; nothing of it is shown before",
                      field="day")
    if day < daily.FIRST_DAY or day > daily.last_day():
        raise Problem("not-found", f"there is no daily puzzle for {day.isoformat()}: they run from "
                      f"{daily.FIRST_DAY.isoformat()} to {daily.last_day().isoformat()}", field="day")
    return day


def _record(day: dt.date) -> dict[str, Any]:
    """The day's record: the one this deployment first served, else the calendar's
    (stored now, so that it stands)."""
    stores = current_app.extensions.get("stores")
    if stores is None:
        return daily.daily_json(day)
    return stores.days.get(day.isoformat()) or stores.days.publish(day.isoformat(), daily.daily_json(day))


def _cache_control(day: dt.date) -> str:
    today = daily.today()
    if day < today:
        return "public, max-age=2592000, immutable"
    midnight = dt.datetime.combine(today + dt.timedelta(days=1), dt.time(), dt.UTC)
    seconds = int((midnight - dt.datetime.now(dt.UTC)).total_seconds())
    return f"public, max-age={max(60, min(seconds, 3600))}"


# A published day never changes, so each process keeps the bytes it served
# (body and ETag) and answers later requests without Redis or serialising.
_SERVED: dict[tuple[str, str], tuple[bytes, str]] = {}
_SERVED_MAX = 4096


def _cacheable(day: dt.date, variant: str, build: Callable[[dict[str, Any]], dict[str, Any]]) -> Response:
    key = (day.isoformat(), variant)
    served = _SERVED.get(key)
    if served is None:
        data = json.dumps(build(_record(day)), separators=(",", ":")).encode() + b"\n"
        served = (data, hashlib.sha256(data).hexdigest())
        if len(_SERVED) >= _SERVED_MAX:
            _SERVED.clear()
        _SERVED[key] = served
    response = Response(served[0], mimetype="application/json")
    response.set_etag(served[1])
    response.headers["Cache-Control"] = _cache_control(day)
    return response.make_conditional(request)


@bp.get("/v1/daily")
def daily_today() -> Response:
    """
    ---
    get:
      operationId: dailyToday
      summary: Today's daily puzzle (UTC), the same for everyone; the solution only on request
      responses:
        '200': {$ref: '#/components/responses/Daily'}
        '304': NotModified
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    return daily_on(daily.today().isoformat())


@bp.get("/v1/daily/<day>")
def daily_on(day: str) -> Response:
    """
    ---
    get:
      operationId: dailyOn
      summary: A published day's puzzle, by date or number; its PNG picture when the day ends in `.png`
      description: A day is published from 00:00 UTC on its date; before that it answers 404 (title "Not yet
        published"), solution, hint and picture alike. The calendar runs from 2026-01-01 (day 1) to 2036-12-31.
      parameters:
      - DayOrPicture
      responses:
        '200': {$ref: '#/components/responses/Daily'}
        '304': NotModified
        '400': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    if day.endswith(".png"):
        published = _day(day[:-4])
        record = _record(published)
        return picture(puzzle_svg(Puzzle.from_code(record["code"])), PNG, _cache_control(published))
    return _cacheable(_day(day), "puzzle", daily.view)


@bp.get("/v1/daily/<day>/solution")
def daily_solution(day: str) -> Response:
    """
    ---
    get:
      operationId: dailySolution
      summary: An optimal solution of a published day's puzzle
      parameters:
      - Day
      responses:
        '200':
          description: The solution, in the FORMATS.md answer shape
          headers:
            ETag: ETag
            Cache-Control: CacheControl
          content: {application/json: {schema: DailySolution}}
        '304': NotModified
        '400': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    def build(found: dict[str, Any]) -> dict[str, Any]:
        return {"date": found["date"], "code": found["code"], "length": found["optimal_length"],
                "moves": found["solution"], "status": "optimal"}

    return _cacheable(_day(day), "solution", build)


@bp.get("/v1/daily/<day>/hint")
def daily_hint(day: str) -> Response:
    """
    ---
    get:
      operationId: dailyHint
      summary: A hint for a published day's puzzle (levels 1 to 4, as DriftingDroids gives them)
      parameters:
      - Day
      - HintLevel
      responses:
        '200':
          description: The hint
          headers:
            ETag: ETag
            Cache-Control: CacheControl
          content: {application/json: {schema: DailyHint}}
        '304': NotModified
        '400': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    level = load(HINT_QUERY, request.args.to_dict())["level"]

    def build(found: dict[str, Any]) -> dict[str, Any]:
        return {"date": found["date"], "code": found["code"],
                **hint(moves_from_json(found["solution"]), level)}

    return _cacheable(_day(day), f"hint{level}", build)


@bp.get("/v1/daily/archive")
def archive() -> Response:
    """Published days, oldest first, a page at a time (RFC 8288 Link headers).

    ---
    get:
      operationId: dailyArchive
      summary: Published days, oldest first, a page at a time
      description: 'Lists the days from `from` to `to` (both clamped to the published days: 2026-01-01 to
        today, UTC; nothing of a future day is listed). Pages are linked by an RFC 8288 `Link` header (rel
        first, prev, next, last); `X-Total-Count` gives the days in the range.'
      parameters:
      - {in: query, schema: ArchiveQuery}
      responses:
        '200':
          description: One page of days
          headers:
            Link:
              schema: {type: string}
              description: 'RFC 8288 links: first, prev, next, last'
            X-Total-Count: {schema: {type: integer}}
            Cache-Control: CacheControl
          content: {application/json: {schema: Archive}}
        '400': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    query = load(ARCHIVE_QUERY, request.args.to_dict())
    today = min(daily.today(), daily.last_day())
    start = max(query.get("from") or daily.FIRST_DAY, daily.FIRST_DAY)
    end = min(query.get("to") or today, today)
    limit = query["limit"]
    if query.get("from") and query.get("to") and query["from"] > query["to"]:
        raise Problem("invalid-input", "from must not be after to", field="from")
    total = max(0, (end - start).days + 1)
    days = [start + dt.timedelta(days=i) for i in range(min(limit, total))]
    stores = current_app.extensions.get("stores")
    stored = stores.days.get_many([d.isoformat() for d in days]) if stores is not None else {}
    items = []
    for d in days:
        record = stored.get(d.isoformat()) or daily.daily_json(d)
        items.append({"number": daily.number(d), "date": d.isoformat(), "code": record["code"],
                      "optimal_length": record["optimal_length"], "grade": record["difficulty"]["grade"],
                      "url": f"/v1/daily/{d.isoformat()}"})
    response = jsonify(items=items, total=total, limit=limit)
    links = {"first": (daily.FIRST_DAY, limit)}
    if start > daily.FIRST_DAY:
        links["prev"] = (max(daily.FIRST_DAY, start - dt.timedelta(days=limit)), limit)
    if total > limit:
        links["next"] = (start + dt.timedelta(days=limit), limit)
    links["last"] = (start + dt.timedelta(days=max(0, total - 1) // limit * limit), limit)
    response.headers["Link"] = ", ".join(
        f'<{request.base_url}?{urlencode({"from": s.isoformat(), "to": end.isoformat(), "limit": n})}>; '
        f'rel="{rel}"' for rel, (s, n) in links.items())
    response.headers["X-Total-Count"] = str(total)
    response.headers["Cache-Control"] = "public, max-age=300"
    return response
