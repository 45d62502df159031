"""Job records (`job:<id>`), the job doing a piece of work now (`inflight:<kind>:<work>`),
the shared solves no worker has started yet (`jobs:waiting:solve`), the queued
solves each client started and that may still be open (`jobs:solving:<client>`),
and Idempotency-Keys (`idempotency:<client>:<key>`).

A job record keeps who asked for it (`askers`, each charged once) and who of
them still wants it (`wanting`): a shared job stops only when nobody wants it."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from .base import FORMAT, Client, WatchError, maybe_text, real, text, texts

if TYPE_CHECKING:
    from typing_extensions import Unpack

JOB_TTL = 7 * 24 * 3600      # job records: a week after their last change


class JobState(StrEnum):
    """A job's state (its record's `state`): open while pending or running,
    then settled for good as succeeded, failed or cancelled."""

    PENDING = "pending"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


OPEN = frozenset({JobState.PENDING, JobState.RUNNING})  # a record's state (a str) is looked up as it is
JOB_STATES = tuple(s.value for s in JobState)
IDEMPOTENCY_TTL = 24 * 3600
PENDING = "jobs:pending"  # pack jobs not yet started, by creation time
# Shared solves not yet started, by the time past which they are gone anyway (created + their claim's
# ttl): what a new solve waits behind.  The interactive queue's Celery list is not that count: the
# beat's sweeps wait in it too, and pile up behind a worker busy with long searches.
WAITING_SOLVES = "jobs:waiting:solve"


class Job(TypedDict):
    """A job record (`job:<id>`): what clients see of it (application.jobs.JobView), the
    request it was made from, who asked for it and who still wants it; a pool build's
    also its heartbeat, restarts and stage; a pack's its items made and failed."""
    v: int
    id: str
    kind: str
    state: str  # a JobState's value
    progress: float
    created: float
    started: float | None
    finished: float | None
    error: str | None
    result: dict[str, Any] | None  # the worker's JSON: a solve's, a pack's or a pool build's
    request: dict[str, Any]  # the request as workers.schemas loaded it (a pool build's: board, target ...)
    askers: list[str]
    wanting: list[str]
    heartbeat: NotRequired[float]
    restarts: NotRequired[int]
    stage: NotRequired[str]
    made: NotRequired[int]  # a pack's items made and failed so far
    failed: NotRequired[int]


class JobFields(TypedDict, total=False):
    """Fields of a job record to change (JobStore.update, change)."""
    state: str
    progress: float
    started: float | None
    finished: float | None
    error: str | None
    result: dict[str, Any] | None
    askers: list[str]
    wanting: list[str]
    heartbeat: float
    restarts: int
    stage: str
    made: int
    failed: int


def _members(rows: object) -> list[bytes]:
    """A sorted set's range read without scores: its members (redis-py types the reply
    with the WITHSCORES pairs too)."""
    return cast(list[bytes], rows)


def _job(raw: bytes | str) -> Job:
    """A stored job record (JSON, written by JobStore alone)."""
    return cast(Job, json.loads(raw))


class JobStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def create(self, kind: str, request: Mapping[str, Any], job_id: str | None = None,
               asker: str | None = None) -> Job:
        """A new pending job, asked for by `asker` (a client; None for the service's own work)."""
        job: Job = {"v": FORMAT, "id": job_id or uuid.uuid4().hex, "kind": kind, "state": JobState.PENDING,
                    "progress": 0.0, "created": time.time(), "started": None, "finished": None, "error": None,
                    "result": None, "request": dict(request), "askers": [asker] if asker else [],
                    "wanting": [asker] if asker else []}
        self.redis.set(f"job:{job['id']}", json.dumps(job), ex=JOB_TTL)
        if kind == "pack":  # until a worker starts it (application.packs.recover_pending)
            self.redis.zadd(PENDING, {job["id"]: job["created"]})
        return job

    def pending(self, older_than: float) -> list[str]:
        """Pack jobs created over `older_than` seconds ago that no worker has started (or
        has, since: the caller looks), oldest first."""
        return texts(_members(self.redis.zrangebyscore(PENDING, 0, time.time() - older_than, start=0, num=100)))

    def still_pending(self, job_id: str, again: bool) -> None:
        """Forget a job no longer pending, or (`again`: sent again now) look again later."""
        if again:
            self.redis.zadd(PENDING, {job_id: time.time()})
        else:
            self.redis.zrem(PENDING, job_id)

    def get(self, job_id: str) -> Job | None:
        raw = self.redis.get(f"job:{job_id}")
        return _job(raw) if raw is not None else None

    def shared(self, kind: str, work: str, request: dict[str, Any], ttl: float,
               asker: str | None = None) -> tuple[Job, bool]:
        """The pending or running job doing `work` (a content hash with its limits),
        or a new one asked for by `asker`; and whether it is new (then the caller
        queues it).  A client joins a job that is not new with `join`."""
        key = f"inflight:{kind}:{work}"
        for _ in range(3):
            current = maybe_text(self.redis.get(key))
            if current is not None:
                found = self.get(current)
                if found is not None and found["state"] in OPEN:
                    return found, False
                self.redis.delete(key)
            # first the record, then the claim: no one sees a claim without one
            job = self.create(kind, request, asker=asker)
            if self.redis.set(key, job["id"], nx=True, ex=max(1, int(ttl))):
                if kind == "solve":  # waiting until a worker starts it, or its claim lapses
                    with self.redis.pipeline(transaction=False) as pipe:
                        pipe.zadd(WAITING_SOLVES, {job["id"]: job["created"] + ttl})
                        pipe.expire(WAITING_SOLVES, max(1, int(ttl)))
                        pipe.execute()
                return job, True
            self.redis.delete(f"job:{job['id']}")
        return self.create(kind, request, asker=asker), True

    def waiting_solves(self) -> int:
        """Shared solves no worker has started yet (those whose claim lapsed forgotten)."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(WAITING_SOLVES, "-inf", time.time())
            pipe.zcard(WAITING_SOLVES)
            return int(pipe.execute()[1])

    def take_solve_place(self, client: str, job_id: str, ttl: float, most: int) -> tuple[bool, float]:
        """Count `job_id` (a queued solve just made) among the client's open solves
        unless it has `most` open already (waiting or running; settled ones and those
        whose claim lapsed no longer count): (True, 0), else (False, seconds until the
        first of them is over anyway, at its claim's end)."""
        key = f"jobs:solving:{client}"
        now = time.time()
        members = texts(_members(self.redis.zrangebyscore(key, now, "+inf")))
        records = self.redis.mget([f"job:{m}" for m in members]) if members else []
        settled = [m for m, raw in zip(members, records, strict=True)
                   if raw is None or _job(raw)["state"] not in OPEN]
        with self.redis.pipeline() as pipe:
            pipe.zremrangebyscore(key, "-inf", now)
            if settled:
                pipe.zrem(key, *settled)
            pipe.execute()
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    if pipe.zcard(key) >= most:
                        first = pipe.zrange(key, 0, 0, withscores=True)
                        pipe.reset()
                        return False, max(0.0, real(first[0][1]) - now) if first else 0.0
                    pipe.multi()
                    pipe.zadd(key, {job_id: now + ttl})
                    pipe.expire(key, max(1, int(ttl)))
                    pipe.execute()
                    return True, 0.0
                except WatchError:
                    continue

    def join(self, job_id: str, asker: str) -> Job | None:
        """`asker` asks for a job others asked for: it may follow and cancel it."""
        return self.change(job_id, lambda j: None if asker in j.get("askers", []) and asker in j.get("wanting", [])
                           else {"askers": sorted({*j.get("askers", []), asker}),
                                 "wanting": sorted({*j.get("wanting", []), asker})})

    def withdraw(self, job_id: str, asker: str) -> tuple[Job, bool] | None:
        """`asker` no longer wants the job: the job as it stands after that, and
        whether `asker` had asked for it (else nothing changed).  The job is
        cancelled when nobody who asked wants it any more (a settled job stays as it is)."""
        asked: list[bool] = []

        def without(job: Job) -> JobFields | None:
            asked[:] = [asker in job.get("askers", [])]
            if not asked[0]:
                return None
            wanting = [a for a in job.get("wanting", []) if a != asker]
            if wanting or job["state"] not in OPEN:
                return {"wanting": wanting}
            return {"wanting": wanting, "state": JobState.CANCELLED, "finished": time.time(),
                    "error": "cancelled by the client"}

        job = self.change(job_id, without)
        return None if job is None else (job, asked[0])

    def start(self, job_id: str) -> bool:
        """Mark a job running, unless it was cancelled (then False: do nothing)."""
        job = self.update(job_id, when=lambda j: j["state"] in OPEN, state=JobState.RUNNING,
                          started=time.time())
        return job is not None and job["state"] == JobState.RUNNING

    def finish(self, job_id: str, **fields: Unpack[JobFields]) -> Job | None:
        """Settle a job unless it was cancelled meanwhile."""
        return self.update(job_id, when=lambda j: j["state"] != JobState.CANCELLED, **fields)

    def cancel(self, job_id: str) -> Job | None:
        """Cancel a pending or running job (its workers stop within a second); a
        settled job stays as it is.  Returns the job as it stands."""
        return self.update(job_id, when=lambda j: j["state"] in OPEN, state=JobState.CANCELLED,
                           finished=time.time(), error="cancelled by the client")

    def update(self, job_id: str, when: Callable[[Job], bool] | None = None,
               **fields: Unpack[JobFields]) -> Job | None:
        """Change a job record atomically (optimistic locking against concurrent writers);
        with `when`, only if `when(job)` holds (else the job is returned unchanged).
        A cancelled job takes no more changes but through `when`."""

        def changed(job: Job) -> JobFields | None:
            allowed = when(job) if when is not None else job["state"] != JobState.CANCELLED
            return fields if allowed else None

        return self.change(job_id, changed)

    def change(self, job_id: str, fields_of: Callable[[Job], JobFields | None]) -> Job | None:
        """Change a job record atomically by the fields `fields_of(job)` gives
        (None: unchanged, the job returned as it is); None when there is no such job."""
        key = f"job:{job_id}"
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    if raw is None:
                        pipe.reset()
                        return None
                    job = _job(raw)
                    fields = fields_of(job)
                    if fields is None:
                        pipe.reset()
                        return job
                    job = cast(Job, {**job, **fields})
                    pipe.multi()
                    pipe.set(key, json.dumps(job), ex=JOB_TTL)
                    if job["kind"] == "solve" and fields.get("state", JobState.PENDING) != JobState.PENDING:
                        pipe.zrem(WAITING_SOLVES, job_id)  # started, settled or cancelled: waits no more
                    pipe.execute()
                    return job
                except WatchError:
                    continue

    def for_idempotency_key(self, idempotency_key: str, job_id: str, fingerprint: str) -> tuple[str, bool]:
        """Register `job_id` under an Idempotency-Key unless a job is there already:
        the job the key names (the first registered under it), and whether the
        request now is the same as the first (by its fingerprint)."""
        key = f"idempotency:{idempotency_key}"
        value = json.dumps({"job": job_id, "fingerprint": fingerprint})
        if self.redis.set(key, value, nx=True, ex=IDEMPOTENCY_TTL):
            return job_id, True
        first = self.named_by(idempotency_key)
        if first is None:  # expired between the two calls: register again
            return self.for_idempotency_key(idempotency_key, job_id, fingerprint)
        return first[0], first[1] == fingerprint

    def named_by(self, idempotency_key: str) -> tuple[str, str] | None:
        """The job an Idempotency-Key names and its request's fingerprint, if any."""
        raw = self.redis.get(f"idempotency:{idempotency_key}")
        if raw is None:
            return None
        first = json.loads(raw)
        return text(first["job"]), text(first["fingerprint"])
