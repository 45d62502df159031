"""The /v1 API: boards, pictures, solving and verifying (FORMATS.md shapes)."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from solver.board import EDITIONS, all_boards, real_board, sections
from solver.daily import DAYS_AHEAD, FIRST_DAY, daily_json, published
from solver.errors import InvalidInput
from solver.puzzle import Puzzle, moves_from_json
from solver.rules import check
from solver.solve import solve
from solver.svg import board_svg, puzzle_svg

from .errors import Problem, problem_response

api = Blueprint("api", __name__)

SVG = "image/svg+xml"


def _json_body() -> Any:
    body = request.get_json(silent=True)
    if body is None:
        raise Problem(400, "Invalid JSON", "the request body must be a JSON document "
                      "(Content-Type: application/json)")
    return body


def _puzzle_from(body: Any) -> Puzzle:
    if isinstance(body, dict) and set(body) == {"code"}:
        return Puzzle.from_code(body["code"])
    return Puzzle.from_json(body)


@api.get("/healthz")
def healthz() -> Response:
    return jsonify(status="ok")


@api.get("/readyz")
def readyz() -> Response:
    """Ready when Redis answers and at least one worker replies to a ping."""
    stores = _stores()
    if stores is None:
        return jsonify(status="ready", redis="not configured", workers=0)
    stores.redis.ping()
    workers = current_app.extensions["celery"].control.ping(timeout=1.0) or []
    if not workers:
        response = problem_response(503, "Not ready", "no worker replied; start one with `ricochet worker`")
        response.headers["Retry-After"] = "5"
        return response
    return jsonify(status="ready", redis="ok", workers=len(workers))


@api.get("/v1/boards")
def boards() -> Response:
    return jsonify(
        editions={e: {"boards": sum(1 for _ in all_boards(e)),
                      "sections": [s for s in sections() if e == "2013" or s[-1] in "AB"]}
                  for e in EDITIONS},
        sections=[{"id": s["id"], "colour_marking": s["colour_marking"], "has_vortex": s["has_vortex"],
                   "has_diagonals": s["has_diagonals"]} for s in sections().values()],
        example="green-A,yellow-B,red-B,blue-B",
    )


@api.get("/v1/boards/<spec>")
def board(spec: str) -> Response:
    if spec.endswith(".svg"):
        return Response(board_svg(real_board(spec[:-4])), mimetype=SVG)
    return jsonify(real_board(spec).to_object())


@api.get("/v1/puzzles/<code>")
def puzzle(code: str) -> Response:
    if code.endswith(".svg"):
        p = Puzzle.from_code(code[:-4])
        solution = solve(p, time_budget=current_app.config["SOLVE_TIME_BUDGET"]).moves \
            if request.args.get("solution") == "true" else None
        return Response(puzzle_svg(p, solution), mimetype=SVG)
    p = Puzzle.from_code(code)
    return jsonify({**p.to_json(), "code": p.code(), "hash": p.content_hash()})


def _stores() -> Any:
    return current_app.extensions.get("stores")


@api.post("/v1/solve")
def solve_puzzle() -> Response:
    p = _puzzle_from(_json_body())
    stores = _stores()
    key = p.content_hash()
    if stores is not None:
        cached = stores.answer(key)
        if cached is not None:
            response = jsonify(cached)
            response.headers["X-Cache"] = "hit"
            return response
    answer = {**solve(p, time_budget=current_app.config["SOLVE_TIME_BUDGET"]).to_json(), "code": p.code()}
    if answer["status"] == "timeout" and stores is not None:
        job = stores.create_job("solve", {"puzzle": p.to_json()})
        current_app.extensions["celery"].send_task(
            "ricochet.solve", args=[job["id"], p.to_json(), current_app.config["JOB_TIME_BUDGET"]])
        response = jsonify(_job_view(job))
        response.status_code = 202
        response.headers["Location"] = f"/v1/jobs/{job['id']}"
        response.headers["Retry-After"] = "1"
        return response
    if stores is not None:
        stores.save_answer(key, answer)
    return jsonify(answer)


def _job_view(job: dict[str, Any]) -> dict[str, Any]:
    return {k: job[k] for k in ("id", "kind", "state", "progress", "created", "started", "finished",
                                "error", "result")}


@api.get("/v1/jobs/<job_id>")
def job(job_id: str) -> Response:
    stores = _stores()
    found = stores.job(job_id) if stores is not None and len(job_id) <= 64 else None
    if found is None:
        raise Problem(404, "Not Found", f"no job {job_id!r}: jobs are kept for a week")
    return jsonify(_job_view(found))


@api.post("/v1/verify")
def verify() -> Response:
    body = _json_body()
    if not isinstance(body, dict) or "puzzle" not in body or "moves" not in body:
        raise InvalidInput("", "expected {\"puzzle\": {...}, \"moves\": [...]}")
    try:
        p = _puzzle_from(body["puzzle"])
    except InvalidInput as e:
        raise e.within("puzzle") from None
    verdict = check(p, moves_from_json(body["moves"])).to_json()
    answer = solve(p, time_budget=current_app.config["SOLVE_TIME_BUDGET"])
    optimal_length = answer.length
    verdict["optimal_length"] = optimal_length
    verdict["optimal"] = bool(verdict["solved"] and optimal_length is not None
                              and verdict["length"] == optimal_length)
    return jsonify(verdict)


# -- the daily puzzle ------------------------------------------------------------------


def _day(value: str) -> dt.date:
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        raise Problem(400, "Invalid date", f"{value!r} is not a date: use YYYY-MM-DD", field="date") from None
    if not published(day):
        raise Problem(404, "Not published", f"there is no daily puzzle for {day.isoformat()}: they run from "
                      f"{FIRST_DAY.isoformat()} to {DAYS_AHEAD} days after today (UTC)", field="date")
    return day


def _daily(day: dt.date) -> dict[str, Any]:
    from workers.tasks import daily_key

    stores = _stores()
    if stores is not None:
        found = stores.daily(daily_key(day))
        if found is not None:
            return found
        return stores.publish_daily(daily_key(day), daily_json(day))
    return daily_json(day)


def _cacheable(body: dict[str, Any], day: dt.date) -> Response:
    response = jsonify(body)
    response.set_etag(hashlib.sha256(response.get_data()).hexdigest())
    today = dt.datetime.now(dt.UTC).date()
    if day < today:
        response.headers["Cache-Control"] = "public, max-age=2592000, immutable"
    else:
        midnight = dt.datetime.combine(today + dt.timedelta(days=1), dt.time(), dt.UTC)
        seconds = int((midnight - dt.datetime.now(dt.UTC)).total_seconds())
        response.headers["Cache-Control"] = f"public, max-age={max(60, min(seconds, 3600))}"
    return response.make_conditional(request)


@api.get("/v1/daily")
def daily_today() -> Response:
    return daily_on(dt.datetime.now(dt.UTC).date().isoformat())


@api.get("/v1/daily/<date>")
def daily_on(date: str) -> Response:
    day = _day(date)
    body = {k: v for k, v in _daily(day).items() if k != "solution"}
    body["solution_url"] = f"/v1/daily/{day.isoformat()}/solution"
    return _cacheable(body, day)


@api.get("/v1/daily/<date>/solution")
def daily_solution(date: str) -> Response:
    day = _day(date)
    found = _daily(day)
    return _cacheable({"date": found["date"], "code": found["code"], "length": found["optimal_length"],
                       "moves": found["solution"], "status": "optimal"}, day)
