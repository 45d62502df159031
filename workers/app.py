"""The Celery application, configured from the settings (REDIS_URL names the Redis).

`celery -A workers.app worker` (or `ricochet worker`) runs it.  Tasks are
acknowledged late and re-queued when a worker dies, so nothing is lost.
"""

from __future__ import annotations

from typing import Any

from celery import Celery
from celery.signals import worker_init

from . import memory
from .settings import Settings, settings_or_exit

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def make_celery(redis_url: str | None = None, settings: Settings | None = None) -> Celery:
    settings = settings or settings_or_exit()
    url = redis_url or settings.redis_url or DEFAULT_REDIS_URL
    app = Celery("ricochet", broker=url, backend=url, include=["workers.tasks", "workers.deliveries"])
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_ignore_result=True,  # every task's outcome is in the stores (jobs, packs, days); nothing reads results
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue="ricochet",
        result_expires=24 * 3600,
        broker_connection_retry_on_startup=True,
                # Queues are taken in the order a worker lists them (`priority`): interactive
        # work (solves, one puzzle, the daily) before packs, packs before analyses.
        # The visibility timeout outlasts the longest task (a queued solve's budget is
        # at most 600 s), so no running task is handed out twice; a dead worker's pack
        # chunks come back sooner through their heartbeats (ricochet.recover_chunks).
        broker_transport_options={"visibility_timeout": settings.visibility_timeout,
                                  "queue_order_strategy": "priority"},
        task_routes={"ricochet.pack": {"queue": PACK_QUEUE}, "ricochet.pack_chunk": {"queue": PACK_QUEUE},
                     "ricochet.pool_build": {"queue": ANALYSIS_QUEUE}},
    )
    return app


INTERACTIVE_QUEUE = "ricochet"  # solves, single puzzles, the daily puzzle: first
PACK_QUEUE = "packs"            # bulk packs: after interactive work
ANALYSIS_QUEUE = "analysis"     # pool builds (4 GiB each): their own workers
QUEUES = (INTERACTIVE_QUEUE, PACK_QUEUE, ANALYSIS_QUEUE)


settings = settings_or_exit()  # a bad variable stops the worker at its start, not a job
celery_app = make_celery(settings=settings)


memory.budget_caches(settings.board_cache_mb)
memory.limit_arenas(2)


@worker_init.connect
def _cap_searches(**_: Any) -> None:
    """A worker's searches within RICOCHET_JOB_STATE_MB (its processes fork after this)."""
    memory.cap_searches(settings.job_state_mb)
