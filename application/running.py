"""A job while a worker runs it: its cancellation watched, its heartbeat, and
the refusal of a task whose payload does not hold (the task's edge checks it,
this records why on the job)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from solver.search.solve import Cancel
from workers.stores import Stores
from workers.stores.jobs import JobState

from . import Context

BEAT_EVERY = 5.0  # seconds between a running chunk's heartbeats


@contextmanager
def watching(stores: Stores, job_id: str, every: float = 0.5,
             beat: Callable[[], None] | None = None) -> Iterator[Cancel]:
    """A Cancel that is set, within `every` seconds, once the job is cancelled
    (DELETE /v1/jobs/{id}): searches poll it and stop.  `beat`, if given, is
    called every BEAT_EVERY seconds meanwhile: the work's heartbeat."""
    cancel, done = Cancel(), threading.Event()

    def poll() -> None:
        last_beat = 0.0
        while not done.wait(every):
            try:
                if beat is not None and time.monotonic() - last_beat >= BEAT_EVERY:
                    beat()
                    last_beat = time.monotonic()
                job = stores.jobs.get(job_id)
            except Exception:  # Redis away for a moment: ask again next time
                continue
            if job is None or job["state"] == JobState.CANCELLED:
                cancel.set()
                return

    thread = threading.Thread(target=poll, name=f"cancel-{job_id}", daemon=True)
    thread.start()
    try:
        yield cancel
    finally:
        done.set()


def refuse(ctx: Context, job_id: object, reason: str) -> dict[str, str]:
    """A task's payload refused: the job it names (if it names one) fails with
    the reason, before any work starts; the reason is the task's result."""
    stores = ctx.required_stores()
    if isinstance(job_id, str) and 0 < len(job_id) <= 64 and stores.jobs.get(job_id) is not None:
        stores.jobs.update(job_id, state=JobState.FAILED, finished=time.time(), error=reason)
    return {"error": reason}
