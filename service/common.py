"""What the views share: reading a puzzle from a body, the stores and pools of this app, the
search a request may run, the use cases' context, and the 202 answer of queued work."""

from __future__ import annotations

from typing import Any

from flask import current_app, request

from application import Context, jobs, webhooks
from application.solving import Queued
from solver.errors import InvalidInput
from solver.formats.driftingdroids import from_driftingdroids_id
from solver.model.puzzle import Puzzle, Rules
from solver.production.pools import Library, shipped
from workers.answers import Answers

from .declare import Body
from .limits import client_address, client_id, key_quotas
from .metrics import SOLVE_SECONDS

SVG = "image/svg+xml"


def puzzle_from(body: Any) -> Puzzle:
    """A puzzle as docs/formats.md writes it, or {"code": ...}, or {"driftingdroids_id": ...}
    (with "rules" beside it if not docs/rules.md's defaults)."""
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


# A puzzle body: docs/formats.md's puzzle, {"code": ...} or {"driftingdroids_id": ...}, checked by puzzle_from.
PUZZLE = Body(parse=puzzle_from, doc={"$ref": "#/components/schemas/PuzzleRef"})


def public_root() -> str:
    """Where absolute links point, without a trailing slash: RICOCHET_PUBLIC_URL when set,
    else the request's own scheme and host."""
    return current_app.config.get("PUBLIC_URL") or request.url_root.rstrip("/")


def public_url() -> str:
    """The request's own address (path and query) under public_root()."""
    full = request.full_path if request.query_string else request.path
    return public_root() + full


def bearer_token() -> str:
    """The token of `Authorization: Bearer <token>`, or "" when none was sent."""
    header = request.headers.get("Authorization", "")
    return header[7:] if header.startswith("Bearer ") else ""


def app_stores() -> Any:
    return current_app.extensions.get("stores")


def answers() -> Answers:
    """Answers within a request's search budget, kept in this app's store."""
    config = current_app.config
    return Answers(app_stores(), config["SOLVE_TIME_BUDGET"], SOLVE_SECONDS.time,
                   state_budget=config["SOLVE_STATE_BUDGET"], room=current_app.extensions["searches"])


def pools() -> Library:
    """The pools this process sees: the starter set, then the deployment's (Redis).
    One library per app, so a pool is loaded once and kept."""
    library = current_app.extensions.get("pools")
    if library is None:
        stores = app_stores()
        library = Library(shipped() + ([stores.pools, stores.catalogue] if stores is not None else []))
        current_app.extensions["pools"] = library
    return library


def context() -> Context:
    """The use cases' context for this request: this app's stores, pools and
    limits, the client asking (service/limits.py), and its Celery app as the queue."""
    config = current_app.config
    celery = current_app.extensions.get("celery")
    return Context(stores=app_stores(), pools=pools(), answers=answers(),
                   send=celery.send if celery is not None else None,
                   client=client_id(), address=client_address(), job_budget=config["JOB_TIME_BUDGET"],
                   quotas={**config["QUOTAS"], **key_quotas()} if config["RATE_LIMITS_ENABLED"] else {},
                   max_queued=config["MAX_QUEUED"], rating_prior=config["RATING_PRIOR"])


def accepted(queued: Queued) -> tuple[jobs.JobView, int, dict[str, str]]:
    """A queued job's 202: its view, where to follow it, and what is left of the quota.  A key
    with webhooks follows the job: its end is sent to them (application/webhooks.py)."""
    webhooks.follow(context(), queued.job)
    return jobs.view(queued.job), 202, {"Location": f"/v1/jobs/{queued.job['id']}", "Retry-After": "1", **queued.quota}
