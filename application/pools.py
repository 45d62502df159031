"""The deployment's pools: growing them one analysis at a time (the beat's
sweep), and an analysis as a worker runs it."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any, TypedDict

from solver.errors import InvalidInput
from solver.model.board import all_boards, real_board
from solver.model.puzzle import Goal, Ricochet
from solver.production import pools
from workers.messages import POOL_BUILD, POOL_HEARTBEAT_TIMEOUT
from workers.stores.jobs import OPEN, Job, JobState

from . import Context, jobs

STAGES = {"analysis": 0.0, "proofs (turn)": 0.5, "proofs (none)": 0.75}  # where each stage starts in progress


class PoolAsked(TypedDict):
    """A pool build's request, checked, with its defaults (`request_of`)."""
    board: str
    goal: Goal
    robots: int
    per_length: int
    min_length: int
    seed: int | str


def request_of(job: Job | None) -> PoolAsked:
    """A pool job's request, checked: board, target (a chip of the board), robots,
    per_length, min_length and seed, the defaults filled in."""
    request = job["request"] if job else {}
    try:
        board, target = request["board"], request["target"]
        return {"board": board, "goal": pools.target_named(board, target), "robots": int(request.get("robots", 4)),
                "per_length": int(request.get("per_length", pools.PER_LENGTH)),
                "min_length": int(request.get("min_length", pools.MIN_LENGTH)), "seed": request.get("seed", 0)}
    except (InvalidInput, KeyError, TypeError, ValueError) as e:
        raise InvalidInput("request", f"bad pool request: {e}") from None


class Built(TypedDict):
    """A pool build's result (its job's `result`): the pools written and their rows."""

    pools: list[str]
    rows: dict[str, int]


class NotBuilt(TypedDict, total=False):
    """What a build that did not run answers: its request's fault, or that it was cancelled."""

    error: str
    status: str


def build(ctx: Context, job_id: str, threads: int = 2) -> Built | NotBuilt:
    """Analyse the job's board and target and store both ricochet options' pools
    (ricochet.pool_build); the job beats with its progress, so that a lost worker
    is noticed (`grow`) and the build queued again: the same pools come out."""
    stores = ctx.required_stores()
    try:
        asked = request_of(stores.jobs.get(job_id))
    except InvalidInput as e:
        stores.jobs.update(job_id, state=JobState.FAILED, finished=time.time(), error=e.message)
        return {"error": e.message}
    if not stores.jobs.start(job_id):
        return {"status": "cancelled"}
    stores.jobs.update(job_id, heartbeat=time.time())

    def progress(stage: str, done: int, total: int) -> None:
        share = 0.5 if stage == "analysis" else 0.25
        stores.jobs.update(job_id, progress=round(STAGES.get(stage, 0) + share * done / max(total, 1), 3),
                           heartbeat=time.time(), stage=stage)

    built = pools.build(asked["board"], asked["goal"], robots=asked["robots"], per_length=asked["per_length"],
                        min_length=asked["min_length"], seed=asked["seed"], progress=progress, threads=threads)
    for pool in built:
        stores.pools.write(pool.id, pool.dumps())
    result = Built(pools=[p.id for p in built], rows={p.id: len(p.rows) for p in built})
    stores.jobs.finish(job_id, state=JobState.SUCCEEDED, progress=1.0, finished=time.time(), result=dict(result))
    return result


def grow_plan(edition_kinds: tuple[str, ...] = ("2013", "beginner", "1999")) -> Iterator[tuple[str, str]]:
    """The (board, target) pairs a deployment grows pools for, in a fixed order:
    kinds take turns, boards and targets drawn from a fixed seed."""
    rng = random.Random("ricochet-pools")
    specs = list(all_boards("2013"))
    by_kind = {"2013": [s for s in specs if "D" in s],
               "beginner": [s for s in specs if "D" not in s],
               "1999": list(all_boards("1999"))}
    for held in by_kind.values():
        rng.shuffle(held)
    for i in range(max(len(v) for v in by_kind.values())):
        for kind in edition_kinds:
            if i < len(by_kind[kind]):
                spec = by_kind[kind][i]
                t = rng.choice(real_board(spec).targets)
                yield spec, (f"{t.colour}-{t.symbol}" if t.colour else t.symbol)


def queue_build(ctx: Context, board: str, target: str, building: bool = False, **request: Any) -> Job:
    """A pool job for one board and target, created (the one being grown, if
    `building`) and queued; its record."""
    stores = ctx.required_stores()
    job = stores.jobs.create("pool", {"board": board, "target": target, "robots": 4,
                                      "per_length": pools.PER_LENGTH, **request})
    if building:
        stores.pools.set_building(job["id"])
    jobs.send(ctx, POOL_BUILD.of({"job_id": job["id"]}))
    return job


def grow(ctx: Context, wanted: int, silence: float = POOL_HEARTBEAT_TIMEOUT) -> str | None:
    """The beat's sweep (ricochet.grow_pools): while the deployment holds fewer
    than `wanted` pools per ricochet option (beyond the starter set), queue the
    next analysis, one at a time.  A build whose heartbeat has been silent for
    `silence` seconds (its worker died) is queued again.  Returns the job it
    queued, if any."""
    stores = ctx.required_stores()
    building = stores.pools.building()
    if building is not None:
        job = stores.jobs.get(building)
        if job is not None and job["state"] in OPEN:
            if time.time() - (job.get("heartbeat") or job["created"]) < silence:
                return None
            stores.jobs.update(job["id"], state=JobState.PENDING, heartbeat=time.time(),
                               restarts=job.get("restarts", 0) + 1)
            jobs.send(ctx, POOL_BUILD.of({"job_id": job["id"]}))
            return job["id"]
    grown = stores.pools.ids()
    if len([i for i in grown if i.endswith("-turn")]) >= wanted:
        return None
    have = set(grown) | set(pools.packaged().ids())
    for board, target in grow_plan():
        if pools.pool_id(board, pools.target_named(board, target), 4, Ricochet.TURN) not in have:
            return queue_build(ctx, board, target, building=True)["id"]
    return None
