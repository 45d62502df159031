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
from typing import Any

from solver.errors import InvalidInput
from solver.model.board import real_board
from solver.model.moves import check
from solver.model.puzzle import Goal, Move, Puzzle, Rules, moves_to_json
from solver.play.game import GameError

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


class Race:
    """One race's state and the rules that change it."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state
        self.events: list[dict[str, Any]] = []

    @classmethod
    def create(cls, players: list[str], board: str, seed: str, seconds: int, now: float) -> Race:
        state = {"version": 0, "board": board, "seed": seed, "started": now, "ends": now + seconds,
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

    def add_puzzles(self, since: int, drawn: int, found: list[dict[str, Any]]) -> None:
        """Puzzles found by the caller ({"code", "optimal_length"}, in order) from draw
        `since` to `drawn`; a caller who came late (another added them first) changes nothing."""
        s = self.state
        if s["drawn"] != since:
            return
        s["puzzles"].extend(found)
        s["drawn"] = drawn

    def public(self) -> dict[str, Any]:
        """What everyone may see: each player's progress, the puzzles reached so far."""
        s = self.state
        reached = max(p["at"] for p in s["players"].values()) + 1
        return {"started": s["started"], "ends": s["ends"], "seconds": s["seconds"], "board": s["board"],
                "finished": s["finished"], "version": s["version"], "players": s["players"],
                "puzzles": [{"index": i, "code": p["code"]} for i, p in enumerate(s["puzzles"][:reached])],
                "standings": s["standings"]}

    # -- the clock and the players' moves ---------------------------------------------------

    def advance(self, now: float) -> None:
        s = self.state
        if not s["finished"] and now >= s["ends"]:
            s["finished"] = True
            s["standings"] = self.standings()
            self._record("race_over", s["ends"], standings=s["standings"])

    def standings(self) -> list[dict[str, Any]]:
        """Points, then puzzles solved, then who reached their score first."""
        rows = [{"player": name, "points": p["points"], "solved": p["solved"], "optimal": p["optimal"],
                 "last": p["last"]} for name, p in self.state["players"].items()]
        rows.sort(key=lambda r: (-r["points"], -r["solved"], r["last"] if r["last"] is not None else 0.0))
        for place, row in enumerate(rows, 1):
            row["place"] = place
        return rows

    def _player(self, name: str, now: float) -> tuple[dict[str, Any], dict[str, Any]]:
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

    def solve(self, name: str, moves: list[Move], now: float) -> dict[str, Any]:
        """`name` shows a solution to their current puzzle: scored and on to the next when it solves."""
        me, puzzle = self._player(name, now)
        verdict = check(Puzzle.from_code(puzzle["code"]), moves)
        solved = verdict.legal and verdict.solved
        result = {"index": me["at"], "success": solved, "length": len(moves), "legal": verdict.legal,
                  "solved": verdict.solved, "reason": verdict.reason or (None if solved else "illegal move"),
                  "optimal_length": puzzle["optimal_length"] if solved else None, "points": 0}
        if solved:
            result["points"] = points(len(moves), puzzle["optimal_length"])
            me["points"] += result["points"]
            me["solved"] += 1
            me["optimal"] += len(moves) == puzzle["optimal_length"]
            me["at"] += 1
            me["last"] = now
        self._record("race_solution", now, player=name, moves=moves_to_json(moves), **result,
                     total=me["points"], at_puzzle=me["at"])
        return result

    def skip(self, name: str, now: float) -> dict[str, Any]:
        """`name` leaves their current puzzle for the next, for nothing."""
        me, _ = self._player(name, now)
        me["at"] += 1
        result = {"index": me["at"] - 1, "success": False, "points": 0, "skipped": True}
        self._record("race_skip", now, player=name, index=me["at"] - 1, total=me["points"], at_puzzle=me["at"])
        return result

    def _record(self, kind: str, at: float, **data: Any) -> None:
        self.state["version"] += 1
        self.events.append({"version": self.state["version"], "type": kind, "at": at, **data})


def found_puzzles(seed: str, board: str, rules: Rules, drawn: int, wanted: int, have: int,
                  search: Any) -> tuple[int, list[dict[str, Any]]]:
    """Puzzles from draw `drawn` on until `wanted` are held (`have` now): each drawn
    one kept when `search(puzzle)` (its optimal solution, or None) is within LENGTHS.
    Returns the draws taken and the new puzzles."""
    found: list[dict[str, Any]] = []
    while have + len(found) < wanted:
        if drawn > 100_000:
            raise InvalidInput("board", "no puzzle of 2 to 8 moves found on this board")
        p = puzzle_at(seed, board, drawn, rules)
        drawn += 1
        moves = search(p)
        if moves is not None and LENGTHS[0] <= len(moves) <= LENGTHS[1]:
            found.append({"code": p.code(), "optimal_length": len(moves)})
    return drawn, found
