"""Storms: runs against the clock (application/storms.py decides what an answer
does), the seeded run's puzzles of each day, and high scores.

Keys:
- `storm:run:<id>`: the run, as JSON (who, its seed, its clock as the server
  keeps it, the puzzle handed, what became of each one); kept RUN_KEPT after it
  was opened, for its summary and review.  Changed only in a transaction that
  watched it, so two answers at once cannot both count.
- `storm:seeded:<day>`: the seeded run's puzzles of that UTC day, index ->
  code; the first request to reach an index draws it and every later one reads
  it, so everyone is handed the same puzzles.  `storm:opened:<scope>:<day>`:
  player -> the seeded run it opened that day (one a day).  Both kept DAY_KEPT.
- `storm:best:<scope>:<player>`: the player's best scores, period -> `stamp|score`
  (`day` 2026-11-29, `week` 2026-W48, `month` 2026-11, `all`); a period's field
  is replaced when its stamp changes.  Expires PLAYER_IDLE after its last run.
- `storm:board:<scope>:<day>`: the day's board of the seeded run, player ->
  score; kept DAY_KEPT.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NotRequired, TypedDict, TypeVar

from redis.client import Pipeline

from .base import Client, dump, maybe_number, optimistic, record, scored, text, text_map
from .ratings import PLAYER_IDLE

T = TypeVar("T")


class StormHanded(TypedDict):
    """A run's puzzle in hand as the run keeps it (its answer too: never shown while it is in hand)."""
    code: str
    optimal_length: int
    rating: float
    solution: list[dict[str, str]]  # moves_to_json's


class StormReviewed(TypedDict):
    """A puzzle of the run's review: the keys of service/shapes.py's StormReviewed."""
    index: int
    code: str
    optimal_length: int
    rating: float
    result: str  # solved, failed, shown (the run keeps these); unanswered (the one in hand at the end)
    solution: list[dict[str, str]]
    moves: NotRequired[list[dict[str, str]]]  # the player's answer
    seconds: NotRequired[float]


class StormDeck(TypedDict):
    """What fixes a run's puzzles: its seed, day, whether it is the day's seeded run, its longest length."""
    seed: str
    day: str  # ISO date (UTC)
    seeded: bool
    top: int


class StormRun(StormDeck):
    """A run as the store keeps it (application/storms.py changes it)."""
    id: str
    scope: str
    player: str
    seconds: float  # the clock at the start
    bonus: float
    penalty: float
    ended: float | None  # when it handed its last puzzle
    index: int  # the puzzle in hand
    combo: int
    best_combo: int
    solves: int
    fails: int
    highest: float | None
    done: list[StormReviewed]
    scored: bool
    puzzle: StormHanded | None
    opened: float
    handed: float  # when the puzzle in hand was handed
    periods: NotRequired[list[list[str]]]  # once scored: [period, stamp] its score counts in

RUN_KEPT = 24 * 3600
DAY_KEPT = 2 * 24 * 3600
# KEYS[1] the player's bests; ARGV[1] the idle expiry, then (period, stamp, score) triples.
_BEST = """for i = 2, #ARGV, 3 do
  local kept = redis.call('hget', KEYS[1], ARGV[i])
  local stamp, score = ARGV[i + 1], tonumber(ARGV[i + 2])
  local was, n = nil, nil
  if kept then was, n = string.match(kept, '^(.*)|(%d+)$') end
  if was ~= stamp or tonumber(n) < score then redis.call('hset', KEYS[1], ARGV[i], stamp .. '|' .. score) end
end
redis.call('expire', KEYS[1], ARGV[1])"""


class StormStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def create(self, run: StormRun) -> None:
        self.redis.set(f"storm:run:{run['id']}", dump("run", run), ex=RUN_KEPT)

    def get(self, run_id: str) -> StormRun | None:
        return record(self.redis.get(f"storm:run:{run_id}"), "run", StormRun)

    def change(self, run_id: str, step: Callable[[StormRun | None], tuple[StormRun | None, T]]) -> T:
        """Apply `step(run)` -> (the run changed, or None to leave it; what to
        return) in a transaction that watched the run.  When the changed run
        has just been scored (`scored` turned true), its score (`solves`) is
        the player's best of each of its `periods` ([period, stamp]) that it
        beats, and a seeded run's goes on its day's board, in the same
        transaction."""
        key = f"storm:run:{run_id}"

        def apply(raw: bytes | None, pipe: Pipeline) -> T:
            run = record(raw, "run", StormRun)
            changed, out = step(run)
            if changed is None:
                return out
            pipe.multi()
            pipe.set(key, dump("run", changed), keepttl=True)
            if changed["scored"] and not (run is not None and run["scored"]):
                self._score(pipe, changed)
            return out

        return optimistic(self.redis, key, apply, "storm")

    def _score(self, pipe: Pipeline, run: StormRun) -> None:
        best = f"storm:best:{run['scope']}:{run['player']}"
        pipe.eval(_BEST, 1, best, PLAYER_IDLE, *[x for period, stamp in run.get("periods", [])
                                                 for x in (period, stamp, run["solves"])])
        if run["seeded"]:
            board = f"storm:board:{run['scope']}:{run['day']}"
            pipe.zadd(board, {run["player"]: run["solves"]}, gt=True)
            pipe.expire(board, DAY_KEPT)

    def seeded(self, day: str, index: int, draw: Callable[[], str]) -> str:
        """The seeded run's puzzle `index` of `day`: the one stored, else `draw()`'s, stored first."""
        key = f"storm:seeded:{day}"
        found = self.redis.hget(key, str(index))
        if found is not None:
            return text(found)
        code = draw()
        with self.redis.pipeline() as pipe:
            pipe.hsetnx(key, str(index), code)
            pipe.expire(key, DAY_KEPT)
            pipe.hget(key, str(index))
            return text(pipe.execute()[2])

    def open_seeded(self, scope: str, day: str, player: str, run_id: str) -> str:
        """Claim `day`'s seeded run for `player`: `run_id` if it is the first, else the run it opened before."""
        key = f"storm:opened:{scope}:{day}"
        with self.redis.pipeline() as pipe:
            pipe.hsetnx(key, player, run_id)
            pipe.expire(key, DAY_KEPT)
            pipe.hget(key, player)
            return text(pipe.execute()[2])

    def known(self, scope: str, player: str) -> bool:
        """Whether the player has played a storm (its bests are kept)."""
        return bool(self.redis.exists(f"storm:best:{scope}:{player}"))

    def touch(self, scope: str, player: str) -> None:
        """The player opened a run: it is known from now on (its bests start empty)."""
        key = f"storm:best:{scope}:{player}"
        with self.redis.pipeline() as pipe:
            pipe.hsetnx(key, "all", "all|0")
            pipe.expire(key, PLAYER_IDLE)
            pipe.execute()

    def bests(self, scope: str, player: str) -> dict[str, tuple[str, int]]:
        """The player's best scores: period -> (stamp, score)."""
        out = {}
        for period, value in text_map(self.redis.hgetall(f"storm:best:{scope}:{player}")).items():
            stamp, _, score = value.rpartition("|")
            out[period] = (stamp, int(score))
        return out

    def board(self, scope: str, day: str, count: int) -> list[tuple[str, int]]:
        """The day's board of the seeded run: its best `count`, best first."""
        rows = self.redis.zrange(f"storm:board:{scope}:{day}", 0, count - 1, desc=True, withscores=True)
        return [(player, int(score)) for player, score in scored(rows)]

    def rank(self, scope: str, day: str, player: str) -> int | None:
        """The player's place on the day's board (1 the best), or None when it is not on it."""
        found = maybe_number(self.redis.zrevrank(f"storm:board:{scope}:{day}", player))
        return None if found is None else found + 1

    def backdate(self, run_id: str, seconds: float) -> None:
        """The run as if opened `seconds` earlier: the tests' way to let its clock
        run without waiting (nothing in the service calls it)."""
        def step(run: StormRun | None) -> tuple[StormRun | None, None]:
            if run is None:
                return None, None
            return {**run, "opened": run["opened"] - seconds,
                    "handed": run["handed"] - seconds}, None

        self.change(run_id, step)


__all__ = ["DAY_KEPT", "RUN_KEPT", "StormDeck", "StormHanded", "StormReviewed", "StormRun", "StormStore"]
