"""The reference search: a plain breadth-first search, short enough to trust.

It is the oracle the C core is tested against, so it favours being obviously
correct over being fast.  A state is the robots' cells plus, under the ricochet
rule, each active robot's ricochet status; moves use `try_slide` and
`next_status`, the same functions that judge a player's answer.
"""

from __future__ import annotations

import time

from solver.model.geometry import DIRECTIONS
from solver.model.moves import TURNED, UNMOVED, next_status, round_of, try_slide
from solver.model.puzzle import Move, Puzzle, Ricochet
from solver.search.solution import Solution


def reference_solve(puzzle: Puzzle, max_depth: int = 64, max_states: int = 5_000_000) -> Solution:
    started = time.perf_counter()
    board, colours = puzzle.board, puzzle.colours
    rnd = round_of(puzzle)
    is_active = [c in rnd.active for c in colours]
    turn_rule = puzzle.rules.ricochet is Ricochet.TURN
    target = board.index(puzzle.goal.cell)
    n = len(colours)

    def answer(status: str, moves: list[Move], lower_bound: int, states: int) -> Solution:
        stats = {"states": states, "seconds": time.perf_counter() - started, "strategy": "reference"}
        return Solution(status, moves, lower_bound, rnd, stats)

    def solved(cells: tuple[int, ...], status: tuple[int, ...], r: int) -> bool:
        return cells[r] == target and is_active[r] and (not turn_rule or status[r] == TURNED)

    start = (tuple(board.index(c) for _, c in puzzle.robots), (UNMOVED,) * n)
    if not rnd.active:
        return answer("unsolvable", [], 0, 1)
    if any(solved(*start, r) for r in range(n)):
        return answer("optimal", [], 0, 1)

    parent: dict[_State, tuple[_State, Move] | None] = {start: None}
    frontier = [start]
    depth = 0
    while frontier:
        if depth >= max_depth:
            return answer("depth_limit", [], depth + 1, len(parent))
        depth += 1
        next_frontier = []
        for state in frontier:
            cells, status = state
            for r, colour in enumerate(colours):
                others = cells[:r] + cells[r + 1:]
                for d in range(4):
                    result = try_slide(board, others, colour, cells[r], d)
                    if isinstance(result, str):
                        continue  # not a legal move
                    end, deflected = result
                    new_cells = cells[:r] + (end,) + cells[r + 1:]
                    new_status = status
                    if turn_rule and is_active[r]:
                        new_status = status[:r] + (next_status(status[r], d, deflected),) + status[r + 1:]
                    nxt = (new_cells, new_status)
                    if nxt in parent:
                        continue
                    parent[nxt] = (state, Move(colour, DIRECTIONS[d]))
                    if solved(new_cells, new_status, r):
                        return answer("optimal", _path(parent, nxt), depth, len(parent))
                    if len(parent) >= max_states:
                        return answer("state_limit", [], depth, len(parent))
                    next_frontier.append(nxt)
        frontier = next_frontier
    return answer("unsolvable", [], depth + 1, len(parent))


# A search state: each robot's cell index, then each robot's ricochet status.
_State = tuple[tuple[int, ...], tuple[int, ...]]


def _path(parent: dict[_State, tuple[_State, Move] | None], state: _State) -> list[Move]:
    moves: list[Move] = []
    while (step := parent[state]) is not None:
        state, move = step
        moves.append(move)
    return moves[::-1]
