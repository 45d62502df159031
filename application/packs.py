"""Packs: asking for one (checked against what the deployment holds, idempotent,
admitted and charged), and reading one back in order."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any, cast

from solver.formats.driftingdroids import driftingdroids_id
from solver.model.board import BoardKind
from solver.model.puzzle import Puzzle, Ricochet, moves_from_json
from solver.production import bank, packs
from solver.production.export import Held, csv_header
from solver.production.export import csv_line as export_row
from solver.production.generate import MAX_LENGTH
from solver.production.generated import GeneratedJson, PuzzleHead
from solver.production.packs import PackRequest, plan_for, variety_key
from solver.production.pools import Library
from solver.search.solve import Cancel
from workers.messages import CHUNK_SILENCE, PACK, PACK_CHUNK, PACK_QUEUE, PENDING_SILENCE
from workers.stores import Stores
from workers.stores.jobs import OPEN, Job, JobState
from workers.stores.packs import MadeItem

from . import Context, jobs, ratings
from .problems import Problem, echo
from .ratings.rounds import packed
from .ratings.themes import PuzzleRating
from .running import watching
from .solving import Queued

SHORTEST = 2  # a round solved in one move is void (docs/rules.md)
# Fair shares of the pack workers: a client's chunks wait for a worker at most this many at a time (Context.
# max_queued[CHUNKS_PER_CLIENT], RICOCHET_QUEUED_CHUNKS_PER_CLIENT); the rest are held in Redis and queued as
# workers take these, so the queue's FIFO interleaves the clients (docs/operations.md, "Fair shares").
CHUNKS_PER_CLIENT = "pack chunks per client"
QUEUED_CHUNKS = 2
SERVICE = "service"  # whose chunks a pack's are when no client asked for it (the service's own work)
SEARCH_REACHES = 20  # longest length search alone is asked for; beyond it pools and the bank decide
MAX_IDEMPOTENCY_KEY = 200


class PackItem(PuzzleHead):
    """A pack's item as clients see it (service/shapes.py's PackItem, GET /v1/packs/{id} and
    `ricochet pack`): the item as made (a MadeItem's keys, its DriftingDroids id filled in
    for packs made before the field existed) and what play made of it."""

    driftingdroids_id: str | None
    solution: list[dict[str, str]]
    difficulty: dict[str, Any]
    index: int
    rating: PuzzleRating
    popularity: int
    themes: list[str]


def longest_held(library: Library, board: str, robots: int, rule: str) -> int:
    """The longest length pools (or, for random boards, the bank) hold for such requests."""
    longest, ricochet = SEARCH_REACHES, Ricochet(rule)  # the request's rule, checked by its schema
    for pool in library.pools(board, robots, ricochet):
        longest = max(longest, max(pool.lengths(), default=0))
    kind = BoardKind.of(board)
    if kind is not None and kind.banked:
        longest = max([longest] + [e["length"] for e in bank.matching(1, MAX_LENGTH, robots, ricochet, kind.edition)])
    return longest


def submit(ctx: Context, request: PackRequest, idempotency_key: str | None = None) -> Queued:
    """Queue a pack (a PackRequest, loaded).  The same Idempotency-Key from the same
    client with the same request gives the same job for 24 hours; with another
    request, 422.  A refused request (out of range, queue full, over quota)
    records nothing, so its retry is a new request."""
    stores = ctx.required_stores()
    if request["min_length"] < SHORTEST:
        raise Problem("out-of-range", f"no fair puzzle has fewer than {SHORTEST} moves (a round solved in one move "
                      f"is void): ask for min_length from {SHORTEST}", field="min_length")
    longest = longest_held(ctx.pools, request["board"], request["robots"], request["ricochet"])
    if request["min_length"] > longest:
        raise Problem("out-of-range", f"the longest puzzles held for {request['robots']} robots on "
                      f"{request['board']} boards (ricochet {request['ricochet']}) have {longest} moves; "
                      f"ask for min_length up to {longest}", field="min_length")
    scoped = fingerprint = None
    if idempotency_key is not None:
        if not 1 <= len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
            raise Problem("invalid-input", f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} characters",
                          field="Idempotency-Key")
        scoped = f"{ctx.client}:{idempotency_key}"
        fingerprint = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
        first = stores.jobs.named_by(scoped)
        if first is not None:
            return _replay(ctx, first[0], first[1] == fingerprint)
    jobs.admit(ctx, "packs")
    quota = jobs.charge(ctx, "pack", request["count"] * request["max_length"])
    job = stores.jobs.create("pack", request, uuid.uuid4().hex, asker=ctx.client)
    # Sent before the key names it: should Redis go in between (a failover), the
    # retry with the same key makes a new job, rather than finding one never sent.
    jobs.send(ctx, PACK.of({"job_id": job["id"]}))
    if scoped is not None and fingerprint is not None:
        named, same = stores.jobs.for_idempotency_key(scoped, job["id"], fingerprint)
        if named != job["id"]:  # the same key won a race a moment ago
            stores.jobs.cancel(job["id"])
            return _replay(ctx, named, same)
    return Queued(job, quota)


def _replay(ctx: Context, job_id: str, same: bool) -> Queued:
    if not same:
        raise Problem("idempotency-key-reused", "this Idempotency-Key was used with another request body; "
                      "use a new key for a new pack", field="Idempotency-Key")
    job = ctx.required_stores().jobs.get(job_id)
    if job is None:
        raise Problem("gone", "the job this Idempotency-Key named has expired; send the request with a new key")
    return Queued(job)


def title(request: PackRequest) -> str:
    """The pack's title: the one given at its creation, else what it holds in words
    ("Ricochet Robots — 24 puzzles, 10–12 moves"), never its id."""
    if request.get("title"):
        return str(request["title"])
    count, lo, hi = request["count"], request["min_length"], request["max_length"]
    lengths = f"{lo} move{'s' if lo != 1 else ''}" if lo == hi else f"{lo}–{hi} moves"
    return f"Ricochet Robots — {count} puzzle{'s' if count != 1 else ''}, {lengths}"


def pairs(items: list[PackItem]) -> int:
    """How many (board, target) pairs a pack's puzzles are spread over."""
    return len({(i["board"] if isinstance(i["board"], str) else json.dumps(i["board"], sort_keys=True),
                 Puzzle.from_code(i["code"]).goal.cell) for i in items})


def read(ctx: Context, pack_id: str, finished: bool = True) -> tuple[Job, list[PackItem]]:
    """The pack's job and its puzzles in order (those made so far unless
    `finished`); not found, not ready (still running, failed, cancelled) or gone."""
    job = read_job(ctx, pack_id, finished)
    return job, described(ctx, ctx.required_stores().packs.items(pack_id, job["request"]["count"]))


def read_job(ctx: Context, pack_id: str, finished: bool = True) -> Job:
    """The pack's job, as `read` checks it (without reading its puzzles)."""
    stores = ctx.required_stores()
    job = stores.jobs.get(pack_id) if len(pack_id) <= jobs.MAX_ID else None
    if job is None or job["kind"] != "pack":
        raise Problem("not-found", f"no pack {echo(pack_id)!r}: packs are kept for a week")
    if finished and job["state"] != JobState.SUCCEEDED or job["state"] in (JobState.FAILED, JobState.CANCELLED):
        raise Problem("not-ready", f"the pack is {job['state']}; follow its job",
                      headers={"Location": f"/v1/jobs/{pack_id}"}, job=f"/v1/jobs/{pack_id}", state=job["state"])
    if job["state"] == JobState.SUCCEEDED and not stores.packs.exists(pack_id):
        raise Problem("gone", "the pack has expired; create it again (same seed, same puzzles)")
    return job


def described(ctx: Context, items: list[MadeItem]) -> list[PackItem]:
    """A pack's items as clients see them, GET /v1/packs/{id} and `ricochet pack`
    alike: each with its DriftingDroids game ID, and the rating, popularity and
    themes play has made of it (without stores: the prior, 0 and its own)."""
    for item in items:  # packs made before the field existed
        if "driftingdroids_id" not in item:
            item["driftingdroids_id"] = driftingdroids_id(Puzzle.from_code(item["code"]))
    more = ratings.describe_many(ctx, [(Puzzle.from_code(i["code"]), moves_from_json(i["solution"])) for i in items])
    # each stored item (Generated.to_json with its index) and what play made of it: a PackItem's keys
    return [cast(PackItem, {**item, **extra}) for item, extra in zip(items, more, strict=True)]


def csv_line(item: PackItem, source: str) -> str:
    """A pack's item as a row of the export's CSV, by the export's own row builder
    (solver/production/export.py): the same columns, `source` naming the pack
    (`pack:<id>`; `pack` for `ricochet pack`, which has no id)."""
    held = Held(Puzzle.from_code(item["code"]), moves_from_json(item["solution"]), source)
    return export_row(held, {"rating": item["rating"], "popularity": item["popularity"], "themes": item["themes"]})


def csv_lines(items: Iterable[PackItem], source: str) -> Iterator[str]:
    """A pack as the export's CSV: its header row, then each item in order (`csv_line`)."""
    yield csv_header()
    for item in items:
        yield csv_line(item, source)


# -- making a pack, as the workers do ---------------------------------------------------


def request_of(job: Job) -> PackRequest:
    """A pack job's request: checked where it entered (POST /v1/packs, `submit`), defaults filled in."""
    return cast(PackRequest, job["request"])


def chunk_size(length: int) -> int:
    """Searched puzzles per chunk task: many cheap short puzzles per task, long
    ones one by one so that every worker gets a share of even a small pack."""
    return 10 if length <= 8 else 3 if length <= 12 else 1


def item(request: PackRequest, index: int, library: Library) -> GeneratedJson:
    """Puzzle `index` of a pack as its plan has it (a searched item as its first try makes it)."""
    return packs.item(request, plan_for(request, library)[index], library)


def plan(ctx: Context, job_id: str) -> int:
    """A queued pack planned (ricochet.pack): the puzzles pools hold are stored at
    once, the rest go out in chunks (ricochet.pack_chunk), held in Redis and
    queued a few at a time (`release`: the client's fair share); the job's
    progress counts the puzzles settled.  Returns the pack's count (0: no such job)."""
    stores = ctx.required_stores()
    job = stores.jobs.get(job_id)
    if job is None or not stores.jobs.start(job_id):
        return 0
    request = request_of(job)
    planned = plan_for(request, ctx.pools)
    from_pools = [(p.index, p.generated().to_json()) for p in planned if p.drawn]
    stores.packs.save_items(job_id, from_pools, [(variety_key(made), i) for i, made in from_pools])
    packed(stores, job.get("askers", []), [made for _, made in from_pools])  # answers shown to whoever asked
    by_size: dict[int, list[tuple[int, int]]] = {}
    for p in planned:
        if not p.drawn:
            by_size.setdefault(chunk_size(p.length), []).append((p.index, p.length))
    chunks = [items[first:first + size] for size, items in sorted(by_size.items())
              for first in range(0, len(items), size)]
    client = owner(job)
    stores.packs.hold_chunks(job_id, client, {str(chunk[0][0]): [list(i) for i in chunk] for chunk in chunks})
    release(ctx, client)
    settle(stores, job_id, request)
    return request["count"]


def owner(job: Job) -> str:
    """Whose share of the pack workers a pack's chunks take: the client that asked for it."""
    return str(job["askers"][0]) if job.get("askers") else SERVICE


def release(ctx: Context, client: str) -> int:
    """Queue the client's next held chunks, so that `CHUNKS_PER_CLIENT` of them wait
    for a worker (fewer when it has no more): another client's work queued meanwhile
    waits behind those few, not behind the whole of this client's packs.  Called as
    a plan holds its chunks, as a worker takes or ends one, and by the beat's sweep
    (should a worker die between the two).  Returns how many were queued."""
    most = ctx.max_queued.get(CHUNKS_PER_CLIENT, QUEUED_CHUNKS)
    released = ctx.required_stores().packs.release(client, most)
    for job_id, _, items in released:
        # A send lost here leaves a chunk counted as queued that no worker received:
        # recover_pending sends it again, as it does any chunk whose message was lost.
        jobs.send(ctx, PACK_CHUNK.of({"job_id": job_id, "items": items}))
    return len(released)


def make_chunk(ctx: Context, job_id: str, items: list[list[int]]) -> int:
    """Some of a pack's items searched for (ricochet.pack_chunk), the chunk
    beating meanwhile; an item that cannot be made is recorded with the reason,
    and the rest go on.  Returns how many were made."""
    stores = ctx.required_stores()
    job = stores.jobs.get(job_id)
    key = str(items[0][0])
    if job is None or job["state"] not in OPEN:  # cancelled (or gone): its held chunks are dropped
        stores.packs.forget_chunks(job_id)
        if job is not None:
            stores.packs.taken(job_id, owner(job), key)
            release(ctx, owner(job))
        return 0
    stores.packs.taken(job_id, owner(job), key)  # as chunk_received did, should its signal have failed
    stores.packs.chunk_beat(job_id, key)
    with watching(stores, job_id, beat=lambda: stores.packs.chunk_beat(job_id, key)) as cancel:
        made = _search_items(ctx, job_id, job, items, cancel)
    stores.packs.chunk_done(job_id, key)
    release(ctx, owner(job))
    return made


def chunk_received(ctx: Context, job_id: str, items: list[list[int]]) -> None:
    """A chunk's first heartbeat, as a worker takes its message; and the client's
    next chunk queued in its place (the queue keeps its few, as workers take them)."""
    stores = ctx.required_stores()
    key = str(items[0][0])
    stores.packs.chunk_beat(job_id, key)
    job = stores.jobs.get(job_id)
    if job is not None:
        stores.packs.taken(job_id, owner(job), key)
        release(ctx, owner(job))


def _search_items(ctx: Context, job_id: str, job: Job, items: list[list[int]],
                  cancel: Cancel) -> int:
    stores, request = ctx.required_stores(), request_of(job)

    def claim(key: str, index: int) -> bool:
        return stores.packs.claim_variety(job_id, key, index)

    made = 0
    for index, length in items:
        if cancel.is_set():
            return made
        if stores.packs.item_settled(job_id, index):
            continue  # a chunk sent again: this one is done
        found = packs.settle(request, index, length, ctx.pools, claim, cancel)
        if isinstance(found, str):
            if cancel.is_set():
                return made
            stores.packs.save_failure(job_id, index, found)
        else:
            stores.packs.save_items(job_id, [(index, found)], [])
            packed(stores, job.get("askers", []), [found])
            made += 1
        settle(stores, job_id, request)
    return made


def settle(stores: Stores, job_id: str, request: PackRequest) -> None:
    """Progress, and the end of the pack once every item is made or failed:
    succeeded with what was made, failed when nothing could be."""
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


def recover_chunks(ctx: Context, silence: float = CHUNK_SILENCE) -> list[str]:
    """The beat's sweep (ricochet.recover_chunks): every started chunk silent for
    `silence` seconds (its worker died) sent again, much sooner than the
    broker's visibility timeout, which must outlast the longest task; a chunk
    done twice writes the same items.  Returns the chunks sent, job:first."""
    stores = ctx.required_stores()
    sent = []
    for job_id, key, items in stores.packs.silent_chunks(silence):
        job = stores.jobs.get(job_id)
        if job is None or job["state"] not in OPEN:
            stores.packs.forget_chunks(job_id)
            continue
        stores.packs.chunk_beat(job_id, key, requeued=True)
        jobs.send(ctx, PACK_CHUNK.of({"job_id": job_id, "items": items}))
        sent.append(f"{job_id}:{key}")
    for client in stores.packs.holding():  # a worker that died between taking a chunk and queuing the next
        release(ctx, client)
    return sent


def recover_pending(ctx: Context, silence: float = PENDING_SILENCE) -> list[str]:
    """The beat's sweep (ricochet.recover_pending): a pack job no worker started,
    or a started pack's chunk no worker received (no heartbeat), `silence`
    seconds on while the pack queue is empty, sent again: its message was lost
    on its way to a worker whose host went (the broker hands a message over
    before the worker records it as unacknowledged, so neither the queue nor
    the visibility timeout brings it back).  A pack sent twice runs once (the
    second finds it started); a chunk done twice writes the same items.
    Returns what was sent: job, or job:first for a chunk."""
    stores = ctx.required_stores()
    if stores.queued(PACK_QUEUE):
        return []  # what is not heard of may be waiting its turn
    sent = []
    for job_id in stores.jobs.pending(silence):
        job = stores.jobs.get(job_id)
        again = job is not None and job["state"] == JobState.PENDING
        stores.jobs.still_pending(job_id, again)
        if again:
            jobs.send(ctx, PACK.of({"job_id": job_id}))
            sent.append(job_id)
    for job_id, key, items in stores.packs.unheard_chunks():
        job = stores.jobs.get(job_id)
        if job is not None and job["state"] in OPEN and (job["started"] or 0) < time.time() - silence:
            jobs.send(ctx, PACK_CHUNK.of({"job_id": job_id, "items": items}))
            sent.append(f"{job_id}:{key}")
    return sent
