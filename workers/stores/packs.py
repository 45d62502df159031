"""Packs: one hash field per puzzle index, so a repeated write changes nothing.

`pack:<id>:items` index -> puzzle JSON; `pack:<id>:failed` index -> reason;
`pack:<id>:keys` what no two puzzles share (board, target, optimal solution);
`pack:<id>:chunks` and `pack:<id>:beats` the chunks of a running pack and their
heartbeats; the set `packs:running` the packs with chunks out.

Chunks held back for fairness (application/packs.py: a client's chunks are
queued a few at a time): `pack:<id>:held` the pack's chunks not sent yet;
`packs:held:<client>` the client's held chunks in order ("<pack>:<chunk>"),
`packs:queued:<client>` those sent and not yet taken by a worker, and
`packs:clients` the clients with chunks held."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict, cast

from solver.production.generated import GeneratedJson, PuzzleHead

from .answers import AnswerStore
from .base import Client, fields, number, real, text, text_map, texts

PACK_TTL = 7 * 24 * 3600     # generated packs: a week
CLIENTS = "packs:clients"
Chunk = list[list[int]]  # a chunk's items: [index, length] each


class MadeItem(PuzzleHead):
    """A pack's item as made and stored (solver/production/generated.py's Generated.to_json:
    the docs/formats.md puzzle, its code and DriftingDroids id, its optimal length, solution
    and difficulty report), with its place in the pack."""

    driftingdroids_id: NotRequired[str | None]  # packs made before the field existed go without
    solution: list[dict[str, str]]
    difficulty: dict[str, Any]  # solver/production/difficulty.py's report
    index: int


class FailedItem(TypedDict):
    """An item that could not be made (service/shapes.py's FailedItem)."""
    index: int
    error: str

# KEYS[1] the client's held list, KEYS[2] its queued set, KEYS[3] CLIENTS; ARGV most, client, ttl.
# Queued chunks whose pack forgot them (settled, cancelled) no longer count; then held chunks move to
# queued until `most` are, skipping those whose pack forgot them.  Returns [member, chunk JSON, ...] to send.
_RELEASE = """
local function chunk_of(member)
  local pack, key = string.match(member, '^(.*):([^:]*)$')
  return pack, key, redis.call('HGET', 'pack:' .. pack .. ':chunks', key)
end
for _, member in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  local _, _, chunk = chunk_of(member)
  if not chunk then redis.call('SREM', KEYS[2], member) end
end
local out = {}
while redis.call('SCARD', KEYS[2]) < tonumber(ARGV[1]) do
  local member = redis.call('LPOP', KEYS[1])
  if not member then break end
  local pack, key, chunk = chunk_of(member)
  if chunk and redis.call('SREM', 'pack:' .. pack .. ':held', key) == 1 then
    redis.call('SADD', KEYS[2], member)
    out[#out + 1] = member
    out[#out + 1] = chunk
  end
end
if redis.call('LLEN', KEYS[1]) == 0 then
  redis.call('SREM', KEYS[3], ARGV[2])
end
redis.call('EXPIRE', KEYS[2], ARGV[3])
return out
"""


class PackStore:
    def __init__(self, client: Client, answers: AnswerStore) -> None:
        self.redis = client
        self.answers = answers
        self._release = client.register_script(_RELEASE)

    def save_items(self, pack_id: str, items: Sequence[tuple[int, GeneratedJson]],
                        keys: list[tuple[str, int]]) -> None:
        """Store puzzles of a pack by index (and claim their variety keys for them)."""
        if not items:
            return
        for _, item in items:
            self.answers.record_generated(item, PACK_TTL)
        with self.redis.pipeline() as pipe:
            pipe.hset(f"pack:{pack_id}:items", mapping={str(i): json.dumps(item) for i, item in items})
            if keys:
                pipe.hset(f"pack:{pack_id}:keys", mapping=fields(dict(keys)))
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
        return bool(fresh) or number(owner) == index

    def track_chunks(self, pack_id: str, chunks: dict[str, Chunk]) -> None:
        if not chunks:
            return
        with self.redis.pipeline() as pipe:
            pipe.hset(f"pack:{pack_id}:chunks", mapping={k: json.dumps(v) for k, v in chunks.items()})
            pipe.expire(f"pack:{pack_id}:chunks", PACK_TTL)
            pipe.sadd("packs:running", pack_id)
            pipe.execute()

    def hold_chunks(self, pack_id: str, client: str, chunks: dict[str, Chunk]) -> None:
        """Record a pack's chunks as out (as `track_chunks`) but held back: queued by
        `release` a few at a time, after the client's chunks held before them."""
        if not chunks:
            return
        with self.redis.pipeline() as pipe:
            pipe.hset(f"pack:{pack_id}:chunks", mapping={k: json.dumps(v) for k, v in chunks.items()})
            pipe.sadd(f"pack:{pack_id}:held", *chunks)
            pipe.rpush(f"packs:held:{client}", *(f"{pack_id}:{k}" for k in chunks))
            pipe.sadd(CLIENTS, client)
            for key in (f"pack:{pack_id}:chunks", f"pack:{pack_id}:held", f"packs:held:{client}"):
                pipe.expire(key, PACK_TTL)
            pipe.sadd("packs:running", pack_id)
            pipe.execute()

    def release(self, client: str, most: int) -> list[tuple[str, str, Chunk]]:
        """The client's next held chunks, now counted as queued, so that at most `most`
        of its chunks wait for a worker (pack, chunk key, items each): the caller sends them."""
        raw = self._release(keys=[f"packs:held:{client}", f"packs:queued:{client}", CLIENTS],
                            args=[most, client, PACK_TTL])
        out: list[tuple[str, str, Chunk]] = []
        for member, chunk in zip(raw[::2], raw[1::2], strict=True):
            pack_id, _, key = text(member).rpartition(":")
            out.append((pack_id, key, json.loads(chunk)))
        return out

    def taken(self, pack_id: str, client: str, key: str) -> None:
        """A worker took one of the client's queued chunks: it waits no more."""
        self.redis.srem(f"packs:queued:{client}", f"{pack_id}:{key}")

    def holding(self) -> list[str]:
        """The clients with chunks held back."""
        return sorted(texts(self.redis.smembers(CLIENTS)))

    def queued_for(self, client: str) -> int:
        """The client's chunks sent and not yet taken by a worker (some may be settled: `release` forgets those)."""
        return number(self.redis.scard(f"packs:queued:{client}"))

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
            pipe.srem(f"pack:{pack_id}:held", key)
            pipe.execute()

    def forget_chunks(self, pack_id: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.delete(f"pack:{pack_id}:chunks", f"pack:{pack_id}:beats", f"pack:{pack_id}:held")
            pipe.srem("packs:running", pack_id)
            pipe.execute()

    def unheard_chunks(self) -> list[tuple[str, str, Chunk]]:
        """Chunks sent that no worker has received (no heartbeat yet): queued, or lost
        on the way to a worker whose host went (chunks held back were not sent)."""
        out: list[tuple[str, str, Chunk]] = []
        for pack_id in texts(self.redis.smembers("packs:running")):
            beats = set(texts(self.redis.hkeys(f"pack:{pack_id}:beats")))
            held = set(texts(self.redis.smembers(f"pack:{pack_id}:held")))
            for key, chunk in text_map(self.redis.hgetall(f"pack:{pack_id}:chunks")).items():
                if key not in beats and key not in held:
                    out.append((pack_id, key, json.loads(chunk)))
        return out

    def silent_chunks(self, silence: float) -> list[tuple[str, str, Chunk]]:
        """Chunks that started (a heartbeat) and have been silent `silence` seconds."""
        out: list[tuple[str, str, Chunk]] = []
        now = time.time()
        for pack_id in texts(self.redis.smembers("packs:running")):
            beats = text_map(self.redis.hgetall(f"pack:{pack_id}:beats"))
            if not self.redis.exists(f"pack:{pack_id}:chunks"):
                self.redis.srem("packs:running", pack_id)
                continue
            for key, at in beats.items():
                if now - real(at) >= silence:
                    chunk = self.redis.hget(f"pack:{pack_id}:chunks", key)
                    if chunk is not None:
                        out.append((pack_id, key, json.loads(chunk)))
        return out

    def save_failure(self, pack_id: str, index: int, reason: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.hset(f"pack:{pack_id}:failed", str(index), reason)
            pipe.expire(f"pack:{pack_id}:failed", PACK_TTL)
            pipe.execute()

    def item_settled(self, pack_id: str, index: int) -> bool:
        with self.redis.pipeline() as pipe:
            pipe.hexists(f"pack:{pack_id}:items", str(index))
            pipe.hexists(f"pack:{pack_id}:failed", str(index))
            return any(pipe.execute())

    def counts(self, pack_id: str) -> tuple[int, int]:
        """How many puzzles the pack holds, and how many could not be made."""
        with self.redis.pipeline() as pipe:
            pipe.hlen(f"pack:{pack_id}:items")
            pipe.hlen(f"pack:{pack_id}:failed")
            made, failed = pipe.execute()
        return number(made), number(failed)

    def failures(self, pack_id: str) -> list[FailedItem]:
        raw = text_map(self.redis.hgetall(f"pack:{pack_id}:failed"))
        return sorted((FailedItem(index=int(k), error=v) for k, v in raw.items()), key=lambda f: f["index"])

    def items(self, pack_id: str, count: int) -> list[MadeItem]:
        """The puzzles a pack holds so far, in order, each with its `index`."""
        raw = self.redis.hmget(f"pack:{pack_id}:items", [str(i) for i in range(count)])
        return [cast(MadeItem, {**json.loads(r), "index": i}) for i, r in enumerate(raw) if r is not None]

    def exists(self, pack_id: str) -> bool:
        return bool(self.redis.exists(f"pack:{pack_id}:items", f"pack:{pack_id}:failed"))
