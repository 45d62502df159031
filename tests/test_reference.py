"""The reference search against hand-solved puzzles and independently known optima."""

from __future__ import annotations

import pytest

from solver.model.moves import check
from solver.model.puzzle import Puzzle
from solver.search.reference import reference_solve
from tests.helpers import custom, puzzle


def _solves(p: Puzzle, length: int) -> None:
    answer = reference_solve(p)
    assert answer.status == "optimal" and answer.length == length, answer
    verdict = check(p, answer.moves)
    assert verdict.legal and verdict.solved


def test_hand_solved_two_move_corner():
    # Red at (0,0) to (5,5) on an empty 6x6 board: E then S.
    _solves(puzzle(custom(), {"red": (0, 0)}, (5, 5)), 2)


def test_hand_solved_needs_a_helper():
    # Target in the open middle of row 2: red needs blue as a stop.
    # blue S (to (3,5)) ... red can't stop at (2,2) alone; blue to (3,2) via walls.
    b = custom(walls=[[3, 2, "S"]])
    # blue from (3,0) moves S and stops on (3,2) (wall below); red from (0,2) moves E, stops at (2,2).
    p = puzzle(b, {"red": (0, 2), "blue": (3, 0)}, (2, 2), ricochet="none")
    _solves(p, 2)
    answer = reference_solve(p)
    assert [str(m) for m in answer.moves] == ["blue S", "red E"]


def test_ricochet_rule_makes_a_straight_puzzle_longer():
    b = custom()
    straight = puzzle(b, {"red": (0, 0)}, (5, 0), ricochet="none")
    _solves(straight, 1)
    turned = puzzle(b, {"red": (0, 0)}, (5, 0))
    _solves(turned, 3)  # S, E, N


def test_unsolvable_puzzle_is_reported():
    # The target is walled in on all four sides.
    b = custom(walls=[[2, 2, "N"], [2, 2, "E"], [2, 2, "S"], [2, 2, "W"]])
    answer = reference_solve(puzzle(b, {"red": (0, 0)}, (2, 2)))
    assert answer.status == "unsolvable" and answer.moves == []


def test_zero_moves_when_the_robot_already_stands_there_without_the_rule():
    answer = reference_solve(puzzle(custom(), {"red": (1, 1)}, (1, 1), ricochet="none"))
    assert answer.status == "optimal" and answer.length == 0


def _within_reach(row: dict, states: int) -> bool:
    return row.get("oracle_states", 0) <= states


def test_sample_optima_within_quick_reach(samples):
    rows = [r for r in samples if _within_reach(r, 20_000)]
    assert len(rows) >= len(samples) // 3
    for row in rows:
        _solves(Puzzle.from_json(row), row["optimal_length"])


@pytest.mark.slow
def test_sample_optima_within_reach(samples):
    rows = [r for r in samples if _within_reach(r, 60_000) and not _within_reach(r, 20_000)]
    for row in rows:
        _solves(Puzzle.from_json(row), row["optimal_length"])


def test_sample_oracle_solutions_replay(samples):
    from solver.model.puzzle import moves_from_json

    for row in samples:
        p = Puzzle.from_json(row)
        verdict = check(p, moves_from_json(row["oracle_solution"]))
        assert verdict.legal and verdict.solved and verdict.length == row["optimal_length"]
        assert verdict.void == row["void"]
        assert verdict.finisher == row["finisher"]


@pytest.mark.slow
def test_quadrant_test_puzzles_within_reach(quadrant_test_puzzles):
    rows = [t for t in quadrant_test_puzzles if t["optimal_moves"] <= 9]
    assert len(rows) >= 8
    for t in rows:
        _solves(Puzzle.from_json({**t, "rules": {"ricochet": "none"}}), t["optimal_moves"])


def test_published_long_solutions_replay(quadrant_test_puzzles):
    from solver.model.puzzle import Move

    for t in quadrant_test_puzzles:
        if "known_solution" not in t:
            continue
        p = Puzzle.from_json({**t, "rules": {"ricochet": "none"}})
        verdict = check(p, [Move.from_json(m) for m in t["known_solution"]])
        assert verdict.solved and verdict.length == t["optimal_moves"]
