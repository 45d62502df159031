"""The use cases: one function per thing a client can ask for (solve a puzzle,
verify an answer, make a pack, read a pack, follow or cancel a job, ...),
called alike by the edges: the HTTP views (service/), the CLI (service/cli/)
and the Celery tasks (workers/tasks.py).  A use case takes what was already checked
where the request entered (a Puzzle, a loaded request) and a Context: the
stores, the budgets and limits in force, who is asking, and how to queue work.
It decides; it knows nothing of HTTP, and refuses with a Problem.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from solver.production.pools import Library
from workers.answers import Answers
from workers.messages import Message
from workers.stores import UNREACHABLE, Stores
from workers.stores.jobs import JobState

from .problems import Problem

__all__ = ["UNAVAILABLE", "Context", "JobState", "Problem", "held_by"]

# What a use case raises when the stores cannot be reached (an outage): a 503
# with Retry-After at the HTTP edge.  Named here so that no edge imports a store.
UNAVAILABLE = UNREACHABLE


class Send(Protocol):
    """How a use case queues a task (workers/app.py's send): Celery's options (countdown, ...) pass through."""

    def __call__(self, message: Message[Any], **options: Any) -> None: ...


def held_by(stores: Stores, replicas: int, milliseconds: int) -> int:
    """How many replicas hold every write this process made, waiting up to
    `milliseconds` for `replicas` of them (Redis WAIT); 0 with Redis away."""
    try:
        return stores.settle(replicas, milliseconds)
    except UNREACHABLE:
        return 0


@dataclass(frozen=True)
class Context:
    """What a use case may use.  `stores` is None without Redis (solving and
    verifying still work, queued work is refused).  `send(SPEC.of(payload))` queues
    a task (a workers.messages.TaskSpec) with its payload, checked first;
    `client` names the caller for quotas and Idempotency-Keys (its API key, else
    its `address`)."""

    stores: Stores | None
    pools: Library
    answers: Answers
    send: Send | None = None
    client: str = "local"
    address: str = ""  # the caller's address ("addr:..."), also when `client` is its API key
    job_budget: float = 300.0
    quotas: Mapping[str, int] = field(default_factory=dict)  # empty: no quotas
    max_queued: Mapping[str, int] = field(default_factory=dict)
    rating_prior: bool = True  # puzzles start rated from their optimal length, else at 1500

    def required_stores(self) -> Stores:
        if self.stores is None:
            raise Problem("unavailable", "queued work needs Redis: set REDIS_URL or run `ricochet serve`")
        return self.stores
