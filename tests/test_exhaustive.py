"""The retrograde analysis (every position of a board and goal at once) against the
optimal solver under the plain rule, on small custom boards with every feature and
on a real barrier board with three robots."""

from __future__ import annotations

import random

import pytest

from solver.model.board import Board, real_board
from solver.model.moves import check
from solver.model.puzzle import Goal, Puzzle, Rules
from solver.search.solve import exhaustive, solve
from tests.helpers import custom, random_custom_puzzle


def free_cells(board: Board) -> list[tuple[int, int]]:
    return [c for c in (board.cell(i) for i in range(board.cells))
            if c not in board.blocked and board.diagonal_at(c) is None]


def plain_length(board: Board, robots: dict, goal: Goal) -> int | None:
    answer = solve(Puzzle.create(board, robots, goal, Rules("none")))
    return answer.length if answer.status == "optimal" else None


def assert_paths_replay(board: Board, goal: Goal, positions: list) -> None:
    for n, robots, path in positions:
        verdict = check(Puzzle.create(board, robots, goal, Rules("none")), path)
        assert verdict.legal and verdict.solved and verdict.length == n, (robots, path, verdict)


def test_lengths_match_the_solver_on_small_boards():
    rng = random.Random(11)
    compared = boards = 0
    while boards < 120:
        p = random_custom_puzzle(rng)
        free = free_cells(p.board)
        if p.board.openings or len(p.robots) > 4 or len(free) < len(p.robots):
            continue
        boards += 1
        names = p.colours
        probes = [dict(zip(names, rng.sample(free, len(names)))) for _ in range(12)]
        ex = exhaustive(p.board, names, p.goal, limit=200, probes=probes, threads=rng.choice([1, 2]))
        for robots, n in zip(probes, ex.probes):
            assert n == plain_length(p.board, robots, p.goal), (p.board.to_json(), robots, p.goal)
            compared += 1
        assert_paths_replay(p.board, p.goal, ex.positions)
        # Every position is counted once: solvable ones by length, the rest as unsolvable.
        k, n = len(names), len(free)
        total = 1
        for i in range(k):
            total *= n - i
        assert sum(ex.counts) + ex.unsolvable == total
    assert compared == 120 * 12


def test_real_barrier_board_three_robots():
    board = real_board("green-B,blue-B,red-B,yellow-D")
    goal = Goal((8, 10), "yellow")
    names = ("red", "blue", "yellow")
    rng = random.Random(3)
    probes = [dict(zip(names, rng.sample(free_cells(board), 3))) for _ in range(60)]
    ex = exhaustive(board, names, goal, min_length=20, limit=5000, probes=probes)
    for robots, n in zip(probes, ex.probes):
        assert n == plain_length(board, robots, goal), robots
    # The longest positions come first in whole lengths; each path is optimal.
    assert ex.positions and ex.positions[0][0] == ex.longest
    assert {n for n, _, _ in ex.positions} == set(range(min(n for n, _, _ in ex.positions), ex.longest + 1))
    assert_paths_replay(board, goal, ex.positions[:40])
    for n, robots, _ in ex.positions[:3]:
        assert plain_length(board, robots, goal) == n


def test_capped_keeps_whole_lengths():
    board = custom(6, 6, walls=[[2, 2, "S"], [4, 1, "E"]])
    goal = Goal((2, 2), "red")
    names = ("red", "green", "blue")
    full = exhaustive(board, names, goal, min_length=0, limit=10**6)
    assert not full.capped
    assert len(full.positions) == sum(full.counts)
    top = full.counts[-1]
    part = exhaustive(board, names, goal, min_length=0, limit=top)
    assert part.capped and len(part.positions) == top
    assert {n for n, _, _ in part.positions} == {full.longest}


def test_bad_arguments_are_refused():
    board = custom(4, 4)
    goal = Goal((0, 0), "red")
    with pytest.raises(ValueError):
        exhaustive(board, ("red", "green", "blue", "yellow", "black"), goal)
    with pytest.raises(MemoryError):
        exhaustive(real_board("green-B,blue-B,red-B,yellow-D"), ("red", "green", "blue", "yellow"), goal,
                   state_budget=1 << 30)
    with pytest.raises(ValueError):
        exhaustive(custom(4, 4, openings=[[0, 1, "W"]]), ("red",), goal)
