"""Celery tasks.  Payloads are checked before any work starts."""

from __future__ import annotations

import datetime as dt
import os
import time
from typing import Any

from solver.daily import DAYS_AHEAD, daily_json
from solver.errors import InvalidInput
from solver.puzzle import Puzzle
from solver.solve import solve

from .app import celery_app
from .stores import Stores

MAX_TIME_BUDGET = 600.0


def _stores() -> Stores:
    return Stores.from_url(os.environ.get("REDIS_URL", celery_app.conf.broker_url))


@celery_app.task(name="ricochet.solve", acks_late=True)
def solve_task(job_id: str, puzzle: dict[str, Any], time_budget: float) -> dict[str, Any]:
    stores = _stores()
    try:
        p = Puzzle.from_json(puzzle)
        if not isinstance(time_budget, (int, float)) or not 0 < time_budget <= MAX_TIME_BUDGET:
            raise InvalidInput("time_budget", f"must be a number of seconds from 0 to {MAX_TIME_BUDGET}")
    except InvalidInput as e:
        stores.update_job(job_id, state="failed", finished=time.time(), error=str(e))
        return {"error": str(e)}
    stores.update_job(job_id, state="running", started=time.time(), progress=0.0)
    answer = solve(p, time_budget=time_budget).to_json()
    answer["code"] = p.code()
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
