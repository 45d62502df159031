"""Daily puzzles: kept forever, and never replaced once published; and how
players did on each day's puzzle.

`daily:<date>` holds the record a deployment first served for that day; days
served under schedule version 1 were kept under `daily:v1:<date>` and still stand.
`daily-finishes:<date>` counts the day's players (`players`, `solved`,
`optimal`, and `moves:<n>`, the solves of n moves), kept FINISHES_KEPT after
the day's counting ends; `daily-counted:<date>` holds a digest of each one
counted (at most COUNTED_MOST), until its counting ends (application/daily_stats.py
says who counts, and until when)."""

from __future__ import annotations

import hashlib
import json
from typing import TypedDict

from solver.play.daily import DayRecord

from .answers import AnswerStore
from .base import Client, dump, number, text_map

FINISHES_KEPT = 400 * 24 * 3600  # a day's counts, after its counting ends: its figures stay readable a year on
COUNTED_MOST = 1_000_000  # who a day counted, at most (about 70 MB); beyond, the figures stand as they are
# KEYS: the day's counts, who it counted; ARGV: a digest of who finished, the moves of a solve ('' for none),
# '1' when they were the fewest, when the counting ends (Unix time), how long the counts are kept after, COUNTED_MOST.
# Returns 1 when the finish was counted (the first of whoever finished, within COUNTED_MOST).
_COUNT = """if redis.call('scard', KEYS[2]) >= tonumber(ARGV[6]) then return 0 end
if redis.call('sadd', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('expireat', KEYS[2], ARGV[4])
redis.call('hincrby', KEYS[1], 'players', 1)
if ARGV[2] ~= '' then
  redis.call('hincrby', KEYS[1], 'solved', 1)
  redis.call('hincrby', KEYS[1], 'moves:' .. ARGV[2], 1)
  if ARGV[3] == '1' then redis.call('hincrby', KEYS[1], 'optimal', 1) end
end
redis.call('expireat', KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[5]))
return 1"""


class Finishes(TypedDict):
    """A day's counts: players counted, how many solved it and found the fewest
    moves, and the solves by their number of moves."""

    players: int
    solved: int
    optimal: int
    moves: dict[int, int]


class DayStore:
    def __init__(self, client: Client, answers: AnswerStore) -> None:
        self.redis = client
        self.answers = answers
        self._count = client.register_script(_COUNT)

    def get_many(self, days: list[str]) -> dict[str, DayRecord]:
        """The stored records of these days (ISO dates), where one is stored."""
        raws = self.redis.mget([k for d in days for k in (f"daily:{d}", f"daily:v1:{d}")]) if days else []
        found: dict[str, DayRecord] = {}
        for i, day in enumerate(days):
            raw = raws[2 * i] or raws[2 * i + 1]
            if raw is not None:  # every version of a day's record stands as it was kept
                found[day] = json.loads(raw)["daily"]
        return found

    def get(self, day: str) -> DayRecord | None:
        return self.get_many([day]).get(day)

    def publish(self, day: str, daily: DayRecord) -> DayRecord:
        """Store a day's puzzle unless one is there already; returns the one that stands."""
        standing = self.get(day)
        if standing is not None:
            return standing
        if self.redis.set(f"daily:{day}", dump("daily", daily), nx=True):
            self.answers.record_generated(daily, ttl=None)  # verify knows the optimum at once, for good
            return daily
        return self.get(day) or daily

    def finished(self, day: str, who: str, moves: int | None, optimal: bool, counting_ends: int) -> bool:
        """Count `who`'s finish of the day's puzzle (a solve of `moves`, or None:
        not solved) unless `who` was counted before; whether it was counted.  Only
        a digest of `who` is kept, until `counting_ends` (Unix time)."""
        digest = hashlib.sha256(who.encode()).hexdigest()[:24]
        counted = self._count(keys=[f"daily-finishes:{day}", f"daily-counted:{day}"],
                              args=[digest, "" if moves is None else moves, int(optimal), counting_ends,
                                    FINISHES_KEPT, COUNTED_MOST])
        return bool(counted)

    def finishes(self, day: str) -> Finishes:
        """The day's counts (all 0 before anyone is counted)."""
        found = text_map(self.redis.hgetall(f"daily-finishes:{day}"))
        moves = {int(k[len("moves:"):]): number(v) for k, v in found.items() if k.startswith("moves:")}
        return {"players": number(found.get("players")), "solved": number(found.get("solved")),
                "optimal": number(found.get("optimal")), "moves": dict(sorted(moves.items()))}
