"""Solving and verifying answers (FORMATS.md shapes); slow solves become jobs."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify

from solver.errors import InvalidInput
from solver.puzzle import moves_from_json
from solver.rules import check
from workers.schemas import load

from .common import accepted, admit, answers, app_stores, puzzle_from
from .errors import Problem, json_body
from .limits import announce, charge
from .metrics import CACHE
from .schemas import VerifyRequest

bp = Blueprint("solving", __name__)

VERIFY_REQUEST = VerifyRequest()


@bp.post("/v1/solve")
def solve_puzzle() -> Response:
    """
    ---
    post:
      operationId: solve
      summary: An optimal solution (FORMATS.md answer)
      requestBody:
        required: true
        content:
          application/json: {schema: {$ref: '#/components/schemas/PuzzleRef'}}
      responses:
        '200':
          description: The answer; `status` says whether the search finished
          content: {application/json: {schema: Answer}}
        '202':
          description: The search needs longer than a request may take; poll the job at `Location`
          headers:
            Location:
              schema: {type: string}
              description: /v1/jobs/{job_id}
            Retry-After: {schema: {type: string}}
          content: {application/json: {schema: Job}}
          links:
            getJob: {$ref: '#/components/links/GetJob'}
            cancelJob: {$ref: '#/components/links/CancelJob'}
        '400': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    p = puzzle_from(json_body())
    stores = app_stores()
    answer, source = answers().lookup(p)
    if stores is not None:
        CACHE.labels("hit" if source == "store" else "miss").inc()
    if answer["status"] == "timeout" and stores is not None:
        budget = current_app.config["JOB_TIME_BUDGET"]
        admit("ricochet")
        # Identical work in flight (same puzzle, same budget) shares one job, charged once.
        job, fresh = stores.jobs.shared("solve", f"{p.content_hash()}:{budget:g}", {"puzzle": p.to_json()},
                                       ttl=budget + 60)
        quota = {}
        if fresh:
            try:
                quota = charge("solve", int(budget))
            except Problem:
                stores.jobs.cancel(job["id"])
                raise
            current_app.extensions["celery"].send_task("ricochet.solve", args=[job["id"], p.to_json(), budget])
        return announce(accepted(job), quota)
    response = jsonify(answer)
    if source == "store":
        response.headers["X-Cache"] = "hit"
    return response


@bp.post("/v1/verify")
def verify() -> Response:
    """
    ---
    post:
      operationId: verify
      summary: Judge a player's moves, and whether they are optimal
      requestBody:
        required: true
        content: {application/json: {schema: VerifyRequest}}
      responses:
        '200':
          description: The `ricochet check` verdict plus `optimal` and `optimal_length`
          content: {application/json: {schema: Verdict}}
        '400': {$ref: '#/components/responses/Problem'}
    """
    body = load(VERIFY_REQUEST, json_body())
    try:
        p = puzzle_from(body["puzzle"])
    except InvalidInput as e:
        raise e.within("puzzle") from None
    verdict = check(p, moves_from_json(body["moves"])).to_json()
    optimal_length, settled = answers().optimum(p)
    verdict["optimal_length"] = optimal_length
    verdict["optimal"] = bool(verdict["solved"] and optimal_length is not None
                              and verdict["length"] == optimal_length)
    # "unknown": the optimum was not found within the request's search budget
    # (POST /v1/solve queues a longer search; verify then knows it).
    verdict["optimality"] = "proven" if settled else "unknown"
    return jsonify(verdict)

