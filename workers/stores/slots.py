"""Places a client holds at once across every web process (event streams,
exports): `ricochet:slots:<kind>:<client>`, a sorted set of the places held,
each scored by the time it lapses.  A place is given back when its answer ends
(the client read it all or went away); one a crashed process never gave back
lapses at its deadline; the key itself expires with its last place."""

from __future__ import annotations

import secrets
import time

from .base import Client

# KEYS[1] the client's set; ARGV now, deadline, most, place, seconds: take a place if fewer than `most` are held
_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, first[2]}
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return {1, ARGV[2]}
"""


class SlotStore:
    def __init__(self, client: Client) -> None:
        self.redis = client
        self._take = client.register_script(_TAKE)

    @staticmethod
    def _key(kind: str, client: str) -> str:
        return f"ricochet:slots:{kind}:{client}"

    def take(self, kind: str, client: str, most: int, seconds: float) -> tuple[str | None, float]:
        """A place of `kind` for `client`, held at most `seconds`, if it holds fewer
        than `most`: (its id, 0), else (None, seconds until its first place lapses)."""
        now = time.time()
        place = secrets.token_hex(8)
        taken, until = self._take(keys=[self._key(kind, client)],
                                  args=[now, now + seconds, most, place, int(seconds) + 1])
        return (place, 0.0) if taken else (None, max(0.0, float(until) - now))

    def give_back(self, kind: str, client: str, place: str) -> None:
        self.redis.zrem(self._key(kind, client), place)

    def held(self, kind: str, client: str) -> int:
        return self.redis.zcount(self._key(kind, client), time.time(), "+inf")
