"""The use cases: one function per thing a client can ask for (solve a puzzle,
verify an answer, make a pack, read a pack, follow or cancel a job, ...),
called alike by the HTTP views (service/), the CLI (service/cli/) and the
Celery tasks (workers/tasks.py).  A use case takes what was already checked
where the request entered (a Puzzle, a loaded request) and a Context: the
stores, the budgets and limits in force, who is asking, and how to queue work.
It decides; it knows nothing of HTTP, and refuses with a Problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from solver.production.pools import Library
from workers.answers import Answers
from workers.stores import Stores

from .problems import Problem

__all__ = ["Context", "Problem"]


@dataclass(frozen=True)
class Context:
    """What a use case may use.  `stores` is None without Redis (solving and
    verifying still work, queued work is refused).  `send(task, args)` queues a
    task by name; `client` names the caller for quotas and Idempotency-Keys."""

    stores: Stores | None
    pools: Library
    answers: Answers
    send: Callable[[str, list[Any]], None] | None = None
    client: str = "local"
    job_budget: float = 300.0
    quotas: Mapping[str, int] = field(default_factory=dict)  # empty: no quotas
    max_queued: Mapping[str, int] = field(default_factory=dict)
    rating_prior: bool = True  # puzzles start rated from their optimal length, else at 1500

    def required_stores(self) -> Stores:
        if self.stores is None:
            raise Problem("unavailable", "queued work needs Redis: set REDIS_URL or run `ricochet serve`")
        return self.stores
