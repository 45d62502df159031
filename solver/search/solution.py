"""A solver's answer: the docs/formats.md answer JSON, whichever search produced it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from solver.model.geometry import ROBOT_COLOURS
from solver.model.moves import Round, candidates
from solver.model.puzzle import Move, Puzzle, moves_from_json, moves_to_json

STATUSES = ("optimal", "unsolvable", "depth_limit", "timeout", "state_limit", "cancelled")


@dataclass
class Solution:
    """An answer in the docs/formats.md shape, with the round's facts and search statistics."""

    status: str
    moves: list[Move]
    lower_bound: int
    round: Round
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def length(self) -> int | None:
        return len(self.moves) if self.status == "optimal" else None

    @property
    def finisher(self) -> str | None:
        """The robot that ends on the target (None if none moves there)."""
        return self.moves[-1].robot if self.moves else None

    @property
    def robots_moved(self) -> list[str]:
        return [c for c in ROBOT_COLOURS if any(m.robot == c for m in self.moves)]

    @classmethod
    def from_json(cls, puzzle: Puzzle, answer: dict[str, Any]) -> Solution:
        """An answer of `puzzle` as to_json wrote it (a kept answer), as a Solution again."""
        length = answer.get("length")
        return cls(answer["status"], moves_from_json(answer.get("moves") or []), answer.get("lower_bound", length or 0),
                   Round(candidates(puzzle), bool(answer.get("void")), answer.get("void_reason")),
                   dict(answer.get("stats") or {}))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "length": self.length,
            "moves": moves_to_json(self.moves),
            "status": self.status,
        }
        if self.status == "unsolvable":
            out["message"] = "no solution exists"
        elif self.status != "optimal":
            out["lower_bound"] = self.lower_bound
            out["message"] = f"no solution in {self.lower_bound - 1} moves or fewer"
        out["void"] = self.round.void
        if self.round.void_reason:
            out["void_reason"] = self.round.void_reason
        if self.status == "optimal":
            out["finisher"] = self.finisher
            out["robots_moved"] = self.robots_moved
        out["stats"] = self.stats
        return out


HINT_LEVELS = {1: "the optimal length", 2: "how many robots move", 3: "which robots move",
               4: "the first move"}


def hint(moves: list[Move], level: int) -> dict[str, Any]:
    """What a player may ask for before the whole solution, in DriftingDroids'
    steps; each level tells everything the lower ones do.  The robots are those
    of this optimal solution (the one the API serves), in the order they first move."""
    if level not in HINT_LEVELS:
        raise ValueError(f"hint levels run from 1 to {max(HINT_LEVELS)}")
    out: dict[str, Any] = {"level": level, "optimal_length": len(moves)}
    robots = list(dict.fromkeys(m.robot for m in moves))
    if level >= 2:
        out["robots_moved"] = len(robots)
    if level >= 3:
        out["robots"] = robots
    if level >= 4:
        out["first_move"] = moves[0].to_json() if moves else None
    return out
