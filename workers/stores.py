"""Redis-backed stores: solve results by puzzle hash, and job records.

Values are JSON with a format version ("v"), so a later release can read or
migrate what an earlier one wrote.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

import redis

FORMAT = 1
SOLVE_TTL = 30 * 24 * 3600   # solved answers: a month
UNSETTLED_TTL = 3600         # "not within this budget": an hour (a queued solve may settle it meanwhile)
JOB_TTL = 7 * 24 * 3600      # job records: a week after their last change
JOB_STATES = ("pending", "running", "succeeded", "failed", "cancelled")
PACK_TTL = 7 * 24 * 3600     # generated packs: a week
IDEMPOTENCY_TTL = 24 * 3600
GAME_TTL = 7 * 24 * 3600     # games: a week after their last change
PATIENCE = 75                # a patient store's retries of one command (backoff to 5 s: about 6 minutes)


class Stores:
    def __init__(self, client: redis.Redis) -> None:
        self.redis = client

    @classmethod
    def from_url(cls, url: str, patient: bool = False) -> Stores:
        """A store on the Redis at `url`.  `patient` (the workers): every command is
        retried through an outage, with backoff up to 5 s, for about 6 minutes,
        so a Redis restart in the middle of a write loses nothing.  The API is not
        patient: it answers 503 at once."""
        options: dict[str, Any] = {"socket_timeout": 5, "socket_connect_timeout": 2, "health_check_interval": 30}
        if patient:
            from redis.backoff import ExponentialBackoff
            from redis.retry import Retry

            options["retry"] = Retry(ExponentialBackoff(cap=5.0, base=0.25), retries=PATIENCE)
            options["retry_on_error"] = [redis.ConnectionError, redis.TimeoutError]
        return cls(redis.Redis.from_url(url, **options))

    # -- solved answers -------------------------------------------------------------

    def answer(self, puzzle_hash: str) -> dict[str, Any] | None:
        return _answer(self.redis.get(f"solve:{puzzle_hash}"))

    def save_answer(self, puzzle_hash: str, answer: dict[str, Any], *, unless_kept: bool = False) -> None:
        """Only settled answers (optimal, unsolvable) are kept: limits may differ next time.
        `unless_kept`: an answer kept already stays."""
        if answer.get("status") in ("optimal", "unsolvable"):
            self.redis.set(f"solve:{puzzle_hash}", json.dumps({"v": FORMAT, "answer": answer}), ex=SOLVE_TTL,
                           nx=unless_kept)

    def unsettled(self, puzzle_hash: str, budget: float) -> int | None:
        """The lower bound a search within `budget` seconds proved when it ran out
        of time, if one did lately: the same search is not repeated."""
        raw = self.redis.get(f"unsettled:{puzzle_hash}:{budget:g}")
        return int(raw) if raw is not None else None

    def save_unsettled(self, puzzle_hash: str, budget: float, lower_bound: int) -> None:
        self.redis.set(f"unsettled:{puzzle_hash}:{budget:g}", lower_bound, ex=UNSETTLED_TTL)

    def optimum(self, puzzle_hash: str) -> int | None:
        """A puzzle's proven optimal length, when known: from a solved answer, or
        recorded when the puzzle was generated (daily puzzles, packs)."""
        solved, recorded = self.redis.mget(f"solve:{puzzle_hash}", f"optimum:{puzzle_hash}")
        answer = _answer(solved)
        if answer is not None and answer.get("status") == "optimal":
            return answer["length"]
        return int(recorded) if recorded is not None else None

    def save_optimum(self, puzzle_hash: str, length: int, ttl: int | None = SOLVE_TTL) -> None:
        self.redis.set(f"optimum:{puzzle_hash}", length, ex=ttl)

    def _record_generated(self, item: dict[str, Any], ttl: int | None) -> None:
        """A generated puzzle's optimum, and its solution as the answer served for
        it (hints, a solve) unless one is kept already: one solution per puzzle."""
        from solver.puzzle import Move, Puzzle
        from solver.rules import round_of
        from solver.solution import Solution

        p = Puzzle.from_json(item.get("puzzle") or {k: item[k] for k in ("board", "robots", "target", "rules")
                                                    if k in item})
        key = p.content_hash()
        self.save_optimum(key, item["optimal_length"], ttl)
        if item.get("solution"):
            moves = [Move.from_json(m) for m in item["solution"]]
            answer = Solution("optimal", moves, len(moves), round_of(p), {"source": "generated"}).to_json()
            self.save_answer(key, answer | {"code": p.code()}, unless_kept=True)

    # -- daily puzzles: kept forever, and never replaced once published ------------------
    # daily:<date> holds the record a deployment first served for that day; days served
    # under schedule version 1 were kept under daily:v1:<date> and still stand.

    def dailies(self, days: list[str]) -> dict[str, dict[str, Any]]:
        """The stored records of these days (ISO dates), where one is stored."""
        raws = self.redis.mget([k for d in days for k in (f"daily:{d}", f"daily:v1:{d}")]) if days else []
        found = {}
        for i, day in enumerate(days):
            raw = raws[2 * i] or raws[2 * i + 1]
            if raw is not None:
                found[day] = json.loads(raw)["daily"]
        return found

    def daily(self, day: str) -> dict[str, Any] | None:
        return self.dailies([day]).get(day)

    def publish_daily(self, day: str, daily: dict[str, Any]) -> dict[str, Any]:
        """Store a day's puzzle unless one is there already; returns the one that stands."""
        standing = self.daily(day)
        if standing is not None:
            return standing
        if self.redis.set(f"daily:{day}", json.dumps({"v": FORMAT, "daily": daily}), nx=True):
            self._record_generated(daily, ttl=None)  # verify knows the optimum at once, for good
            return daily
        return self.daily(day) or daily

    # -- packs: one hash field per puzzle index, so a repeated write changes nothing ------
    # pack:<id>:items  index -> puzzle JSON;  pack:<id>:failed  index -> reason;
    # pack:<id>:keys   what no two puzzles share (board, target, optimal solution)

    def save_pack_items(self, pack_id: str, items: list[tuple[int, dict[str, Any]]],
                        keys: list[tuple[str, int]]) -> None:
        """Store puzzles of a pack by index (and claim their variety keys for them)."""
        if not items:
            return
        for _, item in items:
            self._record_generated(item, PACK_TTL)
        with self.redis.pipeline() as pipe:
            pipe.hset(f"pack:{pack_id}:items", mapping={str(i): json.dumps(item) for i, item in items})
            if keys:
                pipe.hset(f"pack:{pack_id}:keys", mapping={k: i for k, i in keys})
            for suffix in ("items", "keys"):
                pipe.expire(f"pack:{pack_id}:{suffix}", PACK_TTL)
            pipe.execute()

    def claim_variety(self, pack_id: str, key: str, index: int) -> bool:
        """Whether no other item of the pack has this board, target and solution (and
        now none may).  Claiming again for the same item (a chunk sent again) holds."""
        with self.redis.pipeline() as pipe:
            pipe.hsetnx(f"pack:{pack_id}:keys", key, index)
            pipe.hget(f"pack:{pack_id}:keys", key)
            pipe.expire(f"pack:{pack_id}:keys", PACK_TTL)
            fresh, owner, _ = pipe.execute()
        return bool(fresh) or int(owner) == index

    # -- the chunks of a running pack and their heartbeats ---------------------------

    def track_chunks(self, pack_id: str, chunks: dict[str, list[list[int]]]) -> None:
        if not chunks:
            return
        with self.redis.pipeline() as pipe:
            pipe.hset(f"pack:{pack_id}:chunks", mapping={k: json.dumps(v) for k, v in chunks.items()})
            pipe.expire(f"pack:{pack_id}:chunks", PACK_TTL)
            pipe.sadd("packs:running", pack_id)
            pipe.execute()

    def chunk_beat(self, pack_id: str, key: str, requeued: bool = False) -> None:
        """A chunk's heartbeat (a chunk sent again starts silent, as if just queued)."""
        with self.redis.pipeline() as pipe:
            if requeued:
                pipe.hdel(f"pack:{pack_id}:beats", key)
            else:
                pipe.hset(f"pack:{pack_id}:beats", key, time.time())
            pipe.expire(f"pack:{pack_id}:beats", PACK_TTL)
            pipe.execute()

    def chunk_done(self, pack_id: str, key: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.hdel(f"pack:{pack_id}:chunks", key)
            pipe.hdel(f"pack:{pack_id}:beats", key)
            pipe.execute()

    def forget_chunks(self, pack_id: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.delete(f"pack:{pack_id}:chunks", f"pack:{pack_id}:beats")
            pipe.srem("packs:running", pack_id)
            pipe.execute()

    def silent_chunks(self, silence: float) -> list[tuple[str, str, list[list[int]]]]:
        """Chunks that started (a heartbeat) and have been silent `silence` seconds."""
        out = []
        now = time.time()
        for raw in self.redis.smembers("packs:running"):
            pack_id = raw.decode()
            beats = self.redis.hgetall(f"pack:{pack_id}:beats")
            if not self.redis.exists(f"pack:{pack_id}:chunks"):
                self.redis.srem("packs:running", pack_id)
                continue
            for key, at in beats.items():
                if now - float(at) >= silence:
                    chunk = self.redis.hget(f"pack:{pack_id}:chunks", key)
                    if chunk is not None:
                        out.append((pack_id, key.decode(), json.loads(chunk)))
        return out

    def save_pack_failure(self, pack_id: str, index: int, reason: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.hset(f"pack:{pack_id}:failed", str(index), reason)
            pipe.expire(f"pack:{pack_id}:failed", PACK_TTL)
            pipe.execute()

    def pack_item_settled(self, pack_id: str, index: int) -> bool:
        with self.redis.pipeline() as pipe:
            pipe.hexists(f"pack:{pack_id}:items", str(index))
            pipe.hexists(f"pack:{pack_id}:failed", str(index))
            return any(pipe.execute())

    def pack_counts(self, pack_id: str) -> tuple[int, int]:
        """How many puzzles the pack holds, and how many could not be made."""
        with self.redis.pipeline() as pipe:
            pipe.hlen(f"pack:{pack_id}:items")
            pipe.hlen(f"pack:{pack_id}:failed")
            made, failed = pipe.execute()
        return made, failed

    def pack_failures(self, pack_id: str) -> list[dict[str, Any]]:
        raw = self.redis.hgetall(f"pack:{pack_id}:failed")
        return sorted(({"index": int(k), "error": v.decode()} for k, v in raw.items()), key=lambda f: f["index"])

    def pack_items(self, pack_id: str, count: int) -> list[dict[str, Any]]:
        """The puzzles a pack holds so far, in order, each with its `index`."""
        raw = self.redis.hmget(f"pack:{pack_id}:items", [str(i) for i in range(count)])
        return [{**json.loads(r), "index": i} for i, r in enumerate(raw) if r is not None]

    def pack_exists(self, pack_id: str) -> bool:
        return bool(self.redis.exists(f"pack:{pack_id}:items", f"pack:{pack_id}:failed"))

    def job_for_key(self, idempotency_key: str, job_id: str, fingerprint: str) -> tuple[str, bool]:
        """The job an Idempotency-Key names (the first one registered under it), and
        whether the request now is the same as the first (by its fingerprint)."""
        key = f"idempotency:{idempotency_key}"
        value = json.dumps({"job": job_id, "fingerprint": fingerprint})
        if self.redis.set(key, value, nx=True, ex=IDEMPOTENCY_TTL):
            return job_id, True
        raw = self.redis.get(key)
        if raw is None:  # expired between the two calls: register again
            return self.job_for_key(idempotency_key, job_id, fingerprint)
        first = json.loads(raw)
        return first["job"], first["fingerprint"] == fingerprint

    # -- pools: immutable once written, so every process may keep what it loaded ----------

    def pools(self) -> RedisPools:
        return RedisPools(self.redis)

    # -- jobs -----------------------------------------------------------------------

    def create_job(self, kind: str, request: dict[str, Any], job_id: str | None = None) -> dict[str, Any]:
        job = {"v": FORMAT, "id": job_id or uuid.uuid4().hex, "kind": kind, "state": "pending", "progress": 0.0,
               "created": time.time(), "started": None, "finished": None, "error": None, "result": None,
               "request": request}
        self.redis.set(f"job:{job['id']}", json.dumps(job), ex=JOB_TTL)
        return job

    def job(self, job_id: str) -> dict[str, Any] | None:
        raw = self.redis.get(f"job:{job_id}")
        return json.loads(raw) if raw is not None else None

    def shared_job(self, kind: str, work: str, request: dict[str, Any], ttl: float) -> tuple[dict[str, Any], bool]:
        """The pending or running job doing `work` (a content hash with its limits),
        or a new one; and whether it is new (then the caller queues it)."""
        key = f"inflight:{kind}:{work}"
        for _ in range(3):
            current = self.redis.get(key)
            if current is not None:
                job = self.job(current.decode())
                if job is not None and job["state"] in ("pending", "running"):
                    return job, False
                self.redis.delete(key)
            job = self.create_job(kind, request)  # first the record, then the claim: no one sees a claim without one
            if self.redis.set(key, job["id"], nx=True, ex=max(1, int(ttl))):
                return job, True
            self.redis.delete(f"job:{job['id']}")
        return self.create_job(kind, request), True

    def start_job(self, job_id: str) -> bool:
        """Mark a job running, unless it was cancelled (then False: do nothing)."""
        job = self.update_job(job_id, when=lambda j: j["state"] in ("pending", "running"), state="running",
                              started=time.time())
        return job is not None and job["state"] == "running"

    def finish_job(self, job_id: str, **fields: Any) -> dict[str, Any] | None:
        """Settle a job unless it was cancelled meanwhile."""
        return self.update_job(job_id, when=lambda j: j["state"] != "cancelled", **fields)

    def cancel_job(self, job_id: str) -> dict[str, Any] | None:
        """Cancel a pending or running job (its workers stop within a second); a
        settled job stays as it is.  Returns the job as it stands."""
        return self.update_job(job_id, when=lambda j: j["state"] in ("pending", "running"), state="cancelled",
                               finished=time.time(), error="cancelled by the client")

    def update_job(self, job_id: str, when: Any = None, **fields: Any) -> dict[str, Any] | None:
        """Change a job record atomically (optimistic locking against concurrent writers);
        with `when`, only if `when(job)` holds (else the job is returned unchanged).
        A cancelled job takes no more changes but through `when`."""
        key = f"job:{job_id}"
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    if raw is None:
                        pipe.reset()
                        return None
                    job = json.loads(raw)
                    allowed = when(job) if when is not None else job["state"] != "cancelled"
                    if not allowed:
                        pipe.reset()
                        return job
                    job = {**job, **fields}
                    pipe.multi()
                    pipe.set(key, json.dumps(job), ex=JOB_TTL)
                    pipe.execute()
                    return job
                except redis.WatchError:
                    continue

    # -- games: one JSON state, a list of events, player tokens (hashed) -----------------------

    def create_game(self, state: dict[str, Any], events: list[dict[str, Any]], tokens: dict[str, str]) -> None:
        gid = state["id"]
        with self.redis.pipeline() as pipe:
            pipe.set(f"game:{gid}", json.dumps({"v": FORMAT, "game": state}), ex=GAME_TTL)
            pipe.rpush(f"game:{gid}:events", *[json.dumps(e) for e in events])
            pipe.hset(f"game:{gid}:tokens", mapping={_token_hash(t): name for name, t in tokens.items()})
            for key in (f"game:{gid}:events", f"game:{gid}:tokens"):
                pipe.expire(key, GAME_TTL)
            pipe.execute()

    def game(self, gid: str) -> dict[str, Any] | None:
        raw = self.redis.get(f"game:{gid}")
        return json.loads(raw)["game"] if raw is not None else None

    def game_player(self, gid: str, token: str) -> str | None:
        name = self.redis.hget(f"game:{gid}:tokens", _token_hash(token))
        return name.decode() if name is not None else None

    def update_game(self, gid: str, change: Any, write: bool = False) -> Any:
        """Apply `change(state) -> (events, result)` atomically: concurrent changes
        from any number of API processes are ordered by Redis and none is lost
        (optimistic WATCH/MULTI, retried).  The state is written when there are
        events (or always, with `write`).  Returns (state, result)."""
        key = f"game:{gid}"
        for _ in range(1000):
            with self.redis.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    if raw is None:
                        return None, None
                    state = json.loads(raw)["game"]
                    events, result = change(state)
                    if not events and not write:
                        pipe.unwatch()
                        return state, result
                    pipe.multi()
                    pipe.set(key, json.dumps({"v": FORMAT, "game": state}), ex=GAME_TTL)
                    if events:
                        pipe.rpush(f"{key}:events", *[json.dumps(e) for e in events])
                    pipe.expire(f"{key}:events", GAME_TTL)
                    pipe.expire(f"{key}:tokens", GAME_TTL)
                    pipe.execute()
                    return state, result
                except redis.WatchError:
                    continue
        raise RuntimeError("the game changed too often to apply this change")

    def game_events(self, gid: str, since: int = 0) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.redis.lrange(f"game:{gid}:events", max(0, since), -1)]


class RedisPools:
    """The deployment's pools (solver.production.pools format), in the Redis every
    API and worker process already shares: `pool:v1:<id>` holds a pool's bytes,
    the set `pools:v1` their ids.  Pools are written whole, once."""

    PREFIX = "pool:v1:"
    INDEX = "pools:v1"

    def __init__(self, client: redis.Redis) -> None:
        self.redis = client

    def ids(self) -> list[str]:
        return sorted(i.decode() for i in self.redis.smembers(self.INDEX))

    def read(self, pool: str) -> bytes | None:
        return self.redis.get(self.PREFIX + pool)

    def write(self, pool_id: str, data: bytes) -> None:
        with self.redis.pipeline() as pipe:  # MULTI: the index never names a pool that is not there
            pipe.set(self.PREFIX + pool_id, data)
            pipe.sadd(self.INDEX, pool_id)
            pipe.execute()


def _answer(raw: bytes | None) -> dict[str, Any] | None:
    """A stored solve answer, if there is one in a format this release reads."""
    if raw is None:
        return None
    value = json.loads(raw)
    return value["answer"] if value.get("v") == FORMAT else None


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
