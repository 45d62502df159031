"""A robot at the table (issue 69): a player that finds solutions as a person of
its strength would, its strength a rating on the players' scale (glicko.py).

Pure: what a robot bids in a round, and when, is a function of the game's seed,
its seat's name, its strength and the puzzle with its optimum, so a game replays
the same robot bids from its seed.  The game (game.py) places the bids at their
times and has the robot show its solution when its turn comes, under the same
rules as a person's.

The model.  Finding a solution of k moves, where the optimum is n, is taken to be
as hard as a puzzle of n - (k - n) moves: a move more than the optimum is as much
easier as a move less in the puzzle (glicko.PRIOR_PER_MOVE).  The time it takes
a robot grows with that puzzle's rating against its own: BASE_SECONDS for a
puzzle rated as the robot, twice as long for each DOUBLING points more, times a
spread of the robot's own on this puzzle and one of each solution.  So a robot
often finds a longer solution first and bids it, then bids lower as it finds
shorter ones; a weak robot finds a long puzzle's optimum late or never.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import StrEnum

from solver.model.moves import check
from solver.model.puzzle import Move, Puzzle
from solver.play.glicko import PRIOR_PER_MOVE, prior


class Strength(StrEnum):
    """A robot's strength, weakest first."""

    BEGINNER = "beginner"
    INTERMEDIATE = "intermediate"
    ADVANCED = "advanced"
    MASTER = "master"


# Each strength's rating: the prior of a puzzle of this many moves (moving one robot),
# which a player of that rating solves optimally about half the time.
LENGTHS = {Strength.BEGINNER: 3, Strength.INTERMEDIATE: 7, Strength.ADVANCED: 10, Strength.MASTER: 13}
BASE_SECONDS = 40.0  # the median time to find a solution as hard as the robot is strong
DOUBLING = 100.0     # rating points above the robot's that double the time
SPREAD = 0.6         # the lognormal spread of the robot's times on one puzzle (a good or a bad day)
OWN_SPREAD = 0.35    # and of each solution's
READING = 3.0        # seconds at least to read the board and count a solution, and per move
PER_MOVE = 0.5
LONGEST_DETOUR = 5   # the longest solution a robot bids: the optimum and this many moves more
HORIZON = 1800.0     # seconds after a round's start beyond which a robot finds nothing
SHOW_SECONDS = 2.0   # before a robot shows its solution, and per move of it
SHOW_PER_MOVE = 0.3
DIRECTIONS = ("N", "E", "S", "W")


def rating(strength: Strength | str) -> float:
    """A strength's rating on the players' scale."""
    return prior(LENGTHS[Strength(strength)]).value


@dataclass(frozen=True)
class Bid:
    at: float   # seconds after the round's start
    moves: int


def plan(seed: str, name: str, strength: Strength | str, puzzle: Puzzle, optimum: list[Move]) -> list[Bid]:
    """The bids a robot makes in a round whose puzzle's optimal solution is
    `optimum`: each lower than the one before it, in time order, none below the optimum."""
    strength = Strength(strength)
    length = len(optimum)
    if length == 0:
        return []
    rng = random.Random(f"robot:{seed}:{name}:{strength.value}:{puzzle.code()}")
    hardness = prior(length, len({m.robot for m in optimum})).value
    day = rng.gauss(0.0, SPREAD)
    found = []
    for k in range(length, length + LONGEST_DETOUR + 1):
        rated = hardness - PRIOR_PER_MOVE * (k - length)
        spread = math.exp(day + rng.gauss(0.0, OWN_SPREAD))
        seconds = BASE_SECONDS * 2.0 ** ((rated - rating(strength)) / DOUBLING) * spread
        found.append((READING + PER_MOVE * k + seconds, k))
    bids: list[Bid] = []
    for at, k in sorted(found):
        if at > HORIZON:
            break
        if not bids or k < bids[-1].moves:
            bids.append(Bid(round(at, 3), k))
    return bids


def show_delay(moves: int) -> float:
    """Seconds a robot takes, once its turn comes, to show a solution of `moves` moves."""
    return SHOW_SECONDS + SHOW_PER_MOVE * moves


def solution(puzzle: Puzzle, optimum: list[Move], moves: int) -> list[Move]:
    """A solution of `moves` moves (the robot's bid): the optimal one after a detour
    of other moves, each kept only when the whole still solves the puzzle; the
    optimal one itself when no detour of that length is found."""
    detour: list[Move] = []
    for _ in range(max(0, moves - len(optimum))):
        steps = (Move(robot, d) for robot in puzzle.colours for d in DIRECTIONS)
        step = next((m for m in steps if _solves(puzzle, [*detour, m, *optimum])), None)
        if step is None:
            return list(optimum)
        detour.append(step)
    return [*detour, *optimum]


def _solves(puzzle: Puzzle, moves: list[Move]) -> bool:
    verdict = check(puzzle, moves)
    return verdict.legal and verdict.solved
