"""The difficulty report of a puzzle: its score, grade and percentile.

score = 10 x optimal length + 6 x (fewest robots moved - 1) + 3 x fewest robot
switches + 4 x (optimal length - lone-robot bound) - 2 x log2(optimal solutions)
orders puzzles of one length among themselves.  The grade is a word on the
players' scale (solver/play/grades.py): the grade of the puzzle's prior rating,
from its optimal length and the fewest robots an optimal solution moves, until
play rates it (application/ratings.py).  The report is a pure
function of a few facts (`rate`), so a pool can store the facts and give back
the very report that `difficulty` computes.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from solver.model.puzzle import Puzzle
from solver.play.grades import GRADES, DifficultyReport, grade_of
from solver.search.solution import Solution
from solver.search.solve import Analysis, solution_facts

FACTS_CAP = 100_000  # optimal solutions are counted up to this many
# Counting the optimal solutions of a 5-robot puzzle this long did not finish within
# 5 s for any of the 21 bank puzzles of 16-20 moves tried (2026-11-24): the lone-robot
# bound that prunes the count is weak with four helpers.  It is not attempted, and the
# report carries nulls, as after a timeout, on every machine alike.
FIVE_ROBOTS_UNCOUNTED_FROM = 16


def difficulty(puzzle: Puzzle, solution: Solution, *, time_budget: float | None = 5.0,
               exact: Analysis | None = None) -> DifficultyReport:
    """The difficulty report of a solved puzzle.  Counting every optimal solution
    is the dear part; `exact` (an analysis of the board and goal) makes it walk
    only states on optimal paths."""
    length = solution.length or 0
    countable = length and (len(puzzle.robots) < 5 or length < FIVE_ROBOTS_UNCOUNTED_FROM or exact is not None)
    facts = solution_facts(puzzle, length, cap=FACTS_CAP, time_budget=time_budget, exact=exact) if countable else None
    active = puzzle.goal.colour
    helper_moves = sum(1 for m in solution.moves if m.robot != (active or solution.finisher))
    fewest = facts["fewest_robots"] if facts else len(solution.robots_moved)
    return rate(length, fewest_robots=fewest, helper_moves=helper_moves,
                switches=facts["fewest_switches"] if facts else None,
                solutions=facts["solutions"] if facts else None, capped=facts["capped"] if facts else None,
                lone_bound=solution.stats.get("lone_bound"), void=solution.round.void,
                robots=len(puzzle.robots), ricochet=puzzle.rules.ricochet)


def rate(length: int, *, fewest_robots: int, helper_moves: int, switches: int | None, solutions: int | None,
         capped: bool | None, lone_bound: int | None, void: bool, robots: int, ricochet: str) -> DifficultyReport:
    """The report from its facts (None where the count of solutions ran out of time)."""
    gap = length - lone_bound if lone_bound is not None else None
    score = (10 * length + 6 * (fewest_robots - 1) + 3 * (switches or 0)
             + 4 * (gap or 0) - 2 * math.log2(max(solutions or 1, 1)))
    return {
        "optimal_length": length,
        "fewest_robots_moved": fewest_robots,
        "helper_moves": helper_moves,
        "robot_switches": switches,
        "optimal_solutions": solutions,
        "optimal_solutions_capped": capped,
        "lone_robot_bound": lone_bound,
        "bound_gap": gap,
        "straight_route": void,
        "score": round(score, 1),
        "percentile": percentile(length, robots, ricochet),
        "grade": grade_of(length, fewest_robots) if length else GRADES[0],
    }


@functools.cache
def _distribution() -> dict[str, dict[str, int]]:
    path = Path(__file__).parent / "data" / "distribution.json"
    return json.loads(path.read_text())["lengths"] if path.exists() else {}


def percentile(length: int, robots: int, ricochet: str) -> float | None:
    """The share (%) of random fair positions, with as many robots and the same
    ricochet rule, whose optimal length is shorter (docs/distribution.md)."""
    counts = _distribution().get(f"{robots}-{ricochet}")
    if not counts:
        return None
    total = sum(counts.values())
    shorter = sum(n for k, n in counts.items() if int(k) < length)
    return round(100 * shorter / total, 2)
