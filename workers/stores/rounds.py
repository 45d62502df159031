"""Rounds: what a client was handed without its answer, and what answers it
was shown (application/ratings/rounds.py decides what they mean for ratings).

Keys:
- `round:<client>:<hash>` (expiring ROUND_SECONDS after it was last handed):
  the puzzle was handed to the client without its answer (GET
  /v1/puzzles/random?solution=false, /next, the daily).  Its value is `1`
  (open), `p:<player>` (the player whose attempt was the round's first) or
  `spoiled` (an answer was shown or checked: no attempt in it is rated);
- `shown:<client>:<hash>` (expiring SHOWN_SECONDS after it was set): the
  client was shown the puzzle's answer (its solution, every solution, the last
  hint, a solve, a picture with the solution, a verify outside a round's first
  attempt), whether or not a round was open: a round opened while it is kept
  is spoiled from the start.  One key a puzzle a client asks an answer of (two
  when it sends a key: the key's and the address's), each request bounded by
  the rate limits, each key gone after SHOWN_SECONDS.
A client is an API key's name or an address (service/limits.py); an answer
shown is kept under both, and a round is spoiled by either's.
"""

from __future__ import annotations

from .base import Client

ROUND_SECONDS = 24 * 3600  # a round stays open this long after the puzzle was last handed
SHOWN_SECONDS = 2 * ROUND_SECONDS  # an answer shown is remembered this long (a round opened meanwhile is spoiled)
# KEYS: the round, then the clients' shown keys; ARGV[2]: the player it is handed
# to (/next), claiming it if unclaimed.  A round handed again keeps its state (a
# claim, a spoil); one handed after an answer was shown is spoiled.
_OPEN = """local state = redis.call('get', KEYS[1])
if (not state or state == '1') and ARGV[2] ~= '' then state = 'p:' .. ARGV[2] end
state = state or '1'
for i = 2, #KEYS do if redis.call('exists', KEYS[i]) == 1 then state = 'spoiled' end end
redis.call('set', KEYS[1], state, 'EX', ARGV[1])"""
# KEYS: the round, then the clients' shown keys; ARGV[1]: the player ('' only reads).
# Returns {open, spoiled}.  The round's first attempt claims it for its player;
# another player's attempt in it spoils it (as a verify without a player does).
_ATTEMPT = """local state = redis.call('get', KEYS[1])
local spoiled = state == 'spoiled'
for i = 2, #KEYS do if redis.call('exists', KEYS[i]) == 1 then spoiled = true end end
if state and not spoiled and ARGV[1] ~= '' then
  if state == '1' then redis.call('set', KEYS[1], 'p:' .. ARGV[1], 'KEEPTTL')
  elseif state ~= 'p:' .. ARGV[1] then redis.call('set', KEYS[1], 'spoiled', 'KEEPTTL'); spoiled = true end
end
return {state and 1 or 0, spoiled and 1 or 0}"""


class RoundStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def open(self, clients: tuple[str, ...], puzzle_hash: str, player: str = "") -> None:
        """The puzzle was handed to `clients[0]` without its answer (to `player`
        by /next: the round is its); spoiled from the start if any of `clients`
        was shown its answer within SHOWN_SECONDS."""
        keys = [f"round:{clients[0]}:{puzzle_hash}", *(f"shown:{c}:{puzzle_hash}" for c in clients)]
        self.redis.eval(_OPEN, len(keys), *keys, ROUND_SECONDS, player)

    def show(self, clients: tuple[str, ...], puzzle_hash: str) -> None:
        """`clients` (a key and its address, or an address) were shown the puzzle's answer."""
        with self.redis.pipeline(transaction=False) as pipe:
            for c in clients:
                pipe.set(f"shown:{c}:{puzzle_hash}", 1, ex=SHOWN_SECONDS)
            pipe.execute()

    def attempt(self, clients: tuple[str, ...], puzzle_hash: str, player: str) -> tuple[bool, bool]:
        """Whether a round is open for `clients[0]` on the puzzle, and whether it is
        spoiled (an answer shown to any of `clients`, or checked in the round);
        `player`'s attempt claims an unclaimed round, or spoils one another player
        claimed (`player` '': only read)."""
        keys = [f"round:{clients[0]}:{puzzle_hash}", *(f"shown:{c}:{puzzle_hash}" for c in clients)]
        opened, spoiled = self.redis.eval(_ATTEMPT, len(keys), *keys, player)
        return bool(opened), bool(spoiled)


__all__ = ["ROUND_SECONDS", "SHOWN_SECONDS", "RoundStore"]
