"""Packs: asking for one (checked against what the deployment holds, idempotent,
admitted and charged), and reading one back in order."""

from __future__ import annotations

import hashlib
import json
import uuid
from typing import Any

from solver.formats.driftingdroids import driftingdroids_id
from solver.model.board import BoardKind
from solver.model.puzzle import Puzzle, moves_from_json
from solver.production import bank
from solver.production.generate import MAX_LENGTH
from solver.production.pools import Library
from workers.stores.jobs import JobState

from . import Context, jobs, ratings
from .problems import Problem
from .solving import Queued

SHORTEST = 2  # a round solved in one move is void (docs/rules.md)
SEARCH_REACHES = 20  # longest length search alone is asked for; beyond it pools and the bank decide
MAX_IDEMPOTENCY_KEY = 200


def longest_held(library: Library, board: str, robots: int, ricochet: str) -> int:
    """The longest length pools (or, for random boards, the bank) hold for such requests."""
    longest = SEARCH_REACHES
    for pool in library.pools(board, robots, ricochet):
        longest = max(longest, max(pool.lengths(), default=0))
    kind = BoardKind.of(board)
    if kind is not None and kind.banked:
        longest = max([longest] + [e["length"] for e in bank.matching(1, MAX_LENGTH, robots, ricochet, kind.edition)])
    return longest


def submit(ctx: Context, request: dict[str, Any], idempotency_key: str | None = None) -> Queued:
    """Queue a pack (a PackRequest, loaded).  The same Idempotency-Key from the same
    client with the same request gives the same job for 24 hours; with another
    request, 422.  A refused request (out of range, queue full, over quota)
    records nothing, so its retry is a new request."""
    stores = ctx.required_stores()
    if request["min_length"] < SHORTEST:
        raise Problem("out-of-range", f"no fair puzzle has fewer than {SHORTEST} moves (a round solved in one move "
                      f"is void): ask for min_length from {SHORTEST}", field="min_length")
    longest = longest_held(ctx.pools, request["board"], request["robots"], request["ricochet"])
    if request["min_length"] > longest:
        raise Problem("out-of-range", f"the longest puzzles held for {request['robots']} robots on "
                      f"{request['board']} boards (ricochet {request['ricochet']}) have {longest} moves; "
                      f"ask for min_length up to {longest}", field="min_length")
    scoped = fingerprint = None
    if idempotency_key is not None:
        if not 1 <= len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
            raise Problem("invalid-input", f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} characters",
                          field="Idempotency-Key")
        scoped = f"{ctx.client}:{idempotency_key}"
        fingerprint = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
        first = stores.jobs.named_by(scoped)
        if first is not None:
            return _replay(ctx, first[0], first[1] == fingerprint)
    jobs.admit(ctx, "packs")
    quota = jobs.charge(ctx, "pack", request["count"] * request["max_length"])
    job = stores.jobs.create("pack", request, uuid.uuid4().hex, asker=ctx.client)
    if scoped is not None and fingerprint is not None:
        named, same = stores.jobs.for_idempotency_key(scoped, job["id"], fingerprint)
        if named != job["id"]:  # the same key won a race a moment ago
            stores.jobs.cancel(job["id"])
            return _replay(ctx, named, same)
    jobs.send(ctx, "ricochet.pack", [job["id"]])
    return Queued(job, quota)


def _replay(ctx: Context, job_id: str, same: bool) -> Queued:
    if not same:
        raise Problem("idempotency-key-reused", "this Idempotency-Key was used with another request body; "
                      "use a new key for a new pack", field="Idempotency-Key")
    job = ctx.required_stores().jobs.get(job_id)
    if job is None:
        raise Problem("gone", "the job this Idempotency-Key named has expired; send the request with a new key")
    return Queued(job)


def pairs(items: list[dict[str, Any]]) -> int:
    """How many (board, target) pairs a pack's puzzles are spread over."""
    return len({(i["board"] if isinstance(i["board"], str) else json.dumps(i["board"], sort_keys=True),
                 Puzzle.from_code(i["code"]).goal.cell) for i in items})


def read(ctx: Context, pack_id: str, finished: bool = True) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The pack's job and its puzzles in order (those made so far unless
    `finished`); not found, not ready (still running, failed, cancelled) or gone."""
    stores = ctx.required_stores()
    job = stores.jobs.get(pack_id) if len(pack_id) <= jobs.MAX_ID else None
    if job is None or job["kind"] != "pack":
        raise Problem("not-found", f"no pack {pack_id!r}: packs are kept for a week")
    if finished and job["state"] != JobState.SUCCEEDED or job["state"] in (JobState.FAILED, JobState.CANCELLED):
        raise Problem("not-ready", f"the pack is {job['state']}; follow its job",
                      headers={"Location": f"/v1/jobs/{pack_id}"}, job=f"/v1/jobs/{pack_id}", state=job["state"])
    if job["state"] == JobState.SUCCEEDED and not stores.packs.exists(pack_id):
        raise Problem("gone", "the pack has expired; create it again (same seed, same puzzles)")
    return job, described(ctx, stores.packs.items(pack_id, job["request"]["count"]))


def described(ctx: Context, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A pack's items as clients see them, GET /v1/packs/{id} and `ricochet pack`
    alike: each with its DriftingDroids game ID, and the rating, popularity and
    themes play has made of it (without stores: the prior, 0 and its own)."""
    for item in items:  # packs made before the field existed
        if "driftingdroids_id" not in item:
            item["driftingdroids_id"] = driftingdroids_id(Puzzle.from_code(item["code"]))
    more = ratings.describe_many(ctx, [(Puzzle.from_code(i["code"]), moves_from_json(i["solution"])) for i in items])
    return [{**item, **extra} for item, extra in zip(items, more, strict=True)]
