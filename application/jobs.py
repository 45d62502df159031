"""Queued work: admitting it, charging it to the client's quota, and following
or cancelling the job it makes (a solve's or a pack's alike)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from workers.messages import INTERACTIVE_QUEUE, Message
from workers.stores.jobs import Job, JobState
from workers.stores.quotas import WINDOW

from . import Context
from .problems import Problem, echo

MAX_ID = 64  # job ids are 32 hex digits; anything much longer is not worth a lookup


def admit(ctx: Context, queue: str) -> None:
    """Refuse new queued work while the queue is full: 503 with Retry-After, rather
    than an unbounded backlog that nobody's request would live to see.  The
    interactive queue counts the solves no worker has started (the beat's sweeps
    wait in its list too, behind a worker busy with long searches, and are not
    clients' work); the pack queue, the tasks in its list."""
    limit = ctx.max_queued.get(queue)
    if limit is None:
        return
    stores = ctx.required_stores()
    if queue == INTERACTIVE_QUEUE:
        if stores.jobs.waiting_solves() >= limit:
            raise Problem("unavailable", f"the {queue} queue is full ({limit} solves waiting for a worker); "
                          "retry later", headers={"Retry-After": "30"})
    elif stores.queued(queue) >= limit:
        raise Problem("unavailable", f"the {queue} queue is full ({limit} tasks waiting); retry later",
                      headers={"Retry-After": "30"})


UNITS = {"solve": "worker-seconds", "pack": "puzzle-moves"}  # what each quota counts
QUOTA_WINDOW = WINDOW  # the seconds quotas count over: an hour, from the hour


def charge(ctx: Context, kind: str, cost: int) -> dict[str, str]:
    """Charge queued work to the client's quota for this hour: `solve` in
    worker-seconds (a queued solve's whole budget), `pack` in puzzle-moves
    (count x max_length).  Work that does not fit in what is left is refused
    (429 with Retry-After until the hour turns) and charged nothing.  Returns
    the headers that announce what is left; a refusal carries the same headers,
    and its problem the same numbers (`quota`, `remaining`, `reset`)."""
    limit = ctx.quotas.get(kind)
    if limit is None or ctx.stores is None:
        return {}
    done = ctx.stores.quotas.charge(kind, ctx.client, cost, limit)
    left = max(0, limit - done.used)
    headers = {"X-Quota-Kind": kind, "X-Quota-Limit": str(limit), "X-Quota-Remaining": str(left),
               "X-Quota-Reset": str(done.reset)}
    if not done.charged:
        unit = UNITS[kind]
        if cost > limit:  # never fits, whatever is left
            fix = (f"a pack fits in at most {limit} {unit}: ask for fewer puzzles or a shorter max_length"
                   if kind == "pack" else "no queued solve fits in this quota (ricochet keys create --quota-solve)")
        else:
            fix = (f"ask for at most {left} {unit}, or " if kind == "pack" else "") + f"retry after {done.reset} s"
        raise Problem("quota-exceeded", f"this work ({cost} {unit}) is over what is left of your quota of "
                      f"{limit} {unit} an hour: {left} left, the hour turns in {done.reset} s; {fix}",
                      headers={**headers, "Retry-After": str(done.reset)}, quota=kind, remaining=left,
                      reset=done.reset, **{"violated-policies": [kind]})
    return headers


class JobView(TypedDict):
    """A job as clients see it: the keys of service/shapes.py's Job, typed (a misnamed key fails mypy)."""
    id: str
    kind: str
    state: str
    progress: float
    created: float
    started: float | None
    finished: float | None
    error: str | None
    result: dict[str, Any] | None
    pack_id: NotRequired[str]  # once a pack job has succeeded


def view(job: Job) -> JobView:
    """A job as clients see it (GET /v1/jobs/{id})."""
    out = JobView(id=job["id"], kind=job["kind"], state=job["state"], progress=job["progress"],
                  created=job["created"], started=job["started"], finished=job["finished"], error=job["error"],
                  result=job["result"])
    if job["kind"] == "pack" and job["state"] == JobState.SUCCEEDED:
        out["pack_id"] = job["id"]
    return out


def get(ctx: Context, job_id: str) -> Job:
    found = ctx.stores.jobs.get(job_id) if ctx.stores is not None and len(job_id) <= MAX_ID else None
    if found is None:
        raise Problem("not-found", f"no job {echo(job_id)!r}: jobs are kept for a week")
    return found


def cancel(ctx: Context, job_id: str) -> Job:
    """The client no longer wants a job it asked for: a pending or running job
    that nobody else who asked wants is cancelled (its workers stop within about
    a second); a settled job stays as it is, so cancelling twice is harmless.
    Another client's job is refused (403): only those who asked may cancel it."""
    found = ctx.required_stores().jobs.withdraw(job_id, ctx.client) if len(job_id) <= MAX_ID else None
    if found is None:
        raise Problem("not-found", f"no job {echo(job_id)!r}: jobs are kept for a week")
    job, asked = found
    if not asked:
        raise Problem("forbidden", "only a client that asked for this job may cancel it (by its API key, "
                      "else its address)")
    return job


def send(ctx: Context, message: Message[Any]) -> None:
    """Queue a task with its payload (`TaskSpec.of`: checked against its TaskSpec before it is queued)."""
    if ctx.send is None:
        raise Problem("unavailable", "no worker queue is configured: set REDIS_URL or run `ricochet serve`")
    ctx.send(message)
