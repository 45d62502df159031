"""Solving and verifying answers (docs/formats.md shapes); slow solves become jobs."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from application import ratings, solving
from solver.errors import InvalidInput
from solver.model.puzzle import Puzzle, moves_from_json

from .common import PUZZLE, accepted, context, puzzle_from
from .declare import JOB_LINKS, Reply, operation
from .metrics import CACHE
from .requests.solving import VerifyRequest
from .shapes import Answer, Job, Verdict

bp = Blueprint("solving", __name__)


@operation(bp, "post /v1/solve", "solve", tag="solving", summary="An optimal solution (docs/formats.md answer)",
           body=PUZZLE, searches=True, quota="solve", errors=(400, 503), replies={
               200: Reply("The answer; `status` says whether the search finished", Answer),
               202: Reply("The search needs longer than a request may take; poll the job at `Location`", Job,
                          headers={"Location": {"schema": {"type": "string"}, "description": "/v1/jobs/{job_id}"},
                                   "Retry-After": {"schema": {"type": "string"}}}, links=JOB_LINKS)})
def solve_puzzle(body: Puzzle) -> Any:
    ctx = context()
    outcome = solving.solve(ctx, body)
    ratings.reveal(ctx, body)  # the answer, now or from the job: this client's attempts at it are not rated
    if isinstance(outcome, solving.Queued):
        return accepted(outcome)
    if ctx.stores is not None:
        CACHE.labels("hit" if outcome.source == "store" else "miss").inc()
    return outcome.answer, 200, {"X-Cache": "hit"} if outcome.source == "store" else {}


@operation(bp, "post /v1/verify", "verify", tag="solving", summary="Judge a player's moves, and whether they are "
           "optimal; with `player`, rate the attempt", body=VerifyRequest, errors=(400, 503), replies={
               200: Reply("The `ricochet check` verdict plus `optimal` and `optimal_length`", Verdict)})
def verify(body: dict[str, Any]) -> Any:
    try:
        p = puzzle_from(body["puzzle"])
    except InvalidInput as e:
        raise e.within("puzzle") from None
    ctx = context()
    verdict = solving.verify(ctx, p, moves_from_json(body["moves"]))
    if "player" in body:
        verdict["attempt"] = ratings.attempt(ctx, p, verdict, body["player"])
    else:  # an answer checked without a player (from an address: its attempts at it are not rated)
        ratings.checked(ctx, p)
    return verdict
