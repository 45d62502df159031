"""Grade words as players read them: from a puzzle's rating on the players' scale.

A rating says how likely a player of a given rating is to find the optimum
(Glicko-2, `glicko.py`): a puzzle rated as a player is one that player solves
optimally about half the time.  The grade words cut that scale where people
would: a new player (1500) finds the optimum of an *easy* puzzle about half the
time; *medium* and *hard* need a player who has trained; *expert* a strong one;
*extreme* is for puzzles of 17 moves and more, which few people ever solve
optimally.  Before anyone played a puzzle, its rating is the prior
(`glicko.prior`: from its optimal length and the robots its solution moves,
anchored so that a typical 6-move puzzle sits at a new player's 1500); once
enough players tried it, its rating from play decides (application/ratings.py).

The daily puzzle's week rises with its lengths: Monday's 5-6 moves grade easy,
Sunday's 17-20 extreme.
"""

from __future__ import annotations

import functools
from typing import NotRequired, TypedDict

from solver.play.glicko import prior

GRADES = ("beginner", "easy", "medium", "hard", "expert", "extreme")
# The rating at which each grade after the first starts.
RATING_FLOORS = {"easy": 1300.0, "medium": 1600.0, "hard": 1850.0, "expert": 2150.0, "extreme": 2700.0}
MOST_ROBOTS = 5


class DifficultyReport(TypedDict):
    """service/shapes.py's Difficulty: solver/production/difficulty.py's report (with the
    puzzle's code in POST /v1/difficulty's reply; graded by its rating once played enough).
    Declared here, below both the report's maker and the daily calendar that keeps it."""

    optimal_length: int
    fewest_robots_moved: int
    helper_moves: int
    robot_switches: NotRequired[int | None]
    optimal_solutions: NotRequired[int | None]
    optimal_solutions_capped: NotRequired[bool | None]
    lone_robot_bound: NotRequired[int | None]
    bound_gap: NotRequired[int | None]
    straight_route: NotRequired[bool]
    score: float
    grade: str
    graded_by: NotRequired[str]
    percentile: NotRequired[float | None]
    code: NotRequired[str]


def grade_of_rating(rating: float) -> str:
    """The grade word of a puzzle rated `rating`."""
    found = GRADES[0]
    for name, floor in RATING_FLOORS.items():
        if rating >= floor:
            found = name
    return found


def grade_of(length: int, robots_moved: int) -> str:
    """The grade word of a puzzle nobody played yet: its prior's."""
    return grade_of_rating(prior(length, robots_moved).value)


@functools.cache
def lengths_of(grade: str, longest: int = 20) -> tuple[int, int]:
    """The optimal lengths (2 to `longest`) that unplayed puzzles of `grade` have."""
    lengths = [n for n in range(2, longest + 1)
               if any(grade_of(n, r) == grade for r in range(1, min(n, MOST_ROBOTS) + 1))]
    return min(lengths), max(lengths)


def relabelled(report: DifficultyReport, optimal_length: int) -> DifficultyReport:
    """A difficulty report with its grade word on today's scale (its prior's, from
    its optimal length and the fewest robots its solutions move): a puzzle
    published under an older scale keeps its puzzle and its report's figures, and
    is shown with the word players read today.  A report graded by its rating
    from play keeps that grade."""
    if report.get("graded_by") == "rating":
        return report
    grade = grade_of(optimal_length, report.get("fewest_robots_moved") or 1)
    return report if report.get("grade") == grade else {**report, "grade": grade}
