"""Celery tasks.  Payloads are checked before any work starts."""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import Any

from solver.daily import DAYS_AHEAD, daily_json
from solver.errors import InvalidInput
from solver.generate import NoPuzzleFound, generate
from solver.puzzle import Puzzle
from solver.solve import solve

from .app import celery_app
from .schemas import PackRequest, SolveTask, load
from .stores import Stores

SOLVE_TASK = SolveTask()  # schemas are stateless: one instance serves every request
PACK_REQUEST = PackRequest()


def _stores() -> Stores:
    return Stores.from_url(os.environ.get("REDIS_URL", celery_app.conf.broker_url))


@celery_app.task(name="ricochet.solve", acks_late=True)
def solve_task(job_id: str, puzzle: dict[str, Any], time_budget: float, max_depth: int = 64) -> dict[str, Any]:
    stores = _stores()
    try:
        load(SOLVE_TASK, {"job_id": job_id, "puzzle": puzzle, "time_budget": time_budget, "max_depth": max_depth})
        p = Puzzle.from_json(puzzle)
    except InvalidInput as e:
        stores.update_job(job_id, state="failed", finished=time.time(), error=str(e))
        return {"error": str(e)}
    stores.update_job(job_id, state="running", started=time.time(), progress=0.0)
    answer = solve(p, time_budget=time_budget, max_depth=max_depth).to_json()
    answer["code"] = p.code()
    if answer["status"] in ("timeout", "state_limit"):
        # A clear end, and the worker is free again: what was proven goes with it.
        limit = f"its {time_budget:g} s budget" if answer["status"] == "timeout" else "its memory budget"
        error = (f"{answer['status']}: the search ran out of {limit}; no solution has fewer than "
                 f"{answer.get('lower_bound')} moves")
        stores.update_job(job_id, state="failed", progress=1.0, finished=time.time(), error=error, result=answer)
        return {"status": answer["status"]}
    stores.save_answer(p.content_hash(), answer)
    stores.update_job(job_id, state="succeeded", progress=1.0, finished=time.time(), result=answer)
    return {"status": answer["status"]}


@celery_app.task(name="ricochet.precompute_daily")
def precompute_daily(days_ahead: int = DAYS_AHEAD) -> list[str]:
    """Publish today's puzzle and the next days' before anyone asks."""
    stores = _stores()
    today = dt.datetime.now(dt.UTC).date()
    done = []
    for offset in range(days_ahead + 1):
        day = today + dt.timedelta(days=offset)
        key = daily_key(day)
        if stores.daily(key) is None:
            stores.publish_daily(key, daily_json(day))
        done.append(day.isoformat())
    return done


def daily_key(day: dt.date) -> str:
    from solver.daily import SCHEDULE_VERSION

    return f"v{SCHEDULE_VERSION}:{day.isoformat()}"


celery_app.conf.beat_schedule = {
    "precompute-daily": {"task": "ricochet.precompute_daily", "schedule": 3600.0},
}


def chunk_size(request: dict[str, Any]) -> int:
    """Puzzles per chunk task: many cheap short puzzles per task, long ones one
    by one so that every worker gets a share of even a small pack."""
    return 10 if request["min_length"] <= 8 else 3 if request["min_length"] <= 12 else 1




def pack_request(body: Any) -> dict[str, Any]:
    """Check a pack request (API and task alike) and fill in the defaults."""
    return load(PACK_REQUEST, body)


def pack_item(request: dict[str, Any], index: int) -> dict[str, Any]:
    """Puzzle `index` of a pack: a pure function of the request and the index."""
    g = generate(min_length=request["min_length"], max_length=request["max_length"], board=request["board"],
                 robots=request["robots"], seed=f"pack:{request['seed']}:{index}", max_evaluations=5000)
    return g.to_json()


@celery_app.task(name="ricochet.generate", acks_late=True)
def generate_task(job_id: str) -> dict[str, Any]:
    """One generated puzzle for the job's request (min_length, max_length, seed,
    board, robots): the same puzzle a pack with that seed holds first."""
    stores = _stores()
    job = stores.job(job_id)
    try:
        request = pack_request({**(job["request"] if job else {}), "count": 1})
    except InvalidInput as e:
        stores.update_job(job_id, state="failed", finished=time.time(), error=str(e))
        return {"error": str(e)}
    stores.update_job(job_id, state="running", started=time.time())
    try:
        item = pack_item(request, 0)
    except NoPuzzleFound as e:
        stores.update_job(job_id, state="failed", progress=1.0, finished=time.time(), error=str(e))
        return {"error": str(e)}
    stores.update_job(job_id, state="succeeded", progress=1.0, finished=time.time(), result=item)
    return {"code": item["code"]}


@celery_app.task(name="ricochet.pack")
def pack_task(job_id: str) -> int:
    """Fan a pack out in chunks; the job's progress counts the puzzles stored."""
    stores = _stores()
    job = stores.job(job_id)
    try:
        request = pack_request(job["request"] if job else None)
    except InvalidInput as e:
        stores.update_job(job_id, state="failed", finished=time.time(), error=str(e))
        return 0
    stores.update_job(job_id, state="running", started=time.time())
    size = chunk_size(request)
    for first in range(0, request["count"], size):
        pack_chunk.delay(job_id, first, min(first + size, request["count"]))
    return request["count"]


@celery_app.task(name="ricochet.pack_chunk", acks_late=True)
def pack_chunk(job_id: str, first: int, last: int) -> int:
    stores = _stores()
    job = stores.job(job_id)
    if job is None or job["state"] == "failed":
        return 0
    request = pack_request(job["request"])
    held = 0
    for index in range(first, last):
        try:
            item = pack_item(request, index)
        except (InvalidInput, NoPuzzleFound) as e:
            stores.update_job(job_id, state="failed", finished=time.time(), error=f"puzzle {index}: {e}")
            return index - first
        held = stores.save_pack_item(job_id, index, item)
        stores.update_job(job_id, progress=round(held / request["count"], 4))
    if held == request["count"] and stores.pack_items(job_id, request["count"]) is not None:
        stores.update_job(job_id, state="succeeded", progress=1.0, finished=time.time(), result={"pack_id": job_id})
    return last - first
