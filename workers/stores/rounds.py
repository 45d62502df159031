"""Rounds: what a client was handed without its answer, and what answers it
was shown (application/ratings/rounds.py decides what they mean for ratings).

Keys:
- `round:<client>:<hash>` (expiring ROUND_SECONDS after it was last handed):
  the puzzle was handed to the client without its answer (GET
  /v1/puzzles/random?solution=false, /next, the daily).  Its value is `1`
  (open), `p:<player>` (the player whose attempt was the round's first) or
  `spoiled` (an answer was shown or checked: no attempt in it is rated);
- `shown:<client>` (a sorted set of puzzle hashes by time, the newest
  SHOWN_KEPT kept, expiring SHOWN_SECONDS after the last): the client was
  shown the puzzle's answer (its solution, every solution, the last hint, a
  solve, a picture with the solution, a verify outside a round's first
  attempt), whether or not a round was open: a round opened within
  SHOWN_SECONDS after is spoiled from the start.  One key a client (two when
  it sends a key: the key's and the address's), bounded.
- `packed:<hash>` (a set of clients, expiring PACKED_SECONDS after the last
  pack that held the puzzle was made): the clients that made a pack holding
  the puzzle, answers and all (POST /v1/packs).  Kept by puzzle, not by
  client: a client's thousand-item packs cannot push older answers out of a
  bounded set of its own, and the sets grow with the packs' own items (which
  are kept as long).
A client is an API key's name or an address (service/limits.py); an answer
shown is kept under both, and a round is spoiled by either's.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from .base import Client
from .packs import PACK_TTL

ROUND_SECONDS = 24 * 3600  # a round stays open this long after the puzzle was last handed
SHOWN_SECONDS = 2 * ROUND_SECONDS  # an answer shown is remembered this long (a round opened meanwhile is spoiled)
SHOWN_KEPT = 10_000  # answers shown remembered per client at most (the oldest dropped)
PACKED_SECONDS = PACK_TTL  # a pack's answers count as shown as long as the pack is kept (a week)
# KEYS[2] is the puzzle's packed set, KEYS[3..] the clients' shown sets; the
# clients' names are ARGV[clients..].
_SHOWN = """local function shown(clients)
  for i = 3, #KEYS do
    local t = redis.call('zscore', KEYS[i], ARGV[1])
    if t and tonumber(t) > tonumber(ARGV[2]) then return true end
  end
  for i = clients, #ARGV do
    if redis.call('sismember', KEYS[2], ARGV[i]) == 1 then return true end
  end
  return false
end
"""
# KEYS: the round, the puzzle's packed set, then the clients' shown sets; ARGV:
# the puzzle's hash, the oldest time an answer shown counts, the round's life,
# the player it is handed to (/next: it claims an unclaimed round), then the
# clients.  A round handed again keeps its state (a claim, a spoil); one handed
# after an answer was shown is spoiled.
_OPEN = _SHOWN + """local state = redis.call('get', KEYS[1])
if (not state or state == '1') and ARGV[4] ~= '' then state = 'p:' .. ARGV[4] end
if shown(5) then state = 'spoiled' end
redis.call('set', KEYS[1], state or '1', 'EX', ARGV[3])"""
# KEYS: the round, the puzzle's packed set, then the clients' shown sets; ARGV:
# the puzzle's hash, the oldest time an answer shown counts, the player (''
# only reads), then the clients.  Returns {open, spoiled}.  The round's first
# attempt claims it for its player; another player's attempt in it spoils it
# (as a verify without a player does).
_ATTEMPT = _SHOWN + """local state = redis.call('get', KEYS[1])
local spoiled = state == 'spoiled' or shown(4)
if state and not spoiled and ARGV[3] ~= '' then
  if state == '1' then redis.call('set', KEYS[1], 'p:' .. ARGV[3], 'KEEPTTL')
  elseif state ~= 'p:' .. ARGV[3] then redis.call('set', KEYS[1], 'spoiled', 'KEEPTTL'); spoiled = true end
end
return {state and 1 or 0, spoiled and 1 or 0}"""


class RoundStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def open(self, clients: tuple[str, ...], puzzle_hash: str, player: str = "") -> None:
        """The puzzle was handed to `clients[0]` without its answer (to `player`
        by /next: the round is its); spoiled from the start if any of `clients`
        was shown its answer within SHOWN_SECONDS."""
        keys = _keys(clients, puzzle_hash)
        self.redis.eval(_OPEN, len(keys), *keys, puzzle_hash, time.time() - SHOWN_SECONDS, ROUND_SECONDS, player,
                        *clients)

    def show(self, clients: tuple[str, ...], puzzle_hash: str) -> None:
        """`clients` (a key and its address, or an address) were shown the puzzle's answer."""
        with self.redis.pipeline(transaction=False) as pipe:
            for c in clients:
                pipe.zadd(f"shown:{c}", {puzzle_hash: time.time()})
                pipe.zremrangebyrank(f"shown:{c}", 0, -SHOWN_KEPT - 1)
                pipe.expire(f"shown:{c}", SHOWN_SECONDS)
            pipe.execute()

    def attempt(self, clients: tuple[str, ...], puzzle_hash: str, player: str) -> tuple[bool, bool]:
        """Whether a round is open for `clients[0]` on the puzzle, and whether it is
        spoiled (an answer shown to any of `clients`, or checked in the round);
        `player`'s attempt claims an unclaimed round, or spoils one another player
        claimed (`player` '': only read)."""
        keys = _keys(clients, puzzle_hash)
        opened, spoiled = self.redis.eval(_ATTEMPT, len(keys), *keys, puzzle_hash, time.time() - SHOWN_SECONDS, player,
                                          *clients)
        return bool(opened), bool(spoiled)

    def pack(self, askers: Iterable[str], puzzle_hashes: Iterable[str]) -> None:
        """`askers` made a pack holding these puzzles with their answers: each
        puzzle's packed set names them, for PACKED_SECONDS (one pipeline: a
        thousand items are two thousand commands in one round trip)."""
        askers = list(askers)
        if not askers:
            return
        with self.redis.pipeline(transaction=False) as pipe:
            for h in puzzle_hashes:
                pipe.sadd(f"packed:{h}", *askers)
                pipe.expire(f"packed:{h}", PACKED_SECONDS)
            pipe.execute()

    def packed(self, clients: tuple[str, ...], puzzle_hash: str) -> bool:
        """Whether any of `clients` made a pack holding the puzzle (within PACKED_SECONDS)."""
        return any(self.redis.smismember(f"packed:{puzzle_hash}", list(clients)))


def _keys(clients: tuple[str, ...], puzzle_hash: str) -> list[str]:
    return [f"round:{clients[0]}:{puzzle_hash}", f"packed:{puzzle_hash}", *(f"shown:{c}" for c in clients)]


__all__ = ["PACKED_SECONDS", "ROUND_SECONDS", "SHOWN_KEPT", "SHOWN_SECONDS", "RoundStore"]
