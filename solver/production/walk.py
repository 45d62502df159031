"""The walk: from a position, move one robot to another free cell per step.

Long optima are rare, but they lie near each other: a neighbour of a 16-move
puzzle is 15 or 16 moves long far more often than a random position is.  Every
search for long puzzles (the generator's fallback, the bank's growth) is this
one loop with different settings: how many steps, which positions it moves
on to (at least `floor` moves, at most `ceiling`; with `climb` the floor rises
to each length it moves to), and how deep it solves.  Positions whose cheap
upper bound is already below min(floor, `want`) are skipped unsolved.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator

from solver.model.board import Cell
from solver.model.puzzle import Move, Puzzle
from solver.search.solution import Solution
from solver.search.solve import DEFAULT_STATE_BUDGET, Cancel, solve, upper_bound

SOLVE_BUDGET = 60.0  # seconds for one solve of the walk, or less when its deadline is nearer


def mutate(placement: dict[str, Cell], free: list[Cell], colours: tuple[str, ...], rng: random.Random) -> None:
    """Move one robot to a random free cell."""
    taken = set(placement.values())
    placement[rng.choice(colours)] = rng.choice([f for f in free if f not in taken])


def walk(start: Puzzle, rng: random.Random, *, steps: int, floor: int, depth: int, ceiling: int = 10_000,
         want: int | None = None, climb: bool = False, include_start: bool = False,
         deadline: float = math.inf, state_budget: int = DEFAULT_STATE_BUDGET, cancel: Cancel | None = None,
         start_solution: list[Move] | None = None, threads: int = 1) -> Iterator[tuple[Puzzle, Solution | None]]:
    """Yield each position met with its answer (None when its upper bound ruled
    it out unsolved).  The walk moves on from a position whose length n (depth
    + 1 when it is deeper than `depth`, -1 when unknown) has floor <= n <=
    ceiling; otherwise it steps back to the last such position, except while
    none has been found with a known length (floor < 0).  A caller stops it by
    leaving the loop; it also stops at `deadline` (monotonic seconds), which
    also bounds every solve, and when `cancel` is set (at once, mid-solve too).
    `start_solution`, moves that solve the start, spares its proof the last layer;
    `threads` is how many threads each proof's A* runs on."""
    free = start.board.start_cells()
    want = floor if want is None else want
    current = dict(start.robots)
    placement = dict(current)
    for step in range(steps + int(include_start)):
        if time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
            return
        if step or not include_start:
            mutate(placement, free, start.colours, rng)
        p = Puzzle.create(start.board, placement, start.goal, start.rules)
        if floor >= 0 and (ub := upper_bound(p)) is not None and ub < min(floor, want):
            answer, n = None, -1
        else:
            budget = min(SOLVE_BUDGET, max(deadline - time.monotonic(), 0.001))
            answer = solve(p, max_depth=depth, time_budget=budget, state_budget=state_budget, cancel=cancel,
                           known=start_solution if step == 0 and include_start else None, threads=threads)
            n = answer.length if answer.length is not None else (depth + 1 if answer.status == "depth_limit" else -1)
        yield p, answer
        if floor <= n <= ceiling:
            current = dict(placement)
            if climb:
                floor = n
        elif floor >= 0:
            placement = dict(current)
