"""Printed books kept for a while, so that asking again for the same book serves
its bytes rather than making it again: `ricochet:book:<key>` a PDF (its key
names the pack's content and the book's options), for an hour; `ricochet:books`
the books kept, by when each was stored, and `ricochet:books:bytes` their sizes,
so that all of them together stay under a cap (the oldest dropped first);
`ricochet:book:<key>:making` while a worker makes one (many requests for the
same book queue it once), `ricochet:book:<key>:failed` why one could not be."""

from __future__ import annotations

import json
from typing import TypedDict, cast

from .base import Client, number

KEPT_SECONDS = 3600  # as long as a book's Cache-Control lets a browser keep it
CAP_BYTES = 256 * 2**20  # every kept book together (a 1,000-page book is about 4.5 MB)
FAILURE_SECONDS = 60  # a failure is told to the requests waiting for that book, then forgotten

# KEYS[1] the book, KEYS[2] the index, KEYS[3] the sizes; ARGV the bytes, now, seconds kept, cap
_KEEP = """
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], KEYS[1])
redis.call('HSET', KEYS[3], KEYS[1], string.len(ARGV[1]))
for _, lapsed in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))) do
  redis.call('ZREM', KEYS[2], lapsed)
  redis.call('HDEL', KEYS[3], lapsed)
end
local total = 0
for _, size in ipairs(redis.call('HVALS', KEYS[3])) do total = total + tonumber(size) end
while total > tonumber(ARGV[4]) do
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not oldest or oldest == KEYS[1] then break end
  total = total - tonumber(redis.call('HGET', KEYS[3], oldest) or 0)
  redis.call('DEL', oldest)
  redis.call('ZREM', KEYS[2], oldest)
  redis.call('HDEL', KEYS[3], oldest)
end
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return total
"""

INDEX, SIZES = "ricochet:books", "ricochet:books:bytes"


class BookFailure(TypedDict):
    """Why a book could not be made: a problem's kind and detail (application.problems)."""
    kind: str
    detail: str


class BookStore:
    def __init__(self, client: Client) -> None:
        self.redis = client
        self._keep = client.register_script(_KEEP)

    @staticmethod
    def _key(key: str) -> str:
        return f"ricochet:book:{key}"

    def get(self, key: str) -> bytes | None:
        raw = self.redis.get(self._key(key))
        return raw.encode() if isinstance(raw, str) else raw

    def keep(self, key: str, document: bytes, now: float, cap: int = CAP_BYTES) -> int:
        """Keep a made book for KEPT_SECONDS (its making and any failure forgotten),
        dropping the oldest others while all together pass `cap`; returns the bytes kept."""
        total = self._keep(keys=[self._key(key), INDEX, SIZES], args=[document, now, KEPT_SECONDS, cap])
        self.redis.delete(f"{self._key(key)}:making", f"{self._key(key)}:failed")
        return number(total)

    def claim(self, key: str, seconds: float) -> bool:
        """Whether this caller is the one to have the book made (no one else is, for `seconds`)."""
        return bool(self.redis.set(f"{self._key(key)}:making", 1, nx=True, ex=max(1, int(seconds))))

    def making(self, key: str) -> bool:
        return bool(self.redis.exists(f"{self._key(key)}:making"))

    def fail(self, key: str, kind: str, detail: str) -> None:
        """The book could not be made: why, for the requests waiting for it."""
        with self.redis.pipeline() as pipe:
            failure: BookFailure = {"kind": kind, "detail": detail}
            pipe.set(f"{self._key(key)}:failed", json.dumps(failure), ex=FAILURE_SECONDS)
            pipe.delete(f"{self._key(key)}:making")
            pipe.execute()

    def state(self, key: str) -> tuple[bool, BookFailure | None]:
        """Whether the book is kept, and why it could not be made (None: it was not refused)."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.exists(self._key(key))
            pipe.get(f"{self._key(key)}:failed")
            kept, failed = pipe.execute()
        return bool(kept), cast(BookFailure, json.loads(failed)) if failed else None

    def kept_bytes(self) -> int:
        """Every kept book's size together, as the cap counts them."""
        return sum(number(v) for v in self.redis.hvals(SIZES))
