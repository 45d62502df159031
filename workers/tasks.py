"""The Celery tasks: an edge, as the HTTP views and the commands are.  Each task
checks its payload against its TaskSpec (workers/messages.py) before any work
starts, builds the use cases' Context from the app it runs on (its settings and
stores, given by the factory: workers/app.py) and calls one use case.  The
policy (when a job succeeds or fails, what a pack plans, which pool grows next)
is the use cases'; nothing here touches a store."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task
from celery.signals import task_postrun, task_received, worker_ready

from application import Context, books, catalogue, daily, packs, pools, solving, webhooks
from application.running import refuse
from solver.errors import InvalidInput

from . import memory
from .answers import Answers
from .app import Ricochet
from .messages import (
    BOOK,
    CATALOGUE_FILL,
    CATALOGUE_GROW,
    CATALOGUE_LIFT,
    GROW_POOLS,
    PACK,
    PACK_CHUNK,
    POOL_BUILD,
    PRECOMPUTE_DAILY,
    RECOVER_CHUNKS,
    RECOVER_PENDING,
    SOLVE,
    THEMES_PASS,
    WEBHOOK_DELIVER,
    WEBHOOK_SWEEP,
    TaskSpec,
)
from .webhooks import Policy

log = logging.getLogger(__name__)


def context(app: Ricochet) -> Context:
    """The use cases' Context on a worker: the app's stores, its pools, the app as the
    queue, and each client's share of the pack queue."""
    return Context(stores=app.stores, pools=app.library, answers=Answers(app.stores, app.settings.solve_time_budget),
                   send=app.send, max_queued={packs.CHUNKS_PER_CLIENT: app.settings.queued_chunks_per_client})


def task(spec: TaskSpec[Any], **options: Any) -> Callable[[Callable[..., Any]], Task]:
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
def pool_build(app: Ricochet, job_id: str) -> pools.Built | pools.NotBuilt:
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


@task(BOOK)
def book_task(app: Ricochet, key: str, pack_id: str, paper: str, per_page: int, solutions: bool) -> int:
    return books.make_kept(context(app), key, pack_id, paper, per_page, solutions)


@task(RECOVER_CHUNKS)
def recover_chunks(app: Ricochet, silence: float) -> list[str]:
    return packs.recover_chunks(context(app), silence)


@task(RECOVER_PENDING)
def recover_pending(app: Ricochet, silence: float) -> list[str]:
    return packs.recover_pending(context(app), silence)


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


@task(THEMES_PASS, acks_late=True)
def themes_pass(app: Ricochet, mode: str, seconds: float) -> dict[str, int]:
    return catalogue.themes_pass(context(app), mode, seconds)


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


# Webhooks (application/webhooks.py): one attempt of a delivery, which sends itself
# again with a countdown when the next is soon; the beat's sweep (and each worker
# as it starts) sends every delivery due and announces what a lost worker left
# unannounced; a job's event as soon as the task that settled it returns.
JOB_TASKS = frozenset({SOLVE.name, PACK.name, PACK_CHUNK.name})


@task(WEBHOOK_DELIVER, acks_late=True)
def deliver(app: Ricochet, hook_id: str, message_id: str) -> float | None:
    return webhooks.deliver(context(app), hook_id, message_id, Policy.of(app.settings),
                            app.settings.visibility_timeout / 2)


@task(WEBHOOK_SWEEP)
def sweep(app: Ricochet) -> int:
    return webhooks.sweep(context(app), dt.datetime.now(dt.UTC).date())


def _job_id(args: Any, kwargs: Any) -> str | None:
    """The job a job task works for: its first argument, or `job_id` (a payload's)."""
    first = (args or [None])[0] if not (kwargs or {}).get("job_id") else kwargs["job_id"]
    if isinstance(first, dict):
        first = first.get("job_id")
    return first if isinstance(first, str) else None


@task_postrun.connect
def announce_settled(task: Any = None, args: Any = None, kwargs: Any = None, **_: Any) -> None:
    if task is None or task.name not in JOB_TASKS:
        return
    job_id = _job_id(args, kwargs)
    if job_id is None or not isinstance(task.app, Ricochet):
        return
    try:
        webhooks.announce_settled(context(task.app), job_id)
    except Exception:  # the sweep announces it instead: a task's end must not fail for this
        log.warning("could not announce job %s's event now", job_id, exc_info=True)


@worker_ready.connect
def resume(sender: Any = None, **_: Any) -> None:
    """A worker that starts resumes what was pending (a worker killed mid-delivery)."""
    app = getattr(sender, "app", None)
    if not isinstance(app, Ricochet):
        return
    try:
        app.send(WEBHOOK_SWEEP.of({}))
    except Exception:
        log.warning("could not queue the webhook sweep", exc_info=True)
