"""What the views share: reading a puzzle from a body, the stores and pools of this app, the
search a request may run, and queued work (admission, the 202 answer)."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, jsonify, request

from solver.errors import InvalidInput
from solver.interop import from_driftingdroids_id
from solver.production import bank
from solver.production.generate import MAX_LENGTH
from solver.production.pools import Library, packaged
from solver.puzzle import Puzzle, Rules
from workers.answers import Answers

from .errors import Problem
from .metrics import SOLVE_SECONDS

SVG = "image/svg+xml"


def query_choice(name: str, choices: tuple[str, ...], default: str | None = None) -> str | None:
    """Query parameter `name`: one of `choices`, or `default` when it is left out."""
    value = request.args.get(name)
    if value is None:
        return default
    if value not in choices:
        raise Problem("invalid-input", f"{name} must be {' or '.join(choices)}", field=name)
    return value


def puzzle_from(body: Any) -> Puzzle:
    """A puzzle as FORMATS.md writes it, or {"code": ...}, or {"driftingdroids_id": ...}
    (with "rules" beside it if not RULES.md's defaults)."""
    if isinstance(body, dict) and set(body) == {"code"}:
        return Puzzle.from_code(body["code"])
    if isinstance(body, dict) and "driftingdroids_id" in body:
        if set(body) - {"driftingdroids_id", "rules"}:
            raise InvalidInput("", "a DriftingDroids puzzle is {\"driftingdroids_id\": ..., \"rules\": {...}} "
                               "and nothing else")
        rules = Rules.from_json(body["rules"]) if "rules" in body else None
        try:
            return from_driftingdroids_id(body["driftingdroids_id"], rules)
        except InvalidInput as e:
            raise InvalidInput("driftingdroids_id", e.message) from None
    return Puzzle.from_json(body)


def app_stores() -> Any:
    return current_app.extensions.get("stores")


def answers() -> Answers:
    """Answers within a request's search budget, kept in this app's store."""
    return Answers(app_stores(), current_app.config["SOLVE_TIME_BUDGET"], SOLVE_SECONDS.time)


def pools() -> Library:
    """The pools this process sees: the starter set, then the deployment's (Redis).
    One library per app, so a pool is loaded once and kept."""
    library = current_app.extensions.get("pools")
    if library is None:
        stores = app_stores()
        library = Library([packaged()] + ([stores.pools] if stores is not None else []))
        current_app.extensions["pools"] = library
    return library


SEARCH_REACHES = 20  # longest length search alone is asked for; beyond it pools and the bank decide


def longest_held(board: str, robots: int, ricochet: str) -> int:
    """The longest length pools (or, for random boards, the bank) hold for such requests."""
    longest = SEARCH_REACHES
    for pool in pools().pools(board, robots, ricochet):
        longest = max(longest, max(pool.lengths(), default=0))
    if board in ("random-2013", "random-1999"):
        edition = "1999" if board == "random-1999" else "2013"
        longest = max([longest] + [e["length"] for e in bank.matching(1, MAX_LENGTH, robots, ricochet, edition)])
    return longest


def job_view(job: dict[str, Any]) -> dict[str, Any]:
    view = {k: job[k] for k in ("id", "kind", "state", "progress", "created", "started", "finished",
                                "error", "result")}
    if job["kind"] == "pack" and job["state"] == "succeeded":
        view["pack_id"] = job["id"]
    return view


def accepted(job: dict[str, Any]) -> Response:
    response = jsonify(job_view(job))
    response.status_code = 202
    response.headers["Location"] = f"/v1/jobs/{job['id']}"
    response.headers["Retry-After"] = "1"
    return response


def admit(queue: str) -> None:
    """Refuse new queued work while the queue is full: 503 with Retry-After, rather
    than an unbounded backlog that nobody's request would live to see."""
    limit = current_app.config["MAX_QUEUED"][queue]
    if required_stores().queued(queue) >= limit:
        raise Problem("unavailable", f"the {queue} queue is full ({limit} tasks waiting); "
                      "retry later", headers={"Retry-After": "30"})


def required_stores() -> Any:
    stores = app_stores()
    if stores is None:
        raise Problem("unavailable", "queued work needs Redis: set REDIS_URL or run `ricochet serve`")
    return stores
