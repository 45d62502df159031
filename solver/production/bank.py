"""The bank: verified long puzzles, too rare to find inside a request (read-only data).

Lines of `data/bank.jsonl`, each a puzzle code with its proven optimal length,
one optimal solution and its difficulty report.  Maintainers grow it with
`ricochet bank` (`solver.production.maintain`), in a checkout; nothing writes
it at run time.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path
from typing import Any

from solver.model.board import Board, Cell
from solver.model.geometry import ROBOT_COLOURS
from solver.model.moves import round_of
from solver.model.puzzle import Move, Puzzle, Ricochet
from solver.production.generated import Generated
from solver.search.solution import Solution

BANK = Path(__file__).parent / "data" / "bank.jsonl"


@functools.cache
def entries() -> tuple[dict[str, Any], ...]:
    """The bank's entries, read on first use."""
    if not BANK.exists():
        return ()
    with open(BANK, encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


def matching(lo: int, hi: int, robots: int, ricochet: Ricochet, edition: str = "2013") -> list[dict[str, Any]]:
    return [e for e in entries() if lo <= e["length"] <= hi and e["robots"] == robots
            and e["ricochet"] == ricochet and e["edition"] == edition]


def solution_of(entry: dict[str, Any]) -> list[Move]:
    return [Move.from_json(m) for m in entry["solution"]]


def generated(entry: dict[str, Any]) -> Generated:
    """An entry as a generated puzzle (its optimum was proven when it was banked)."""
    p = Puzzle.from_code(entry["code"])
    solution = Solution("optimal", solution_of(entry), entry["length"], round_of(p), {"source": "bank"})
    return Generated(p, solution, entry["difficulty"])


def with_fifth_robot(p: Puzzle, rng: random.Random, solution: list[Move] | None = None) -> Puzzle:
    """A 4-robot puzzle with a fifth robot added.  5-robot puzzles this long are
    few, on few boards, and a fifth robot is often out of the way, so these start
    5-robot walks about as long as wanted.  Given an optimal `solution`, the fifth
    robot stands where no move of it passes, so the solution still replays: the
    5-robot optimum is at most as long (and equal unless the fifth robot opens a
    shortcut, which the solver rules out).  It stands on a cell with as few open
    sides as there are (a corner, else by a wall): there it offers the fewest
    new stops to the others and has the fewest moves of its own, so it opens a
    shortcut less often."""
    taken = {cell for _, cell in p.robots}
    free = [c for c in p.board.start_cells() if c not in taken]
    if solution:
        crossed = _crossed(p, solution)
        free = [c for c in free if p.board.index(c) not in crossed] or free
    cell = rng.choice(_most_walled(p.board, free))
    return Puzzle.create(p.board, {**dict(p.robots), ROBOT_COLOURS[4]: cell}, p.goal, p.rules)


def _most_walled(board: Board, cells: list[Cell]) -> list[Cell]:
    """The cells with the fewest open sides among `cells`."""
    def open_sides(cell: Cell) -> int:
        index = board.index(cell)
        return sum(board.steps[d][index] >= 0 for d in range(4))

    fewest = min(open_sides(c) for c in cells)
    return [c for c in cells if open_sides(c) == fewest]


def _crossed(p: Puzzle, solution: list[Move]) -> set[int]:
    """Every cell a robot enters while the solution is played."""
    from solver.model.moves import State, try_slide

    board, state, crossed = p.board, State.start(p), set()
    colours = p.colours
    for move in solution:
        r = colours.index(move.robot)
        path: list[int] = []
        others = state.cells[:r] + state.cells[r + 1:]
        try_slide(board, others, move.robot, state.cells[r], "NESW".index(move.direction), path)
        crossed.update(path)
        state = state.apply(move)
    return crossed
