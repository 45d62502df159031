"""The Celery tasks: an edge, as the HTTP views and the commands are.  Each task
checks its payload against its TaskSpec (workers/messages.py) before any work
starts, builds the use cases' Context from the app it runs on (its settings and
stores, given by the factory: workers/app.py) and calls one use case.  The
policy (when a job succeeds or fails, what a pack plans, which pool grows next)
is the use cases'; nothing here touches a store."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task
from celery.signals import task_postrun, task_received

from application import Context, catalogue, daily, packs, pools, solving
from application.running import refuse
from solver.errors import InvalidInput

from . import memory
from .answers import Answers
from .app import Ricochet
from .messages import (
    CATALOGUE_FILL,
    CATALOGUE_GROW,
    CATALOGUE_LIFT,
    GROW_POOLS,
    PACK,
    PACK_CHUNK,
    POOL_BUILD,
    PRECOMPUTE_DAILY,
    RECOVER_CHUNKS,
    SOLVE,
    TaskSpec,
)

log = logging.getLogger(__name__)


def context(app: Ricochet) -> Context:
    """The use cases' Context on a worker: the app's stores, its pools, and the app as the queue."""
    return Context(stores=app.stores, pools=app.library, answers=Answers(app.stores, app.settings.solve_time_budget),
                   send=app.send)


def task(spec: TaskSpec, **options: Any) -> Callable[[Callable[..., Any]], Task]:
    """`run(app, **payload)` as the Celery task of `spec`, on every app the factory
    makes.  A payload that does not hold is refused before any work: the job it
    names fails with the reason."""
    def decorate(run: Callable[..., Any]) -> Task:
        def edge(self: Task, *args: Any, **kwargs: Any) -> Any:
            try:
                payload = spec.payload(args, kwargs)
            except InvalidInput as e:
                log.warning("%s refused: %s", spec.name, e)
                return refuse(context(self.app), args[0] if args else kwargs.get("job_id"), str(e))
            return run(self.app, **payload)

        edge.__name__, edge.__doc__ = run.__name__, run.__doc__
        return shared_task(name=spec.name, bind=True, typing=False, **options)(edge)
    return decorate


@task(SOLVE, acks_late=True)
def solve_task(app: Ricochet, job_id: str, puzzle: dict[str, Any], time_budget: float,
               max_depth: int) -> dict[str, Any]:
    return solving.search_job(context(app), job_id, puzzle, time_budget, max_depth, threads=app.settings.job_threads)


@task(PRECOMPUTE_DAILY)
def precompute_daily(app: Ricochet, days_ahead: int) -> list[str]:
    return daily.precompute(context(app), days_ahead)


@task(POOL_BUILD, acks_late=False)
def pool_build(app: Ricochet, job_id: str) -> dict[str, Any]:
    """Acknowledged at once: an analysis outlasts the broker's visibility timeout,
    so a lost worker is noticed by its silent heartbeat instead (grow_pools
    queues it again)."""
    return pools.build(context(app), job_id, threads=app.settings.pool_threads)


@task(GROW_POOLS)
def grow_pools(app: Ricochet, silence: float) -> str | None:
    return pools.grow(context(app), app.settings.pools, silence)


@task(PACK, acks_late=True)
def pack_task(app: Ricochet, job_id: str) -> int:
    return packs.plan(context(app), job_id)


@task(PACK_CHUNK, acks_late=True)
def pack_chunk(app: Ricochet, job_id: str, items: list[list[int]]) -> int:
    return packs.make_chunk(context(app), job_id, items)


@task(RECOVER_CHUNKS)
def recover_chunks(app: Ricochet, silence: float) -> list[str]:
    return packs.recover_chunks(context(app), silence)


@task(CATALOGUE_GROW, acks_late=True)
def catalogue_grow(app: Ricochet, codes: list[str], seconds: float, part: list[int] | None,
                   discover: list[str] | None) -> dict[str, Any]:
    return catalogue.grow(context(app), codes, seconds, part, discover)


@task(CATALOGUE_FILL, acks_late=True)
def catalogue_fill(app: Ricochet, items: list[list[Any]], seconds: float, enough: int | None) -> dict[str, Any]:
    return catalogue.fill(context(app), items, seconds, enough)


@task(CATALOGUE_LIFT, acks_late=True)
def catalogue_lift(app: Ricochet, family: str, spec: str, seconds: float) -> dict[str, Any]:
    return catalogue.lift(context(app), family, spec, seconds)


@task_postrun.connect
def hand_back_memory(**_: Any) -> None:
    """After each task, what its search freed goes back to the system (workers/memory.py)."""
    memory.hand_back()


@task_received.connect
def chunk_received(request: Any = None, **_: Any) -> None:
    """A pack chunk's first heartbeat, when the worker takes the message: a worker
    that dies before the chunk starts leaves a silent chunk that recover_chunks
    sends again, instead of a message the broker hands out only after its
    visibility timeout."""
    if request is None or request.name != PACK_CHUNK.name:
        return
    try:
        payload = PACK_CHUNK.payload(request.args, request.kwargs or {})
        packs.chunk_received(context(request.task.app), payload["job_id"], payload["items"])
    except Exception:  # a heartbeat must never cost the worker its message
        log.warning("no heartbeat for a received pack chunk", exc_info=True)
