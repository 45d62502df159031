"""The Celery side of webhooks (workers/webhooks.py has what they do).

`ricochet.webhook_deliver` makes one attempt of one delivery and, when the
next is soon, sends itself again with that countdown; the beat's
`ricochet.webhook_sweep` (and each worker as it starts) sends every delivery
whose attempt is due and announces what a lost worker left unannounced (a
job settled but not announced, today's puzzle).  The store is the truth:
messages only wake the work, so a worker killed mid-delivery or a Redis
restart loses no delivery, and a delivery keeps its one `webhook-id`.

A job's event is announced as soon as the task that settled it returns
(task_postrun), and by the sweep should that worker have died first.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from typing import Any

from celery.signals import task_postrun, worker_ready

from .app import celery_app, settings
from .stores import Stores
from .webhooks import Policy, announce_day, announce_job, attempt

log = logging.getLogger(__name__)

DELIVER = "ricochet.webhook_deliver"
SWEEP = "ricochet.webhook_sweep"
SWEEP_EVERY = 5.0  # seconds between the beat's sweeps: a lost attempt waits about this long
SOON = 300.0  # a next attempt sooner than this is sent with a countdown; later ones are the sweep's
JOB_TASKS = frozenset({"ricochet.solve", "ricochet.pack", "ricochet.pack_chunk"})
POLICY = Policy.of(settings)


@functools.cache
def _stores() -> Stores:
    """Patient, as the other tasks' stores: a write in the middle of a Redis restart is retried, not lost."""
    return Stores.from_url(settings.redis_url or celery_app.conf.broker_url, patient=True)


@celery_app.task(name=DELIVER, acks_late=True)
def deliver(hook_id: str, message_id: str) -> float | None:
    """One attempt of a delivery (if it is due and no other worker holds it)."""
    wait = attempt(_stores().webhooks, hook_id, message_id, POLICY)
    if wait is not None and wait < min(SOON, settings.visibility_timeout / 2):
        deliver.apply_async(args=[hook_id, message_id], countdown=wait)
    return wait


def send(deliveries: list[tuple[str, str]]) -> None:
    for hook_id, message_id in deliveries:
        deliver.delay(hook_id, message_id)


@celery_app.task(name=SWEEP)
def sweep() -> int:
    """Announce what is due to be (settled jobs followed, today's puzzle) and send every
    delivery whose attempt is due: how many were sent."""
    stores = _stores()
    for job_id in stores.webhooks.watched():
        job = stores.jobs.get(job_id)
        if job is None:
            stores.webhooks.unwatch(job_id)
        else:
            announce_job(stores, job)  # an open job stays watched
    announce_day(stores, dt.datetime.now(dt.UTC).date())
    due = stores.webhooks.due(dt.datetime.now(dt.UTC).timestamp())
    send(due)
    return len(due)


celery_app.conf.beat_schedule["webhook-sweep"] = {"task": SWEEP, "schedule": SWEEP_EVERY}


def _job_id(args: Any, kwargs: Any) -> str | None:
    """The job a job task works for: its first argument, or `job_id` (a payload's)."""
    first = (args or [None])[0] if not (kwargs or {}).get("job_id") else kwargs["job_id"]
    if isinstance(first, dict):
        first = first.get("job_id")
    return first if isinstance(first, str) else None


@task_postrun.connect
def announce_settled(task: Any = None, args: Any = None, kwargs: Any = None, **_: Any) -> None:
    """After a job's task: the job's event, at once, if it settled and a key with webhooks follows it."""
    if task is None or task.name not in JOB_TASKS:
        return
    job_id = _job_id(args, kwargs)
    try:
        stores = _stores()
        if job_id is None or not stores.webhooks.is_watched(job_id):
            return
        job = stores.jobs.get(job_id)
        if job is not None:
            send(announce_job(stores, job))
    except Exception:  # the sweep announces it instead: a task's end must not fail for this
        log.warning("could not announce job %s's event now", job_id, exc_info=True)


@worker_ready.connect
def resume(**_: Any) -> None:
    """A worker that starts resumes what was pending (a worker killed mid-delivery)."""
    try:
        sweep.delay()
    except Exception:
        log.warning("could not queue the webhook sweep", exc_info=True)
