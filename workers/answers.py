"""Where a puzzle's answer comes from, written once for the views and the workers:
a settled answer kept in the store, else one search within a budget (its end
remembered either way), else, for the caller to queue, a longer search as a job.

A settled answer (optimal or unsolvable) is kept for SOLVE_TTL.  A search that
ran out of its budget (of time or memory) is remembered for an hour with the
bound it proved, so nobody repeats the same search meanwhile: the answer then says `timeout` at
once, and a longer budget (a job's) is what can settle it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any, Literal

from solver.model.moves import Round, candidates
from solver.model.puzzle import Puzzle
from solver.search.solution import Solution
from solver.search.solve import DEFAULT_MAX_DEPTH, DEFAULT_STATE_BUDGET, Cancel, solve

from .stores import Stores

SETTLED = ("optimal", "unsolvable")
RAN_OUT = ("timeout", "state_limit")  # remembered with the bound they proved, per budget

Source = Literal["store", "unsettled", "search"]


@dataclass(frozen=True)
class Answers:
    """Answers to puzzles for one kind of caller: `budget` is the seconds one
    search may take (a request's, or a job's); `timer` wraps each search (the
    service's solver-time metric); `threads`, how many threads a deep search's
    A* runs on (a job's may take more than one core); `state_budget`, the bytes
    its tables may take (a request's search is kept small: what needs more is
    a job's); `room`, shared by a process's requests, how many of their
    searches run at once (a search waits for room up to its budget; with none
    by then, it answers `timeout` unremembered, and the caller queues a job)."""

    stores: Stores | None
    budget: float
    timer: Callable[[], AbstractContextManager[Any]] = nullcontext
    threads: int = 1
    state_budget: int = DEFAULT_STATE_BUDGET
    room: threading.Semaphore | None = None

    def lookup(self, p: Puzzle) -> tuple[dict[str, Any], Source]:
        """The answer JSON (docs/formats.md, with the puzzle's code) and where it came
        from: the store; a search with this budget that ran out lately (not
        repeated: status timeout, with the bound it proved); or a search now."""
        if self.stores is not None:
            key = p.content_hash()
            kept = self.stores.answers.get(key)
            if kept is not None:
                return kept, "store"
            ended = self.stores.answers.unsettled(key, self.budget)
            if ended is not None:
                return ran_out(p, *ended), "unsettled"
        return self.search(p).to_json() | {"code": p.code()}, "search"

    def search(self, p: Puzzle, *, cancel: Cancel | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> Solution:
        """One search within the budget, remembered: a settled answer is kept, a
        run out of time is noted with its bound (a cancelled one is not)."""
        if self.room is not None and not self.room.acquire(timeout=self.budget):
            # no room in this process for another search within the budget: nothing proved, nothing kept
            return Solution("timeout", [], 1, Round(candidates(p), False, None))
        try:
            with self.timer():
                answer = solve(p, time_budget=self.budget, max_depth=max_depth, cancel=cancel, threads=self.threads,
                               state_budget=self.state_budget)
        finally:
            if self.room is not None:
                self.room.release()
        self.remember(p, answer)
        return answer

    def remember(self, p: Puzzle, answer: Solution) -> None:
        if self.stores is None:
            return
        key = p.content_hash()
        if answer.status in SETTLED:
            self.stores.answers.save(key, answer.to_json() | {"code": p.code()})
        elif answer.status in RAN_OUT:
            self.stores.answers.save_unsettled(key, self.budget, answer.lower_bound, answer.status)

    def adopt(self, p: Puzzle, answer: Solution) -> Solution:
        """The settled answer served for p from now on: one already kept, else
        `answer` (a generator's, say), kept now, so that every endpoint (a
        random puzzle's solution, its hints, a solve) shows one solution."""
        if self.stores is not None:
            kept = self.stores.answers.get(p.content_hash())
            if kept is not None and kept["status"] in SETTLED:
                return Solution.from_json(p, kept)
        self.remember(p, answer)
        return answer

    def settled(self, p: Puzzle) -> Solution | None:
        """The puzzle's settled answer (optimal or unsolvable), or None when it
        is not known within the budget."""
        answer, _ = self.lookup(p)
        return Solution.from_json(p, answer) if answer["status"] in SETTLED else None

    def optimum(self, p: Puzzle) -> tuple[int | None, bool]:
        """The optimal length and whether it is settled: what is known (a solved
        answer, or the optimum recorded when the puzzle was generated: daily
        puzzles, packs), else the lookup's."""
        if self.stores is not None:
            known = self.stores.answers.optimum(p.content_hash())
            if known is not None:
                return known, True
        answer, _ = self.lookup(p)
        return answer["length"], answer["status"] in SETTLED


def ran_out(p: Puzzle, lower_bound: int, status: str = "timeout") -> dict[str, Any]:
    """The answer of a search that ran out (of time, or of memory: `status`) having proved `lower_bound`."""
    return {"length": None, "moves": [], "status": status, "lower_bound": lower_bound,
            "message": f"no solution in {lower_bound - 1} moves or fewer", "code": p.code()}

