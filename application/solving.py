"""Solving a puzzle and judging a player's answer."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, cast

from solver.errors import InvalidInput
from solver.model.moves import check
from solver.model.puzzle import Move, Puzzle
from workers.answers import RAN_OUT, Answers, Source, ran_out
from workers.messages import SOLVE
from workers.stores.jobs import Job, JobState

from . import Context, jobs
from .problems import Problem
from .ratings.finisher import Verdict
from .running import refuse, watching


@dataclass(frozen=True)
class Solved:
    answer: dict[str, Any]  # docs/formats.md answer, with the puzzle's code
    source: Source


@dataclass(frozen=True)
class Queued:
    job: Job
    quota: dict[str, str] = field(default_factory=dict)  # what is left of the client's quota


def solve(ctx: Context, p: Puzzle) -> Solved | Queued:
    """The answer within the request's budget, or, when the search needs longer
    and there is a queue, a job that searches for the job budget.  Identical work
    in flight (same puzzle, same budget) shares one job, charged once to each
client that asks for it (any of them may follow it); a job's
    search that ran out lately (of time or memory) is answered as it ended."""
    answer, source = ctx.answers.lookup(p)
    if answer["status"] not in RAN_OUT or ctx.stores is None:  # out of the request's time or memory: a job
        return Solved(answer, source)
    budget = ctx.job_budget
    ended = ctx.stores.answers.unsettled(p.content_hash(), budget)
    if ended is not None:  # a job's search ran out lately: it would again, and be charged again
        return Solved(ran_out(p, *ended), "unsettled")
    jobs.admit(ctx, "ricochet")
    job, fresh = ctx.stores.jobs.shared("solve", f"{p.content_hash()}:{budget:g}", {"puzzle": p.to_json()},
                                       ttl=budget + 60, asker=ctx.client)
    if not fresh:  # another client's job: this one is charged once, when it first asks
        if ctx.client in job.get("askers", []) and ctx.client in job.get("wanting", []):
            return Queued(job)
        quota = {} if ctx.client in job.get("askers", []) else jobs.charge(ctx, "solve", int(budget))
        return Queued(ctx.stores.jobs.join(job["id"], ctx.client) or job, quota)
    try:
        _take_place(ctx, job["id"], budget + 60)
        quota = jobs.charge(ctx, "solve", int(budget))
    except Problem:
        ctx.stores.jobs.cancel(job["id"])
        raise
    jobs.send(ctx, SOLVE.of({"job_id": job["id"], "puzzle": p.to_json(), "time_budget": budget}))
    return Queued(job, quota)


SOLVES_PER_CLIENT = "solves per client"  # Context.max_queued's key: RICOCHET_QUEUED_SOLVES_PER_CLIENT


def _take_place(ctx: Context, job_id: str, ttl: float) -> None:
    """One of the client's places among queued solves (waiting or running), or 429
    with Retry-After: the interactive queue is every client's, and a client's own
    solves beyond its few would keep another's waiting for a worker (docs/operations.md)."""
    most = ctx.max_queued.get(SOLVES_PER_CLIENT)
    if most is None:
        return
    taken, wait = ctx.required_stores().jobs.take_solve_place(ctx.client, job_id, ttl, most)
    if not taken:
        retry = max(1, min(math.ceil(wait), 30))
        raise Problem("rate-limited", f"this client has {most} queued solves waiting or running, the most one "
                      "client may have at once; follow them (GET /v1/jobs/{id}) and send this one once one has "
                      f"ended, or retry after {retry} s", headers={"Retry-After": str(retry)},
                      limit=f"{most} at once")


def verify(ctx: Context, p: Puzzle, moves: list[Move]) -> Verdict:
    """The `ricochet check` verdict, plus the optimal length and whether the
    moves reach it.  `optimality` is "unknown" when the optimum was not found
    within the request's budget (POST /v1/solve queues a longer search; verify
    then knows it)."""
    judged = check(p, moves)
    optimal_length, settled = ctx.answers.optimum(p)
    # to_json's keys as Verdict names them (solver/model/moves.py), then the optimum's, in the reply's order
    optimal = bool(judged.solved and optimal_length is not None and judged.length == optimal_length)
    return cast(Verdict, {**judged.to_json(), "optimal_length": optimal_length, "optimal": optimal,
                          "optimality": "proven" if settled else "unknown"})


def search_job(ctx: Context, job_id: str, puzzle: object, time_budget: float, max_depth: int = 64,
               threads: int = 1) -> dict[str, str]:
    """A queued solve, as a worker runs it (ricochet.solve): the job marked
    running, the search on `threads` threads for `time_budget` seconds while its
    cancellation is watched, and the job settled: succeeded with the answer, or
    failed with what was proven when the search ran out of time or memory.
    `puzzle` is the payload's, as sent: Puzzle.from_json checks it."""
    stores = ctx.required_stores()
    try:
        p = Puzzle.from_json(puzzle)
    except InvalidInput as e:
        return refuse(ctx, job_id, str(e))
    if not stores.jobs.start(job_id):
        return {"status": "cancelled"}
    with watching(stores, job_id) as cancel:
        answer = Answers(stores, time_budget, threads=threads).search(p, cancel=cancel, max_depth=max_depth).to_json()
    answer["code"] = p.code()
    if answer["status"] == "cancelled":
        return {"status": "cancelled"}
    if answer["status"] in RAN_OUT:
        # A clear end, and the worker is free again: what was proven goes with it.
        limit = f"its {time_budget:g} s budget" if answer["status"] == "timeout" else "its memory budget"
        error = (f"{answer['status']}: the search ran out of {limit}; no solution has fewer than "
                 f"{answer.get('lower_bound')} moves")
        stores.jobs.update(job_id, state=JobState.FAILED, progress=1.0, finished=time.time(), error=error,
                           result=answer)
        return {"status": answer["status"]}
    stores.jobs.update(job_id, state=JobState.SUCCEEDED, progress=1.0, finished=time.time(), result=answer)
    return {"status": answer["status"]}
