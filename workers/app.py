"""The Celery application, made by one factory (Flask's Celery pattern:
`make_celery`) for the worker, the beat, the web app and the tests alike.

    celery = make_celery(settings)            # or make_celery(settings, stores=stores)
    celery.send(SOLVE.of({"job_id": ..., ...}))  # checked against its TaskSpec, then queued

The app carries what its tasks use, given here rather than found in module
globals: its `settings`, its `stores` (the workers' are patient: a write in the
middle of a Redis restart is retried, not lost) and the `library` of pools its
packs draw on.  A task (workers/tasks.py) reads them from the app it runs on,
so a test gives a task its stores by making an app with them.

`celery -A workers.app worker` (or `ricochet worker`) runs the app this module
makes on first use (`celery_app`, from the environment's settings).  Tasks are
acknowledged late and re-queued when a worker dies, so nothing is lost.
"""

from __future__ import annotations

import functools
from typing import Any

from celery import Celery
from celery.signals import worker_init

from solver.production import pools

from . import failover, memory
from .messages import QUEUES, TASKS, Message
from .settings import Settings, settings_or_exit
from .stores import Stores

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
__all__ = ["QUEUES", "Ricochet", "make_celery"]


class Ricochet(Celery):
    """A Celery app with its settings and stores (see the module's docstring)."""

    def __init__(self, settings: Settings, url: str, stores: Stores | None = None, patient: bool = True) -> None:
        super().__init__("ricochet", broker=url, backend=url, include=["workers.tasks"])
        self.settings = settings
        self.url = url
        self._given = stores
        self._patient = patient

    @functools.cached_property
    def stores(self) -> Stores:
        if self._given is not None:
            return self._given
        if self.settings.sentinels:  # self.url is the broker's sentinel:// one: the stores ask the Sentinels too
            return Stores.from_settings(self.settings, patient=self._patient)
        return Stores.from_url(self.url, patient=self._patient)

    @functools.cached_property
    def library(self) -> pools.Library:
        """The pools this app's tasks see: the package's, then the deployment's in Redis."""
        return pools.Library([*pools.shipped(), self.stores.pools, self.stores.catalogue])

    def send(self, message: Message[Any], **options: Any) -> None:
        """Queue a task with its payload (`TaskSpec.of`), checked first (InvalidInput names a bad field)."""
        spec = message.spec
        self.send_task(spec.name, args=spec.message(message.payload), queue=spec.queue, **options)


def make_celery(redis_url: str | None = None, settings: Settings | None = None, *,
                stores: Stores | None = None, patient: bool = True) -> Ricochet:
    """The Celery app over `settings` (default: the environment's, checked) and the
    Redis `redis_url` names (default: the settings'), with `stores` if given."""
    settings = settings or settings_or_exit()
    pools.keep_packed_in(settings.pool_cache)
    url, sentinel_options = failover.celery_redis(settings, redis_url or settings.redis_url or DEFAULT_REDIS_URL)
    app = Ricochet(settings, url, stores, patient)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        task_acks_late=True,
        task_ignore_result=True,  # every task's outcome is in the stores (jobs, packs, days); nothing reads results
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=QUEUES[0],
        result_expires=24 * 3600,
        broker_connection_retry_on_startup=True,
        # Queues are taken in the order a worker lists them (`priority`): interactive
        # work (solves, one puzzle, the daily) before packs, packs before analyses.
        # The visibility timeout outlasts the longest task (a queued solve's budget is
        # at most 600 s), so no running task is handed out twice; a dead worker's pack
        # chunks come back sooner through their heartbeats (ricochet.recover_chunks).
        broker_transport_options={"visibility_timeout": settings.visibility_timeout,
                                  "queue_order_strategy": "priority", **sentinel_options},
        result_backend_transport_options=sentinel_options,
        task_routes={spec.name: {"queue": spec.queue} for spec in TASKS.values()},
        # A sweep no worker took within its period is dropped when one takes it: the next does its work
        # (behind a worker busy with long searches they would otherwise run one after another, for nothing).
        beat_schedule={spec.name.removeprefix("ricochet.").replace("_", "-"): {"task": spec.name,
                                                                              "schedule": spec.every,
                                                                              "options": {"expires": spec.every}}
                       for spec in TASKS.values() if spec.every is not None},
    )
    return app


@functools.cache
def _worker_app() -> Ricochet:
    """The worker's and the beat's app: a bad variable stops them at their start, not a job."""
    app = make_celery()
    memory.budget_caches(app.settings.board_cache_mb)
    memory.limit_arenas(2)
    failover.hold_before_ack(app, app.settings)
    return app


def __getattr__(name: str) -> Any:  # `celery -A workers.app` asks for `app`; made on first use only
    if name in ("app", "celery_app"):
        return _worker_app()
    raise AttributeError(name)


@worker_init.connect
def _cap_searches(sender: Any = None, **_: Any) -> None:
    """A worker's searches within RICOCHET_JOB_STATE_MB (its processes fork after this)."""
    app = getattr(sender, "app", None)
    memory.cap_searches((app.settings if isinstance(app, Ricochet) else settings_or_exit()).job_state_mb)
