"""Ratings from play: every player's and every played puzzle's Glicko-2 rating,
what each player has seen, votes, and the log of attempts they were computed from.

Keys (none expire: they are the service's memory of its players):
- `rating:puzzle:<hash>`: a hash of value, deviation, volatility, plays, wins,
  up and down (votes), and the puzzle's code;
- `rating:player:<scope>:<player>`: value, deviation, volatility, attempts,
  wins, and the daily streak (`streak`, `best_streak`, `last_daily`);
- `tried:<scope>:<player>`: the hashes of the puzzles a player attempted (the
  first attempt is the one that is rated); `seen:<scope>:<player>`: those and
  the puzzles it was handed (GET /v1/puzzles/next hands none twice);
- `rated:puzzles`: the code of every played puzzle, by rating (the next
  puzzle for a player is looked for there first);
- `votes:<hash>`: each voter's vote (1 up, -1 down), the last one counting;
- `attempts`: a stream of every attempt (scope, player, puzzle hash, code, won,
  first, time), from which ratings can be computed again (`replay`); it keeps
  the last ATTEMPTS_KEPT.
A player is named by its scope (the API key's name, or "public") and the app's id.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from redis.client import Pipeline

from solver.play.glicko import Rating, game

from .base import Client

ATTEMPTS_KEPT = 10_000_000


@dataclass(frozen=True)
class Attempt:
    """What one attempt changed: both ratings after it, and whether it was the
    player's first at that puzzle (the only one that moves ratings)."""

    first: bool
    player: dict[str, Any]
    puzzle: dict[str, Any]


def _rating(fields: dict[bytes, bytes], default: Rating) -> Rating:
    if b"value" not in fields:
        return default
    return Rating(float(fields[b"value"]), float(fields[b"deviation"]), float(fields[b"volatility"]))


def _record(fields: dict[bytes, bytes], default: Rating) -> dict[str, Any]:
    """A stored hash as the API shows it (counts as numbers, the rating rounded)."""
    out: dict[str, Any] = {k.decode(): v.decode() for k, v in fields.items()}
    for name in ("plays", "wins", "attempts", "up", "down", "streak", "best_streak"):
        out[name] = int(out.get(name, 0))
    return out | _rating(fields, default).to_json()


class RatingStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    @staticmethod
    def _player_key(scope: str, player: str) -> str:
        return f"rating:player:{scope}:{player}"

    def attempt(self, scope: str, player: str, puzzle_hash: str, code: str, won: bool,
                prior: Rating) -> Attempt:
        """Record an attempt; a first attempt rates player and puzzle (the puzzle
        starting from `prior` when nobody played it yet).  Atomic: two attempts at
        once each see the other's result."""
        player_key, puzzle_key = self._player_key(scope, player), f"rating:puzzle:{puzzle_hash}"
        tried_key = f"tried:{scope}:{player}"
        firsts: list[bool] = []

        def rate(pipe: Pipeline) -> None:
            firsts.clear()
            first = not pipe.sismember(tried_key, puzzle_hash)
            mine, its = pipe.hgetall(player_key), pipe.hgetall(puzzle_key)
            pipe.multi()
            if first:
                me, puzzle = game(_rating(mine, Rating()), _rating(its, prior), won)
                pipe.hset(player_key, mapping=_fields(me))
                pipe.hset(puzzle_key, mapping={**_fields(puzzle), "code": code})
                pipe.zadd("rated:puzzles", {code: puzzle.value})
                pipe.hincrby(puzzle_key, "plays", 1)
                pipe.hincrby(puzzle_key, "wins", int(won))
                pipe.hincrby(player_key, "wins", int(won))
                pipe.sadd(tried_key, puzzle_hash)
                pipe.sadd(f"seen:{scope}:{player}", puzzle_hash)
            pipe.hincrby(player_key, "attempts", 1)
            pipe.xadd("attempts", {"scope": scope, "player": player, "puzzle": puzzle_hash, "code": code,
                                   "won": int(won), "first": int(first), "t": f"{time.time():.3f}"},
                      maxlen=ATTEMPTS_KEPT, approximate=True)
            firsts.append(first)

        self.redis.transaction(rate, player_key, puzzle_key, tried_key)
        return Attempt(firsts[0], self.player(scope, player) or {}, self.puzzle(puzzle_hash, prior))

    def puzzle(self, puzzle_hash: str, prior: Rating) -> dict[str, Any]:
        """A puzzle's rating, plays, wins and votes (its prior when nobody played it)."""
        return _puzzle(self.redis.hgetall(f"rating:puzzle:{puzzle_hash}"), prior)

    def puzzles(self, hashes: list[tuple[str, Rating]]) -> list[dict[str, Any]]:
        """Several puzzles' records at once (a pack's), each with its prior."""
        with self.redis.pipeline(transaction=False) as pipe:
            for h, _ in hashes:
                pipe.hgetall(f"rating:puzzle:{h}")
            return [_puzzle(fields, prior) for fields, (_, prior) in zip(pipe.execute(), hashes, strict=True)]

    def player(self, scope: str, player: str) -> dict[str, Any] | None:
        fields = self.redis.hgetall(self._player_key(scope, player))
        return _record(fields, Rating()) if fields else None

    def player_rating(self, scope: str, player: str) -> Rating:
        return _rating(self.redis.hgetall(self._player_key(scope, player)), Rating())

    def near(self, rating: float, within: float, count: int) -> list[str]:
        """Codes of played puzzles rated within `within` of `rating`, nearest first."""
        codes = self.redis.zrangebyscore("rated:puzzles", rating - within, rating + within, withscores=True)
        return [c.decode() for c, _ in sorted(codes, key=lambda cs: abs(cs[1] - rating))[:count]]

    def seen(self, scope: str, player: str, puzzle_hashes: list[str]) -> list[bool]:
        """Whether the player attempted or was handed each puzzle."""
        if not puzzle_hashes:
            return []
        return [bool(x) for x in self.redis.smismember(f"seen:{scope}:{player}", puzzle_hashes)]

    def hand(self, scope: str, player: str, puzzle_hash: str) -> None:
        """The puzzle was handed to the player (GET /v1/puzzles/next): never again."""
        self.redis.sadd(f"seen:{scope}:{player}", puzzle_hash)

    def vote(self, scope: str, player: str, puzzle_hash: str, code: str, up: bool) -> tuple[int, int]:
        """A player's vote on a puzzle (a later vote replaces theirs): the up and down counts."""
        votes_key, puzzle_key = f"votes:{puzzle_hash}", f"rating:puzzle:{puzzle_hash}"
        with self.redis.pipeline() as pipe:
            pipe.hset(votes_key, f"{scope}:{player}", 1 if up else -1)
            pipe.hvals(votes_key)
            _, values = pipe.execute()
        up_count = sum(1 for v in values if int(v) > 0)
        down = len(values) - up_count
        self.redis.hset(puzzle_key, mapping={"up": up_count, "down": down, "code": code})
        return up_count, down

    def daily(self, scope: str, player: str, day: str, yesterday: str) -> None:
        """The player solved the daily puzzle of `day`: the streak goes on (from
        `yesterday`) or starts again."""
        key = self._player_key(scope, player)

        def count(pipe: Pipeline) -> None:
            last, streak, best = pipe.hmget(key, "last_daily", "streak", "best_streak")
            if last is not None and last.decode() == day:
                return
            streak_now = int(streak or 0) + 1 if last is not None and last.decode() == yesterday else 1
            pipe.multi()
            pipe.hset(key, mapping={"last_daily": day, "streak": streak_now,
                                    "best_streak": max(streak_now, int(best or 0))})

        self.redis.transaction(count, key)

    def replay(self) -> Any:
        """Every attempt kept, oldest first, as dicts (ratings computed again from them)."""
        last = "-"
        while True:
            batch = self.redis.xrange("attempts", min=last, count=1000)
            for _, fields in batch:
                yield {k.decode(): v.decode() for k, v in fields.items()}
            if len(batch) < 1000:
                return
            last = "(" + batch[-1][0].decode()


def _fields(r: Rating) -> dict[str, float]:
    return {"value": r.value, "deviation": r.deviation, "volatility": r.volatility}


def _puzzle(fields: dict[bytes, bytes], prior: Rating) -> dict[str, Any]:
    record = _record(fields, prior)
    return {"value": record["value"], "deviation": record["deviation"], "plays": record["plays"],
            "wins": record["wins"], "up": record["up"], "down": record["down"]}


__all__ = ["Attempt", "RatingStore"]
