"""Solving and verifying answers (FORMATS.md shapes); slow solves become jobs."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify

from solver.errors import InvalidInput
from solver.puzzle import Puzzle, moves_from_json
from solver.rules import check
from solver.solve import solve
from workers.schemas import load

from .common import (
    accepted,
    admit,
    app_stores,
    puzzle_from,
    search_and_remember,
)
from .errors import Problem, json_body
from .limits import announce, charge
from .metrics import CACHE, SOLVE_SECONDS
from .schemas import VerifyRequest

bp = Blueprint("solving", __name__)

VERIFY_REQUEST = VerifyRequest()


@bp.post("/v1/solve")
def solve_puzzle() -> Response:
    p = puzzle_from(json_body())
    stores = app_stores()
    key = p.content_hash()
    if stores is not None:
        cached = stores.answer(key)
        CACHE.labels("hit" if cached is not None else "miss").inc()
        if cached is not None:
            response = jsonify(cached)
            response.headers["X-Cache"] = "hit"
            return response
    with SOLVE_SECONDS.time():
        answer = {**solve(p, time_budget=current_app.config["SOLVE_TIME_BUDGET"]).to_json(), "code": p.code()}
    if answer["status"] == "timeout" and stores is not None:
        budget = current_app.config["JOB_TIME_BUDGET"]
        admit("ricochet")
        # Identical work in flight (same puzzle, same budget) shares one job, charged once.
        job, fresh = stores.shared_job("solve", f"{key}:{budget:g}", {"puzzle": p.to_json()}, ttl=budget + 60)
        quota = {}
        if fresh:
            try:
                quota = charge("solve", int(budget))
            except Problem:
                stores.cancel_job(job["id"])
                raise
            current_app.extensions["celery"].send_task("ricochet.solve", args=[job["id"], p.to_json(), budget])
        return announce(accepted(job), quota)
    if stores is not None:
        stores.save_answer(key, answer)
    return jsonify(answer)


@bp.post("/v1/verify")
def verify() -> Response:
    body = load(VERIFY_REQUEST, json_body())
    try:
        p = puzzle_from(body["puzzle"])
    except InvalidInput as e:
        raise e.within("puzzle") from None
    verdict = check(p, moves_from_json(body["moves"])).to_json()
    optimal_length, settled = _optimum(p)
    verdict["optimal_length"] = optimal_length
    verdict["optimal"] = bool(verdict["solved"] and optimal_length is not None
                              and verdict["length"] == optimal_length)
    # "unknown": the optimum was not found within the request's search budget
    # (POST /v1/solve queues a longer search; verify then knows it).
    verdict["optimality"] = "proven" if settled else "unknown"
    return jsonify(verdict)


def _optimum(p: Puzzle) -> tuple[int | None, bool]:
    """A puzzle's optimal length and whether it is settled: from what is known
    (a solved answer, a published or generated optimum), else from a search
    within the request's budget.  A search that runs out of it is remembered
    for an hour, so asking again costs no second search."""
    stores = app_stores()
    key = p.content_hash()
    budget = current_app.config["SOLVE_TIME_BUDGET"]
    if stores is not None:
        known = stores.optimum(key)
        if known is not None:
            return known, True
        if stores.unsettled(key, budget) is not None:
            return None, False
    answer = search_and_remember(p)
    settled = answer.status in ("optimal", "unsolvable")
    return answer.length, settled
