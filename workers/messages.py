"""The tasks' messages, declared once: each task's name, its payload's schema,
its queue and, for the beat's, how often it runs.  The sender (a use case,
through `Context.send`, or the beat) and the task (workers/tasks.py) both check
a payload against its `TaskSpec`: a bad one is refused where it is sent
(`InvalidInput`, before anything is queued) and again where it is run (a job
it names fails with the reason, before any work starts).

A message carries the payload's fields positionally, in the schema's order, so
`celery call` and older senders stay readable: `ricochet.solve` is
[job_id, puzzle, time_budget, max_depth]."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar

from marshmallow import RAISE, Schema, fields, validate

from solver.errors import InvalidInput
from solver.formats.pdf import GRIDS, PAPERS
from solver.play.daily import DAYS_AHEAD

from .schemas import MAX_TIME_BUDGET, StrictInt, load

INTERACTIVE_QUEUE = "ricochet"  # solves, single puzzles, the daily puzzle: first
PACK_QUEUE = "packs"            # bulk packs: after interactive work
ANALYSIS_QUEUE = "analysis"     # pool builds (4 GiB each) and the catalogue's growth: their own workers
# Webhook deliveries, tests and retries: a worker of their own (threads: they wait on receivers, not the CPU),
# so that a receiver that never answers holds none of the slots solves and packs run in.
WEBHOOK_QUEUE = "webhooks"
QUEUES = (INTERACTIVE_QUEUE, PACK_QUEUE, ANALYSIS_QUEUE, WEBHOOK_QUEUE)

POOL_HEARTBEAT_TIMEOUT = 600.0  # seconds without progress after which a pool build counts as lost
# A started pack chunk silent this long (four heartbeats missed: application/running.BEAT_EVERY) lost its
# worker: the beat sends it again.  Sending a live chunk again costs only work (a chunk done twice writes the
# same items); waiting costs the pack's client: with 60 s, a worker host lost mid-pack held its pack 72 s.
CHUNK_SILENCE = 20.0
PENDING_SILENCE = 30.0  # a pack (or chunk) unreceived this long, its queue empty: its message was lost
DEFAULT_DEPTH = 64  # moves deep a queued solve searches unless its payload says otherwise
MAX_SECONDS = 24 * 3600.0  # the longest a catalogue task is asked to run


class _Payload(Schema):
    class Meta:
        unknown = RAISE
        ordered = True


def _seconds(most: float, default: float | None = None) -> fields.Float:
    options: dict[str, Any] = {"required": True} if default is None else {"load_default": default}
    return fields.Float(validate=validate.Range(0, most, min_inclusive=False,
                                                error=f"must be a number of seconds from 0 to {most:g}"),
                        error_messages={"invalid": "must be a number of seconds"}, **options)


def _job_id(**options: Any) -> fields.String:
    return fields.String(required=True, validate=validate.Length(1, 64, error="must be a job id (1 to 64 characters)"),
                         **options)


class SolveTask(_Payload):
    """ricochet.solve: a job id, a docs/formats.md puzzle, a time budget, a depth budget."""

    job_id = _job_id()
    puzzle = fields.Dict(required=True, error_messages={"invalid": "must be a docs/formats.md puzzle"})
    time_budget = _seconds(MAX_TIME_BUDGET)
    max_depth = StrictInt(load_default=DEFAULT_DEPTH,
                          validate=validate.Range(1, 254, error="must be an integer from 1 to 254"))


class JobTask(_Payload):
    """ricochet.pack, ricochet.pool_build: the job whose stored request says what to do."""

    job_id = _job_id()


class ChunkTask(_Payload):
    """ricochet.pack_chunk: a pack's job and some of its items, each [index, length]."""

    job_id = _job_id()
    items = fields.List(fields.List(StrictInt(), validate=validate.Length(equal=2)), required=True,
                        validate=validate.Length(min=1, error="must hold at least one [index, length]"),
                        error_messages={"invalid": "must be a list of [index, length]"})


class DailyTask(_Payload):
    """ricochet.precompute_daily: how many days ahead of today to store."""

    days_ahead = StrictInt(load_default=DAYS_AHEAD, validate=validate.Range(0, 366, error="must be from 0 to 366"))


class PoolSweep(_Payload):
    """ricochet.grow_pools: how long a pool build's heartbeat may be silent before it counts as lost."""

    silence = _seconds(MAX_SECONDS, default=POOL_HEARTBEAT_TIMEOUT)


class ChunkSweep(_Payload):
    """ricochet.recover_chunks: how long a pack chunk may be silent before it counts as lost."""

    silence = _seconds(MAX_SECONDS, default=CHUNK_SILENCE)


class PendingSweep(_Payload):
    """ricochet.recover_pending: how long a pack, or a chunk, may wait unreceived (its queue empty)."""

    silence = _seconds(MAX_SECONDS, default=PENDING_SILENCE)


class GrowTask(_Payload):
    """ricochet.catalogue_grow: long puzzles' codes, seconds, a share (k, n) and families to screen."""

    codes = fields.List(fields.String(), required=True)
    seconds = _seconds(MAX_SECONDS)
    part = fields.List(StrictInt(), validate=validate.Length(equal=2), load_default=None, allow_none=True)
    discover = fields.List(fields.String(), load_default=None, allow_none=True)


class FillTask(_Payload):
    """ricochet.catalogue_fill: one pair's known puzzles ([code, found JSON]), seconds, how many are enough."""

    items = fields.List(fields.List(fields.Raw(), validate=validate.Length(equal=2)), required=True)
    seconds = _seconds(MAX_SECONDS)
    enough = StrictInt(load_default=None, allow_none=True, validate=validate.Range(1, 10_000))


class LiftTask(_Payload):
    """ricochet.catalogue_lift: one pair (a family and a board spec) lifted for at most `seconds`."""

    family = fields.String(required=True)
    spec = fields.String(required=True)
    seconds = _seconds(MAX_SECONDS)


class ThemesPassTask(_Payload):
    """ricochet.themes_pass: how the pool rows are read (solver.production.library) and for how long."""

    mode = fields.String(required=True, validate=validate.OneOf(["cheap", "targeted", "thorough"],
                                                                error="must be cheap, targeted or thorough"))
    seconds = _seconds(MAX_SECONDS)


class DeliverTask(_Payload):
    """ricochet.webhook_deliver: one attempt of one delivery (workers/webhooks.py)."""

    hook_id = fields.String(required=True, validate=validate.Length(1, 64))
    message_id = fields.String(required=True, validate=validate.Length(1, 64))


class BookTask(_Payload):
    """ricochet.book: a pack's book to make and keep under `key` (what it shows), with its options."""

    key = fields.String(required=True, validate=validate.Length(64, 64, error="must be a book's key (64 characters)"))
    pack_id = _job_id()
    paper = fields.String(required=True, validate=validate.OneOf(list(PAPERS), error="must be a4 or letter"))
    per_page = StrictInt(required=True, validate=validate.OneOf(list(GRIDS), error="must be one of "
                                                                + ", ".join(map(str, GRIDS))))
    solutions = fields.Boolean(required=True)


class WebhookSweep(_Payload):
    """ricochet.webhook_sweep: the beat's; no payload."""


# Each payload as a sender writes it, for the type checker: a misnamed or missing key in a use case's
# `jobs.send(ctx, SOLVE.of({...}))` fails `make lint`, as a wrong one fails the schema at run time
# (tests/test_types.py holds each to its schema's fields).

class SolvePayload(TypedDict):
    job_id: str
    puzzle: Mapping[str, object]
    time_budget: float
    max_depth: NotRequired[int]


class JobPayload(TypedDict):
    job_id: str


class ChunkPayload(TypedDict):
    job_id: str
    items: Sequence[Sequence[int]]


class DailyPayload(TypedDict):
    days_ahead: NotRequired[int]


class SweepPayload(TypedDict):
    silence: NotRequired[float]


class GrowPayload(TypedDict):
    codes: Sequence[str]
    seconds: float
    part: NotRequired[Sequence[int] | None]
    discover: NotRequired[Sequence[str] | None]


class FillPayload(TypedDict):
    items: Sequence[Sequence[object]]
    seconds: float
    enough: NotRequired[int | None]


class LiftPayload(TypedDict):
    family: str
    spec: str
    seconds: float


class ThemesPassPayload(TypedDict):
    mode: Literal["cheap", "targeted", "thorough"]
    seconds: float


class DeliverPayload(TypedDict):
    hook_id: str
    message_id: str


class BookPayload(TypedDict):
    key: str
    pack_id: str
    paper: str
    per_page: int
    solutions: bool


class NoPayload(TypedDict):
    pass


P = TypeVar("P", bound=Mapping[str, object])


@dataclass(frozen=True)
class TaskSpec(Generic[P]):
    """One task's message: its name, the schema of its payload (and the payload's
    type, as senders write it), its queue, and (a beat's task) every how many
    seconds the beat sends it."""

    name: str
    schema: type[Schema]
    payload_type: type[P]
    queue: str = INTERACTIVE_QUEUE
    every: float | None = None

    def of(self, payload: P) -> Message[P]:
        """This task with `payload`, to send (`Context.send`, `Ricochet.send`): the type
        checker holds the payload to this task's keys (a literal's misnamed key fails
        `make lint`), the schema to its values when it is sent."""
        return Message(self, payload)

    @functools.cached_property
    def _loader(self) -> Schema:  # one instance: schemas are stateless
        return self.schema()

    def check(self, payload: Mapping[str, object]) -> dict[str, Any]:
        """The payload loaded (defaults filled in); InvalidInput names a bad field."""
        return load(self._loader, dict(payload))

    def message(self, payload: P) -> list[Any]:
        """The message's arguments for a payload, checked: what a sender queues."""
        checked = self.check(payload)
        return [checked[name] for name in self._loader.fields]

    def payload(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """A received message's payload, checked: what a task runs on."""
        names = list(self._loader.fields)
        if len(args) > len(names):
            raise InvalidInput("", f"{self.name} takes at most {len(names)} arguments ({', '.join(names)}); "
                               f"got {len(args)}")
        return self.check({**dict(zip(names, args, strict=False)), **kwargs})


@dataclass(frozen=True)
class Message(Generic[P]):
    """A task and its payload, as a sender hands them to the queue (`TaskSpec.of`)."""

    spec: TaskSpec[P]
    payload: P


SOLVE = TaskSpec("ricochet.solve", SolveTask, SolvePayload)
PACK = TaskSpec("ricochet.pack", JobTask, JobPayload, PACK_QUEUE)
PACK_CHUNK = TaskSpec("ricochet.pack_chunk", ChunkTask, ChunkPayload, PACK_QUEUE)
# A pool build takes 4 GiB: its workers take one at a time.
POOL_BUILD = TaskSpec("ricochet.pool_build", JobTask, JobPayload, ANALYSIS_QUEUE)
PRECOMPUTE_DAILY = TaskSpec("ricochet.precompute_daily", DailyTask, DailyPayload, every=3600.0)
GROW_POOLS = TaskSpec("ricochet.grow_pools", PoolSweep, SweepPayload, every=300.0)
RECOVER_CHUNKS = TaskSpec("ricochet.recover_chunks", ChunkSweep, SweepPayload, every=10.0)
RECOVER_PENDING = TaskSpec("ricochet.recover_pending", PendingSweep, SweepPayload, every=20.0)
CATALOGUE_GROW = TaskSpec("ricochet.catalogue_grow", GrowTask, GrowPayload, ANALYSIS_QUEUE)
CATALOGUE_FILL = TaskSpec("ricochet.catalogue_fill", FillTask, FillPayload, ANALYSIS_QUEUE)
CATALOGUE_LIFT = TaskSpec("ricochet.catalogue_lift", LiftTask, LiftPayload, ANALYSIS_QUEUE)
THEMES_PASS = TaskSpec("ricochet.themes_pass", ThemesPassTask, ThemesPassPayload, ANALYSIS_QUEUE)
# A pack's book (seconds of CPU for a big one): made by a pack worker, never in a web process.
BOOK = TaskSpec("ricochet.book", BookTask, BookPayload, PACK_QUEUE)

WEBHOOK_DELIVER = TaskSpec("ricochet.webhook_deliver", DeliverTask, DeliverPayload, WEBHOOK_QUEUE)
# The beat's sweep: a lost attempt waits about this long.
WEBHOOK_SWEEP = TaskSpec("ricochet.webhook_sweep", WebhookSweep, NoPayload, WEBHOOK_QUEUE, every=5.0)

TASKS = {spec.name: spec for spec in (SOLVE, PACK, PACK_CHUNK, POOL_BUILD, PRECOMPUTE_DAILY, GROW_POOLS,
                                      RECOVER_CHUNKS, RECOVER_PENDING, CATALOGUE_GROW, CATALOGUE_FILL, CATALOGUE_LIFT,
                                      THEMES_PASS, WEBHOOK_DELIVER, WEBHOOK_SWEEP, BOOK)}
