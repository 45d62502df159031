"""What the producers hand back: a puzzle with its proven solution and report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, cast

from solver.formats.driftingdroids import driftingdroids_id
from solver.model.puzzle import Puzzle
from solver.play.grades import DifficultyReport
from solver.search.solution import Solution


class NoPuzzleFound(Exception):
    """The search gave up: the request is valid but no fitting puzzle was found in time."""


class PuzzleHead(TypedDict):
    """What every form of a made puzzle begins with (a pack's item, a random puzzle,
    `Generated.to_json`): the docs/formats.md puzzle, its code and optimal length."""

    board: Any  # a board spec, or a board object (docs/formats.md)
    robots: Any
    target: Any
    rules: NotRequired[Any]
    code: str
    optimal_length: int


class GeneratedJson(PuzzleHead):
    """`Generated.to_json`: the puzzle, its solution (moves as JSON), difficulty report
    and DriftingDroids id."""

    solution: list[dict[str, str]]
    difficulty: DifficultyReport
    driftingdroids_id: str | None


@dataclass
class Generated:
    puzzle: Puzzle
    solution: Solution
    difficulty: DifficultyReport

    def to_json(self) -> GeneratedJson:
        """A docs/formats.md puzzle with its solution and difficulty report beside it."""
        return cast(GeneratedJson, {
            **self.puzzle.to_json(), "code": self.puzzle.code(), "optimal_length": self.solution.length,
            "solution": [m.to_json() for m in self.solution.moves], "difficulty": self.difficulty,
            "driftingdroids_id": driftingdroids_id(self.puzzle)})
