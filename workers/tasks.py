"""Celery tasks.  Payloads are checked before any work starts."""

from __future__ import annotations

import datetime as dt
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from celery.signals import task_postrun, task_received

from solver.errors import InvalidInput
from solver.model.board import all_boards, real_board
from solver.model.puzzle import Puzzle, Ricochet
from solver.play.daily import DAYS_AHEAD, NotInCalendar, daily_json
from solver.production import catalogue, packs, pools
from solver.production.generated import Generated
from solver.production.packs import plan_for, variety_key
from solver.search.solve import Cancel

from . import memory
from .answers import Answers
from .app import ANALYSIS_QUEUE, PACK_QUEUE, celery_app, settings
from .schemas import SolveTask, load
from .stores import Stores
from .stores.jobs import OPEN, JobState

log = logging.getLogger(__name__)

SOLVE_TASK = SolveTask()  # schemas are stateless: one instance serves every request


def _stores() -> Stores:
    """The workers' store: patient, so that a write in the middle of a Redis restart is retried, not lost."""
    if settings.redis_url:
        return Stores.from_settings(settings, patient=True)
    return Stores.from_url(celery_app.conf.broker_url, patient=True)


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




@celery_app.task(name="ricochet.solve", acks_late=True)
def solve_task(job_id: str, puzzle: dict[str, Any], time_budget: float, max_depth: int = 64) -> dict[str, Any]:
    stores = _stores()
    try:
        load(SOLVE_TASK, {"job_id": job_id, "puzzle": puzzle, "time_budget": time_budget, "max_depth": max_depth})
        p = Puzzle.from_json(puzzle)
    except InvalidInput as e:
        stores.jobs.update(job_id, state=JobState.FAILED, finished=time.time(), error=str(e))
        return {"error": str(e)}
    if not stores.jobs.start(job_id):
        return {"status": "cancelled"}
    with watching(stores, job_id) as cancel:
        answer = Answers(stores, time_budget, threads=settings.job_threads).search(p, cancel=cancel,
                                                                            max_depth=max_depth).to_json()
    answer["code"] = p.code()
    if answer["status"] == "cancelled":
        return {"status": "cancelled"}
    if answer["status"] in ("timeout", "state_limit"):
        # A clear end, and the worker is free again: what was proven goes with it.
        limit = f"its {time_budget:g} s budget" if answer["status"] == "timeout" else "its memory budget"
        error = (f"{answer['status']}: the search ran out of {limit}; no solution has fewer than "
                 f"{answer.get('lower_bound')} moves")
        stores.jobs.update(job_id, state=JobState.FAILED, progress=1.0, finished=time.time(), error=error,
                           result=answer)
        return {"status": answer["status"]}
    stores.jobs.update(job_id, state=JobState.SUCCEEDED, progress=1.0, finished=time.time(), result=answer)
    return {"status": answer["status"]}


@celery_app.task(name="ricochet.precompute_daily")
def precompute_daily(days_ahead: int = DAYS_AHEAD) -> list[str]:
    """Store today's puzzle and the next days' before anyone asks (nothing is
    shown before its day: the API keeps the embargo)."""
    stores = _stores()
    today = dt.datetime.now(dt.UTC).date()
    done = []
    for offset in range(days_ahead + 1):
        day = today + dt.timedelta(days=offset)
        try:
            stores.days.publish(day.isoformat(), daily_json(day))
        except NotInCalendar:
            break
        done.append(day.isoformat())
    return done


celery_app.conf.beat_schedule = {
    "precompute-daily": {"task": "ricochet.precompute_daily", "schedule": 3600.0},
}




# -- pools ---------------------------------------------------------------------------------

POOL_QUEUE = ANALYSIS_QUEUE  # one analysis needs about 4 GiB: its workers take one at a time


@functools.cache
def library() -> pools.Library:
    """The pools this worker sees: the package's starter set, then the deployment's in Redis."""
    return pools.Library([*pools.shipped(), _stores().pools, _stores().catalogue])


@celery_app.task(name="ricochet.pool_build", acks_late=False)
def pool_build(job_id: str) -> dict[str, Any]:
    """Analyse one board and target (the job's request: board, target, robots,
    per_length, optionally min_length and seed) and store both ricochet options' pools.  Acknowledged at once:
    an analysis outlasts the broker's visibility timeout, so a lost worker is
    noticed by its silent heartbeat instead (grow_pools queues it again), and
    the same pools come out again."""
    stores = _stores()
    job = stores.jobs.get(job_id)
    request = job["request"] if job else {}
    try:
        board, target = request["board"], request["target"]
        goal = pools.target_named(board, target)
        robots, per_length = int(request.get("robots", 4)), int(request.get("per_length", pools.PER_LENGTH))
        min_length = int(request.get("min_length", pools.MIN_LENGTH))
    except (InvalidInput, KeyError, TypeError, ValueError) as e:
        stores.jobs.update(job_id, state=JobState.FAILED, finished=time.time(), error=f"bad pool request: {e}")
        return {"error": str(e)}
    if not stores.jobs.start(job_id):
        return {"status": "cancelled"}
    stores.jobs.update(job_id, heartbeat=time.time())
    store = stores.pools
    stages = {"analysis": 0.0, "proofs (turn)": 0.5, "proofs (none)": 0.75}

    def progress(stage: str, done: int, total: int) -> None:
        share = 0.5 if stage == "analysis" else 0.25
        stores.jobs.update(job_id, progress=round(stages.get(stage, 0) + share * done / max(total, 1), 3),
                          heartbeat=time.time(), stage=stage)

    built = pools.build(board, goal, robots=robots, per_length=per_length, min_length=min_length,
                        seed=request.get("seed", 0), progress=progress, threads=settings.pool_threads)
    for pool in built:
        store.write(pool.id, pool.dumps())
    result = {"pools": [p.id for p in built], "rows": {p.id: len(p.rows) for p in built}}
    stores.jobs.finish(job_id, state=JobState.SUCCEEDED, progress=1.0, finished=time.time(), result=result)
    return result


def grow_plan(edition_kinds: tuple[str, ...] = ("2013", "beginner", "1999")) -> Iterator[tuple[str, str]]:
    """The (board, target) pairs a deployment grows pools for, in a fixed order:
    kinds take turns, boards and targets drawn from a fixed seed."""
    import random

    rng = random.Random("ricochet-pools")
    specs = list(all_boards("2013"))
    by_kind = {"2013": [s for s in specs if "D" in s],
               "beginner": [s for s in specs if "D" not in s],
               "1999": list(all_boards("1999"))}
    for kind in by_kind.values():
        rng.shuffle(kind)
    for i in range(max(len(v) for v in by_kind.values())):
        for kind in edition_kinds:
            if i < len(by_kind[kind]):
                spec = by_kind[kind][i]
                t = rng.choice(real_board(spec).targets)
                yield spec, (f"{t.colour}-{t.symbol}" if t.colour else t.symbol)


@celery_app.task(name="ricochet.grow_pools")
def grow_pools() -> str | None:
    """Beat: while the deployment holds fewer than RICOCHET_POOLS pools per
    ricochet option (beyond the starter set), queue the next analysis, one at a
    time.  A build whose heartbeat has been silent for POOL_HEARTBEAT_TIMEOUT
    (its worker died) is queued again.  Returns the job it queued, if any."""
    wanted = settings.pools
    stores = _stores()
    building = stores.pools.building()
    if building is not None:
        job = stores.jobs.get(building)
        if job is not None and job["state"] in OPEN:
            if time.time() - (job.get("heartbeat") or job["created"]) < POOL_HEARTBEAT_TIMEOUT:
                return None
            stores.jobs.update(job["id"], state=JobState.PENDING, heartbeat=time.time(),
                               restarts=job.get("restarts", 0) + 1)
            pool_build.apply_async(args=[job["id"]], queue=POOL_QUEUE)
            return job["id"]
    grown = stores.pools.ids()
    if len([i for i in grown if i.endswith("-turn")]) >= wanted:
        return None
    have = set(grown) | set(pools.packaged().ids())
    for board, target in grow_plan():
        if pools.pool_id(board, pools.target_named(board, target), 4, Ricochet.TURN) not in have:
            job = stores.jobs.create("pool", {"board": board, "target": target, "robots": 4,
                                             "per_length": pools.PER_LENGTH})
            stores.pools.set_building(job["id"])
            pool_build.apply_async(args=[job["id"]], queue=POOL_QUEUE)
            return job["id"]
    return None


POOL_HEARTBEAT_TIMEOUT = 600.0  # seconds without progress after which a pool build counts as lost


celery_app.conf.beat_schedule["grow-pools"] = {"task": "ricochet.grow_pools", "schedule": 300.0}
celery_app.conf.beat_schedule["recover-chunks"] = {"task": "ricochet.recover_chunks", "schedule": 20.0}


# -- packs ---------------------------------------------------------------------------------


def chunk_size(length: int) -> int:
    """Searched puzzles per chunk task: many cheap short puzzles per task, long
    ones one by one so that every worker gets a share of even a small pack."""
    return 10 if length <= 8 else 3 if length <= 12 else 1


def pack_plan(request: dict[str, Any]) -> list[Any]:
    return plan_for(request, library())


def pack_item(request: dict[str, Any], index: int) -> dict[str, Any]:
    """Puzzle `index` of a pack as its plan has it (a searched item as its first try makes it)."""
    shelf = library()
    return packs.item(request, plan_for(request, shelf)[index], shelf)


@celery_app.task(name="ricochet.pack", acks_late=True)
def pack_task(job_id: str) -> int:
    """Plan a pack: the puzzles pools hold are stored at once, the rest are
    fanned out in chunks; the job's progress counts the puzzles settled."""
    stores = _stores()
    job = stores.jobs.get(job_id)
    if job is None or not stores.jobs.start(job_id):
        return 0
    request = job["request"]  # checked where it entered (POST /v1/packs), defaults filled in
    planned = pack_plan(request)
    from_pools = [(p.index, p.generated().to_json()) for p in planned if p.drawn]
    stores.packs.save_items(job_id, from_pools, [(variety_key(item), i) for i, item in from_pools])
    searched = [(p.index, p.length) for p in planned if not p.drawn]
    by_size: dict[int, list[tuple[int, int]]] = {}
    for index, length in searched:
        by_size.setdefault(chunk_size(length), []).append((index, length))
    chunks = [items[first:first + size] for size, items in sorted(by_size.items())
              for first in range(0, len(items), size)]
    stores.packs.track_chunks(job_id, {str(chunk[0][0]): chunk for chunk in chunks})
    for chunk in chunks:
        pack_chunk.delay(job_id, chunk)
    _settle(stores, job_id, request)
    return request["count"]


BEAT_EVERY = 5.0  # seconds between a running chunk's heartbeats
CHUNK_SILENCE = 60.0  # a started chunk silent this long lost its worker: the beat sends it again


@celery_app.task(name="ricochet.recover_chunks")
def recover_chunks() -> list[str]:
    """Beat: send again every started pack chunk whose heartbeat has been silent
    for CHUNK_SILENCE seconds (its worker died).  Much sooner than the broker's
    visibility timeout, which must outlast the longest task; a chunk done twice
    writes the same items."""
    stores = _stores()
    sent = []
    for job_id, key, items in stores.packs.silent_chunks(CHUNK_SILENCE):
        job = stores.jobs.get(job_id)
        if job is None or job["state"] not in OPEN:
            stores.packs.forget_chunks(job_id)
            continue
        stores.packs.chunk_beat(job_id, key, requeued=True)
        pack_chunk.delay(job_id, items)
        sent.append(f"{job_id}:{key}")
    return sent


PENDING_SILENCE = 30.0  # a pack job not started this long, its queue empty: its message was lost


@celery_app.task(name="ricochet.recover_pending")
def recover_pending() -> list[str]:
    """Beat: send again a pack job's task, or a pack's chunk, that no worker
    started (received) within PENDING_SILENCE seconds while the pack queue is
    empty: its message was lost on its way to a worker whose host went (the
    broker hands a message over before the worker records it as
    unacknowledged).  A pack sent twice is run once (the second finds it
    started); a chunk done twice writes the same items."""
    stores = _stores()
    if stores.queued(PACK_QUEUE):
        return []  # it may be waiting its turn
    sent = []
    for job_id in stores.jobs.pending(PENDING_SILENCE):
        job = stores.jobs.get(job_id)
        again = job is not None and job["state"] == JobState.PENDING
        stores.jobs.still_pending(job_id, again)
        if again:
            pack_task.delay(job_id)
            sent.append(job_id)
    # Likewise a chunk no worker received (no heartbeat) of a pack started a while ago.
    for job_id, key, items in stores.packs.unheard_chunks():
        job = stores.jobs.get(job_id)
        if job is not None and job["state"] in OPEN and (job["started"] or 0) < time.time() - PENDING_SILENCE:
            pack_chunk.delay(job_id, items)
            sent.append(f"{job_id}:{key}")
    return sent


celery_app.conf.beat_schedule["recover-pending"] = {"task": "ricochet.recover_pending", "schedule": 20.0}


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
    if request is None or request.name != pack_chunk.name:
        return
    try:
        job_id, items = request.args[0], request.args[1]
        _stores().packs.chunk_beat(job_id, str(items[0][0]))
    except Exception:  # a heartbeat must never cost the worker its message
        log.warning("no heartbeat for a received pack chunk", exc_info=True)


@celery_app.task(name="ricochet.pack_chunk", acks_late=True)
def pack_chunk(job_id: str, items: list[list[int]]) -> int:
    """Search for some of a pack's items; an item that cannot be made is recorded
    with the reason, and the rest go on."""
    stores = _stores()
    job = stores.jobs.get(job_id)
    if job is None or job["state"] not in OPEN:
        return 0
    request = job["request"]
    made = 0
    key = str(items[0][0])
    stores.packs.chunk_beat(job_id, key)
    with watching(stores, job_id, beat=lambda: stores.packs.chunk_beat(job_id, key)) as cancel:
        made = _search_items(stores, job_id, request, items, cancel)
    stores.packs.chunk_done(job_id, key)
    return made


def _search_items(stores: Stores, job_id: str, request: dict[str, Any], items: list[list[int]],
                  cancel: Cancel) -> int:
    def claim(key: str, index: int) -> bool:
        return stores.packs.claim_variety(job_id, key, index)

    made = 0
    for index, length in items:
        if cancel.is_set():
            return made
        if stores.packs.item_settled(job_id, index):
            continue  # a chunk sent again: this one is done
        item = packs.settle(request, index, length, library(), claim, cancel)
        if isinstance(item, str):
            if cancel.is_set():
                return made
            stores.packs.save_failure(job_id, index, item)
        else:
            stores.packs.save_items(job_id, [(index, item)], [])
            made += 1
        _settle(stores, job_id, request)
    return made


def _settle(stores: Stores, job_id: str, request: dict[str, Any]) -> None:
    """Progress, and the end of the pack once every item is made or failed."""
    made, failed = stores.packs.counts(job_id)
    count = request["count"]
    if made + failed < count:
        stores.jobs.update(job_id, progress=round((made + failed) / count, 4), made=made, failed=failed)
        return
    failures = stores.packs.failures(job_id)
    stores.packs.forget_chunks(job_id)
    result = {"pack_id": job_id, "made": made, "failed": failures}
    if made == 0:
        stores.jobs.finish(job_id, state=JobState.FAILED, progress=1.0, finished=time.time(), result=result,
                          error=f"no puzzle could be made: {failures[0]['error'] if failures else 'unknown'}")
    else:
        stores.jobs.finish(job_id, state=JobState.SUCCEEDED, progress=1.0, finished=time.time(), result=result,
                          made=made, failed=len(failures))


# -- the catalogue -------------------------------------------------------------------------


@celery_app.task(name="ricochet.catalogue_grow", acks_late=True)
def catalogue_grow(codes: list[str], seconds: float, part: list[int] | None = None,
                   discover: list[str] | None = None) -> dict[str, Any]:
    """Grow the catalogue from these long puzzles for about `seconds`
    (solver/production/catalogue.py): share `part` (k, n) of their families'
    sweep (and the screen of the families in `discover`), each board and
    position claimed in Redis, so it is tried once, by
    one worker, across runs; each puzzle proven kept by
    its pool id, where the deployment's packs draw on it (the store is a pool
    source).  Run again, it goes on where it stopped."""
    stores = _stores()
    deadline = time.monotonic() + seconds
    return _keep(stores, catalogue.grow([Puzzle.from_code(c) for c in codes], claim=stores.catalogue.claim,
                                        seed=",".join(codes[:1] or discover or []), until=deadline,
                                        part=tuple(part or (0, 1)), discover=discover or ()))


@celery_app.task(name="ricochet.catalogue_fill", acks_late=True)
def catalogue_fill(items: list[list[Any]], seconds: float, enough: int = catalogue.PER_SEED) -> dict[str, Any]:
    """More puzzles of SEED_FROM moves on one pair holding few (`items`: its
    known ones, code and found JSON) until it holds `enough`, for at most
    `seconds` (and catalogue.FILL_SECONDS); each position claimed in Redis, each
    puzzle kept by its pool id as `catalogue_grow` keeps them."""
    stores = _stores()
    found = catalogue.fill_pair([(code, item) for code, item in items], stores.catalogue.claim, seconds, enough)
    return _keep(stores, found)


@celery_app.task(name="ricochet.catalogue_lift", acks_late=True)
def catalogue_lift(family: str, spec: str, seconds: float) -> dict[str, Any]:
    """One pair lifted (catalogue.lift_pair: a board of `family`) for at most
    `seconds` (and catalogue.LIFT_BUDGET); each position claimed in Redis, each
    puzzle kept by its pool id as `catalogue_grow` keeps them."""
    stores = _stores()
    return _keep(stores, catalogue.lift_pair(family, spec, stores.catalogue.claim, seconds))


def _keep(stores: Stores, found: Iterable[Generated]) -> dict[str, Any]:
    """Each proven puzzle kept in the deployment's catalogue store by its pool id; how many."""
    count = 0
    for g in found:
        stores.catalogue.add(catalogue.catalogue_pool_id(g), g.puzzle.code(), catalogue.found_json(g))
        count += 1
    return {"found": count}
