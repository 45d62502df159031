"""Ratings from play, stored: every player's and every played puzzle's rating,
what each player was handed and tried, their history, votes, and the log of
attempts.  The store decides nothing: an attempt's outcome is decided by the
caller (application/ratings/finisher.py) on what the store read, and written
in the same transaction.

Keys (docs/ratings.md says what lives where and for how long):
- `rating:player:<scope>:<player>`: value, deviation, volatility, attempts,
  rated (attempts that moved the rating), wins, and the daily streak
  (`streak`, `best_streak`, `last_daily`); `played:<scope>:<player>`: what the
  player was handed or tried, puzzle hash -> `open:<time>` (handed without its
  answer), `shown` (handed with it) or `tried`; `history:<scope>:<player>`:
  its last HISTORY_KEPT attempts, newest first.  All three expire PLAYER_IDLE
  after the player's last request.
- `rating:puzzle:<hash>`: value, deviation, volatility, plays, wins, up and
  down (votes), the code; `voters:<hash>`: each voter's vote (1 up, -1 down).
  Both expire PUZZLE_IDLE after the puzzle's last rated attempt or vote.
- `moved:<client>:<day>`: how far each puzzle's rating moved that day from
  one client (the finisher bounds it); `players:<client>:<day>`: how many
  players the client made that day (application/ratings bounds it); kept two days.
- `rated:puzzles`: played puzzles' codes by rating, the next puzzle's first
  place to look; at most RATED_KEPT (a random member leaves beyond).
- `attempts`: a stream of the attempts at puzzles handed out (scope, player,
  puzzle hash, code, won, rated, time), from which ratings can be computed
  again (`replay`); the last ATTEMPTS_KEPT.
No key here lives forever unbounded: `rated:puzzles` and `attempts` are capped
and have no expiry (an eviction policy of volatile-* never takes them), every
other key expires.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from redis.client import Pipeline

from solver.play.glicko import Rating

from .base import Client, Reply, WatchError, fields, maybe_text, number, scored, text, text_map

DAY = 24 * 3600
PLAYER_IDLE = 180 * DAY    # a player's keys, after its last request
PUZZLE_IDLE = 365 * DAY    # a puzzle's rating and votes, after its last rated attempt or vote
MOVED_KEPT = 2 * DAY
HISTORY_KEPT = 100         # attempts a player's history keeps
ATTEMPTS_KEPT = 1_000_000  # attempts the stream keeps (about 150 bytes each)
RATED_KEPT = 500_000       # codes in rated:puzzles
RATED = "rated:puzzles"
CAPPED = (RATED, "attempts")  # the keys without an expiry: both capped


class PlayerRecord(TypedDict):
    """A player's stored record, decoded: its rating as replies show it (to 0.1),
    its counts, and its daily streak (`last_daily`: the day it last went on)."""

    value: float
    deviation: float
    attempts: int
    rated: int
    wins: int
    streak: int
    best_streak: int
    last_daily: str | None


class PuzzleRecord(TypedDict):
    """A puzzle's stored record, decoded: its rating as replies show it, plays, wins and votes."""

    value: float
    deviation: float
    plays: int
    wins: int
    up: int
    down: int


class HistoryLine(TypedDict):
    """One attempt as a player's history keeps it (service/shapes.py's PastAttempt)."""

    code: str
    won: bool
    length: int
    optimal_length: int
    rated: bool
    reason: NotRequired[str]  # an unrated attempt's
    rating: float
    change: float
    t: float


class Streak(TypedDict):
    """A player's daily streak as a solved daily puzzle changes it."""

    last_daily: str
    streak: int
    best_streak: int


@dataclass(frozen=True)
class Standing:
    """What an attempt is decided on, read in its transaction: the player's and
    the puzzle's ratings, what the player was handed or tried of this puzzle
    (`played`: None, "open:<time>", "shown" or "tried"), and how far this
    client moved the puzzle's rating today."""

    player: Rating
    puzzle: Rating
    played: str | None
    moved: float


@dataclass(frozen=True)
class Decision:
    """What an attempt changes: whether it is rated, the player's and the
    puzzle's ratings after it (a rated attempt's), how far the puzzle moved
    (charged to the client's day), the line the player's history keeps, and
    whether the puzzle is remembered as tried and the attempt logged (`kept`:
    not for a puzzle nobody handed out, so that answers to made-up puzzles
    cost the player no more than its history's capped line)."""

    rated: bool
    player: Rating
    history: HistoryLine
    puzzle: Rating | None = None
    moved: float = 0.0
    kept: bool = True  # the puzzle remembered as tried, the attempt logged (not for puzzles nobody handed out)


@dataclass(frozen=True)
class Attempt:
    """An attempt recorded: the decision, and both records after it."""

    decision: Decision
    player: PlayerRecord
    puzzle: PuzzleRecord


Hash = Mapping[Reply, Reply]  # a hash as HGETALL answers it


def _rating(stored: dict[str, str], default: Rating) -> Rating:
    if "value" not in stored:
        return default
    return Rating(float(stored["value"]), float(stored["deviation"]), float(stored["volatility"]))


def _player(raw: Hash) -> PlayerRecord:
    """A player's stored hash as the API shows it (counts as numbers, the rating rounded)."""
    stored = text_map(raw)
    rating = _rating(stored, Rating()).to_json()
    return PlayerRecord(value=rating["value"], deviation=rating["deviation"], attempts=number(stored.get("attempts")),
                        rated=number(stored.get("rated")), wins=number(stored.get("wins")),
                        streak=number(stored.get("streak")), best_streak=number(stored.get("best_streak")),
                        last_daily=stored.get("last_daily"))


def _puzzle(raw: Hash, prior: Rating) -> PuzzleRecord:
    """A puzzle's stored hash as the API shows it (its prior's rating when nobody played it)."""
    stored = text_map(raw)
    rating = _rating(stored, prior).to_json()
    return PuzzleRecord(value=rating["value"], deviation=rating["deviation"], plays=number(stored.get("plays")),
                        wins=number(stored.get("wins")), up=number(stored.get("up")), down=number(stored.get("down")))


class RatingStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    @staticmethod
    def _keys(scope: str, player: str) -> tuple[str, str, str]:
        """A player's record, what it played, and its history."""
        return f"rating:player:{scope}:{player}", f"played:{scope}:{player}", f"history:{scope}:{player}"

    def record(self, scope: str, player: str, puzzle_hash: str, code: str, client: str, won: bool,
               prior: Rating, decide: Callable[[Standing], Decision]) -> Attempt:
        """Record an attempt as `decide` rules on what was read: atomic, so two
        attempts at once each see the other's result (the puzzle starts from
        `prior` when nobody played it yet).  Three round trips: watch, read, write."""
        player_key, played_key, history_key = self._keys(scope, player)
        puzzle_key, moved_key = f"rating:puzzle:{puzzle_hash}", f"moved:{client}:{_today()}"
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(player_key, played_key, puzzle_key, moved_key)
                    with self.redis.pipeline(transaction=False) as read:  # a change after the watch fails the write
                        read.hget(played_key, puzzle_hash)
                        read.hget(moved_key, puzzle_hash)
                        read.hgetall(player_key)
                        read.hgetall(puzzle_key)
                        played, moved, mine, its = read.execute()
                    decision = decide(Standing(_rating(text_map(mine), Rating()), _rating(text_map(its), prior),
                                               maybe_text(played), float(moved or 0)))
                    pipe.multi()
                    _write(pipe, decision, player_key, puzzle_key, moved_key, puzzle_hash, code, won)
                    pipe.lpush(history_key, json.dumps(decision.history, separators=(",", ":")))
                    pipe.ltrim(history_key, 0, HISTORY_KEPT - 1)
                    if decision.kept:
                        pipe.hset(played_key, puzzle_hash, "tried")
                        pipe.xadd("attempts", {"scope": scope, "player": player, "puzzle": puzzle_hash,
                                               "code": code, "won": int(won), "rated": int(decision.rated),
                                               "t": f"{time.time():.3f}"}, maxlen=ATTEMPTS_KEPT, approximate=True)
                    for key in (player_key, played_key, history_key):
                        pipe.expire(key, PLAYER_IDLE)
                    pipe.hgetall(player_key)
                    pipe.hgetall(puzzle_key)
                    pipe.zcard(RATED)
                    *_, mine, its, members = pipe.execute()
                    break
                except WatchError:
                    continue
        if members > RATED_KEPT:
            self._cap()
        return Attempt(decision, _player(mine), _puzzle(its, prior))

    def _cap(self) -> None:
        """rated:puzzles keeps RATED_KEPT codes: beyond, random ones leave."""
        over = self.redis.zcard(RATED) - RATED_KEPT
        if over > 0:
            self.redis.zrem(RATED, *self.redis.zrandmember(RATED, over) or [])

    def puzzle(self, puzzle_hash: str, prior: Rating) -> PuzzleRecord:
        """A puzzle's rating, plays, wins and votes (its prior when nobody played it)."""
        return _puzzle(self.redis.hgetall(f"rating:puzzle:{puzzle_hash}"), prior)

    def puzzles(self, hashes: list[tuple[str, Rating]]) -> list[PuzzleRecord]:
        """Several puzzles' records at once (a pack's), each with its prior."""
        with self.redis.pipeline(transaction=False) as pipe:
            for h, _ in hashes:
                pipe.hgetall(f"rating:puzzle:{h}")
            return [_puzzle(fields, prior) for fields, (_, prior) in zip(pipe.execute(), hashes, strict=True)]

    def player(self, scope: str, player: str) -> PlayerRecord | None:
        stored = self.redis.hgetall(self._keys(scope, player)[0])
        return _player(stored) if stored else None

    def player_rating(self, scope: str, player: str) -> Rating:
        return _rating(text_map(self.redis.hgetall(self._keys(scope, player)[0])), Rating())

    def is_player(self, scope: str, player: str) -> bool:
        """Whether the player has a record or was handed a puzzle."""
        return bool(self.redis.exists(*self._keys(scope, player)[:2]))

    def new_player(self, client: str) -> int:
        """Count a player `client` made today (UTC): how many it made so far."""
        key = f"players:{client}:{_today()}"
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, MOVED_KEPT)
            made, _ = pipe.execute()
        return int(made)

    def history(self, scope: str, player: str, count: int) -> list[HistoryLine]:
        """The player's last `count` attempts (at most HISTORY_KEPT), newest first."""
        kept = self.redis.lrange(self._keys(scope, player)[2], 0, count - 1)
        lines: list[HistoryLine] = [json.loads(x) for x in kept]  # as `record` wrote them
        return lines

    def near(self, rating: float, within: float, count: int, offset: int = 0) -> list[str]:
        """Codes of played puzzles rated within `within` of `rating`, nearest
        first: a bounded window, the `count` nearest above and below (after
        skipping `offset` on each side), never the whole range."""
        above = self.redis.zrangebyscore(RATED, rating, rating + within, start=offset, num=count, withscores=True)
        below = self.redis.zrevrangebyscore(RATED, rating, rating - within, start=offset, num=count,
                                            withscores=True)
        nearest = sorted(dict(scored([*above, *below])).items(), key=lambda cs: abs(cs[1] - rating))
        return [c for c, _ in nearest]

    def played(self, scope: str, player: str, puzzle_hashes: list[str]) -> list[str | None]:
        """What the player was handed or tried of each puzzle (None: nothing)."""
        if not puzzle_hashes:
            return []
        found = self.redis.hmget(self._keys(scope, player)[1], puzzle_hashes)
        return [maybe_text(x) for x in found]

    def hand(self, scope: str, player: str, puzzle_hash: str, how: str) -> bool:
        """Hand the puzzle to the player (GET /v1/puzzles/next) as `how` says
        (`open:<time>`, or `shown` with its answer), unless it was handed or tried
        before: one step, so of two requests at once only one hands it (True)."""
        key = self._keys(scope, player)[1]
        with self.redis.pipeline() as pipe:
            pipe.hsetnx(key, puzzle_hash, how)
            pipe.expire(key, PLAYER_IDLE)
            handed, _ = pipe.execute()
        return bool(handed)

    def vote(self, voter: str, puzzle_hash: str, code: str, up: bool) -> tuple[int, int]:
        """A voter's vote on a puzzle (a later vote replaces theirs): the up and down counts."""
        votes_key, puzzle_key = f"voters:{puzzle_hash}", f"rating:puzzle:{puzzle_hash}"
        with self.redis.pipeline() as pipe:
            pipe.hset(votes_key, voter, 1 if up else -1)
            pipe.expire(votes_key, PUZZLE_IDLE)
            pipe.hvals(votes_key)
            _, _, values = pipe.execute()
        up_count = sum(1 for v in values if number(v) > 0)
        down = len(values) - up_count
        with self.redis.pipeline() as pipe:
            pipe.hset(puzzle_key, mapping=fields({"up": up_count, "down": down, "code": code}))
            pipe.expire(puzzle_key, PUZZLE_IDLE)
            pipe.execute()
        return up_count, down

    def streak(self, scope: str, player: str,
               decide: Callable[[str | None, int, int], Streak | None]) -> None:
        """Change the player's daily streak as `decide(last_daily, streak,
        best_streak)` says (the fields to set, or None), atomically."""
        key = self._keys(scope, player)[0]

        def count(pipe: Pipeline) -> None:
            last, streak, best = pipe.hmget(key, "last_daily", "streak", "best_streak")
            changed = decide(maybe_text(last), number(streak), number(best))
            if changed is None:
                return
            pipe.multi()
            pipe.hset(key, mapping=fields({"last_daily": changed["last_daily"], "streak": changed["streak"],
                                           "best_streak": changed["best_streak"]}))
            pipe.expire(key, PLAYER_IDLE)

        self.redis.transaction(count, key)

    def replay(self) -> Iterator[dict[str, str]]:
        """Every attempt kept, oldest first, as dicts (ratings computed again from them)."""
        last = "-"
        while True:
            batch = self.redis.xrange("attempts", min=last, count=1000) or []
            for _, stored in batch:
                yield text_map(stored or {})
            if len(batch) < 1000:
                return
            last = "(" + text(batch[-1][0] or b"")


def _today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())  # UTC, as the daily puzzle's days


def _write(pipe: Pipeline, decision: Decision, player_key: str, puzzle_key: str, moved_key: str,
           puzzle_hash: str, code: str, won: bool) -> None:
    """An attempt's changes to the player's and the puzzle's records."""
    pipe.hincrby(player_key, "attempts", 1)
    if decision.rated:
        pipe.hset(player_key, mapping=fields(_fields(decision.player)))
        pipe.hincrby(player_key, "rated", 1)
        pipe.hincrby(player_key, "wins", int(won))
        pipe.hincrby(puzzle_key, "plays", 1)
        pipe.hincrby(puzzle_key, "wins", int(won))
        pipe.hset(puzzle_key, "code", code)
        pipe.expire(puzzle_key, PUZZLE_IDLE)
    if decision.rated and decision.puzzle is not None:
        pipe.hset(puzzle_key, mapping=fields(_fields(decision.puzzle)))
        pipe.zadd(RATED, {code: decision.puzzle.value})
    if decision.moved:
        pipe.hincrbyfloat(moved_key, puzzle_hash, decision.moved)
        pipe.expire(moved_key, MOVED_KEPT)


def _fields(r: Rating) -> dict[str, float]:
    return {"value": r.value, "deviation": r.deviation, "volatility": r.volatility}


__all__ = ["CAPPED", "Attempt", "Decision", "HistoryLine", "PlayerRecord", "PuzzleRecord", "RatingStore", "Standing",
           "Streak"]
