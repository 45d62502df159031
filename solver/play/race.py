"""A race (issue 69, after Lichess's Puzzle Racer): everyone in a room plays the
same sequence of puzzles at once, for a set time, each at their own pace.

The state is plain JSON (kept in the room by the service) and, as in game.py,
every change takes the time as an argument and is recorded as an event with a
version.  The puzzles are a pure function of the race's seed, its board and
their place in the sequence (`puzzle_at`); the caller searches each one's
optimum (outside any transaction) and adds it with `add_puzzles` before a
player reaches it.  A solution shown scores POINTS_OPTIMAL at the optimum,
one point less for each move more, at least POINTS_LEAST; a shown sequence
that does not solve scores nothing and the player stays on the puzzle; a
player may skip a puzzle for nothing.  At the end, the standings: points, then
puzzles solved, then who got there first.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict, cast

from solver.errors import InvalidInput
from solver.model.board import real_board
from solver.model.moves import check
from solver.model.puzzle import Goal, Move, Puzzle, Rules, moves_to_json
from solver.play.game import GameError, GameEvent

POINTS_OPTIMAL = 3
POINTS_LEAST = 1
LENGTHS = (2, 8)      # the optimal lengths a race deals: short enough to race through
AHEAD = 3             # puzzles kept ready beyond the furthest player
DEFAULT_SECONDS = 180


def points(length: int, optimal: int) -> int:
    """What a solution of `length` moves scores where the optimum is `optimal`."""
    return max(POINTS_LEAST, POINTS_OPTIMAL - (length - optimal))


def puzzle_at(seed: str, board: str, index: int, rules: Rules) -> Puzzle:
    """The race's puzzle `index` (from 0) before its optimum is known: robots and a target
    drawn from the seed and the index alone, so every player gets the same one."""
    b = real_board(board)
    rng = random.Random(f"race:{seed}:{index}")
    colours = ("red", "green", "blue", "yellow")
    robots = dict(zip(colours, rng.sample(b.start_cells(), len(colours))))
    target = rng.choice(b.targets)
    return Puzzle.create(b, robots, Goal(target.cell, target.colour, target.symbol), rules)


class Found(TypedDict):
    """A race's puzzle with its optimum, found by the caller (found_puzzles)."""
    code: str
    optimal_length: int


class Racer(TypedDict):
    """A player's progress: the keys of service/shapes.py's Racer."""
    at: int  # the puzzle they are on
    points: int
    solved: int
    optimal: int
    last: float | None  # when they last scored


class Standing(TypedDict):
    """A row of the standings: the keys of service/shapes.py's Standing."""
    place: int
    player: str
    points: int
    solved: int
    optimal: int
    last: float | None


class RacePuzzle(TypedDict):
    """A puzzle reached, as everyone sees it: the keys of service/shapes.py's RacePuzzle."""
    index: int
    code: str


class RaceState(TypedDict):
    """A race as its room keeps it; `Race` changes it."""
    version: int
    board: str
    seed: str
    started: float
    ends: float
    seconds: int
    puzzles: list[Found]
    drawn: int  # puzzles drawn so far (a draw outside LENGTHS is not kept)
    finished: bool
    standings: list[Standing] | None
    players: dict[str, Racer]


class RacePublic(TypedDict):
    """What everyone may see of a race: the keys of service/shapes.py's Race."""
    started: float
    ends: float
    seconds: int
    board: str
    finished: bool
    version: int
    players: dict[str, Racer]
    puzzles: list[RacePuzzle]
    standings: list[Standing] | None


class RaceResult(TypedDict):
    """What a solution shown (or a skip) did: index, success and points, then a solution's verdict."""
    index: int
    success: bool
    points: int
    length: NotRequired[int]
    legal: NotRequired[bool]
    solved: NotRequired[bool]
    reason: NotRequired[str | None]
    optimal_length: NotRequired[int | None]
    skipped: NotRequired[bool]


class Race:
    """One race's state and the rules that change it."""

    def __init__(self, state: RaceState) -> None:
        self.state = state
        self.events: list[GameEvent] = []

    @classmethod
    def create(cls, players: list[str], board: str, seed: str, seconds: int, now: float) -> Race:
        state: RaceState = {"version": 0, "board": board, "seed": seed, "started": now, "ends": now + seconds,
                 "seconds": seconds, "puzzles": [], "drawn": 0, "finished": False, "standings": None,
                 "players": {name: {"at": 0, "points": 0, "solved": 0, "optimal": 0, "last": None}
                             for name in players}}
        race = cls(state)
        race._record("race_started", now, ends=state["ends"], players=players)
        return race

    # -- the puzzles --------------------------------------------------------------------

    def wanted(self) -> int:
        """How many puzzles should be ready: AHEAD beyond the furthest player."""
        return max(p["at"] for p in self.state["players"].values()) + 1 + AHEAD

    def add_puzzles(self, since: int, drawn: int, found: list[Found]) -> None:
        """Puzzles found by the caller ({"code", "optimal_length"}, in order) from draw
        `since` to `drawn`; a caller who came late (another added them first) changes nothing."""
        s = self.state
        if s["drawn"] != since:
            return
        s["puzzles"].extend(found)
        s["drawn"] = drawn

    def public(self) -> RacePublic:
        """What everyone may see: each player's progress, the puzzles reached so far."""
        s = self.state
        reached = max(p["at"] for p in s["players"].values()) + 1
        return {"started": s["started"], "ends": s["ends"], "seconds": s["seconds"], "board": s["board"],
                "finished": s["finished"], "version": s["version"], "players": s["players"],
                "puzzles": [RacePuzzle(index=i, code=p["code"]) for i, p in enumerate(s["puzzles"][:reached])],
                "standings": s["standings"]}

    # -- the clock and the players' moves ---------------------------------------------------

    def advance(self, now: float) -> None:
        s = self.state
        if not s["finished"] and now >= s["ends"]:
            s["finished"] = True
            s["standings"] = self.standings()
            self._record("race_over", s["ends"], standings=s["standings"])

    def standings(self) -> list[Standing]:
        """Points, then puzzles solved, then who reached their score first."""
        ranked = sorted(self.state["players"].items(), key=lambda item: (
            -item[1]["points"], -item[1]["solved"], item[1]["last"] if item[1]["last"] is not None else 0.0))
        return [Standing(player=name, points=p["points"], solved=p["solved"], optimal=p["optimal"], last=p["last"],
                         place=place) for place, (name, p) in enumerate(ranked, 1)]

    def _player(self, name: str, now: float) -> tuple[Racer, Found]:
        self.advance(now)
        s = self.state
        if name not in s["players"]:
            raise GameError(403, f"no player {name!r} in this race")
        if s["finished"]:
            raise GameError(409, "the race is over")
        me = s["players"][name]
        if me["at"] >= len(s["puzzles"]):
            raise GameError(409, "the next puzzle is being made: try again in a moment")
        return me, s["puzzles"][me["at"]]

    def solve(self, name: str, moves: list[Move], now: float) -> RaceResult:
        """`name` shows a solution to their current puzzle: scored and on to the next when it solves."""
        me, puzzle = self._player(name, now)
        verdict = check(Puzzle.from_code(puzzle["code"]), moves)
        solved = verdict.legal and verdict.solved
        result: RaceResult = {"index": me["at"], "success": solved, "length": len(moves), "legal": verdict.legal,
                  "solved": verdict.solved, "reason": verdict.reason or (None if solved else "illegal move"),
                  "optimal_length": puzzle["optimal_length"] if solved else None, "points": 0}
        if solved:
            scored = points(len(moves), puzzle["optimal_length"])
            result["points"] = scored
            me["points"] += scored
            me["solved"] += 1
            me["optimal"] += len(moves) == puzzle["optimal_length"]
            me["at"] += 1
            me["last"] = now
        self._record("race_solution", now, player=name, moves=moves_to_json(moves), **result,
                     total=me["points"], at_puzzle=me["at"])
        return result

    def skip(self, name: str, now: float) -> RaceResult:
        """`name` leaves their current puzzle for the next, for nothing."""
        me, _ = self._player(name, now)
        me["at"] += 1
        result = RaceResult(index=me["at"] - 1, success=False, points=0, skipped=True)
        self._record("race_skip", now, player=name, index=me["at"] - 1, total=me["points"], at_puzzle=me["at"])
        return result

    def _record(self, kind: str, at: float, **data: Any) -> None:
        self.state["version"] += 1
        self.events.append(cast(GameEvent, {"version": self.state["version"], "type": kind, "at": at, **data}))


def found_puzzles(seed: str, board: str, rules: Rules, drawn: int, wanted: int, have: int,
                  search: Callable[[Puzzle], list[Move] | None]) -> tuple[int, list[Found]]:
    """Puzzles from draw `drawn` on until `wanted` are held (`have` now): each drawn
    one kept when `search(puzzle)` (its optimal solution, or None) is within LENGTHS.
    Returns the draws taken and the new puzzles."""
    found: list[Found] = []
    while have + len(found) < wanted:
        if drawn > 100_000:
            raise InvalidInput("board", "no puzzle of 2 to 8 moves found on this board")
        p = puzzle_at(seed, board, drawn, rules)
        drawn += 1
        moves = search(p)
        if moves is not None and LENGTHS[0] <= len(moves) <= LENGTHS[1]:
            found.append(Found(code=p.code(), optimal_length=len(moves)))
    return drawn, found
