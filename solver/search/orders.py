"""Optimal solutions up to the order of independent moves.

Two solutions are one when they differ only in the order of independent moves:
two consecutive moves of different robots are independent where taking them the
other way round is legal and leaves every robot where it was after both (cells
and ricochet status alike), so the rest of the solution goes on the same.  The
classes are what such swaps connect; each is shown by the first of its
solutions the search met.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from solver.model.moves import IllegalMove, State
from solver.model.puzzle import Move, Puzzle, moves_to_json
from solver.search.solve import every_solution

LISTED = 2000  # orderings listed before the classes are counted: more, and the count is of those listed


def distinct(puzzle: Puzzle, length: int, *, limit: int, time_budget: float | None = None,
             state_budget: int = 256 << 20) -> dict[str, Any] | None:
    """The distinct optimal solutions of a puzzle of optimal `length`, as the API
    and `ricochet solve --all` show them: `count` (classes), `solutions` (the
    first `limit`, docs/formats.md moves), `orderings` (solutions counting every order
    of independent moves apart) and `complete` (every ordering was listed, so
    `count` is exact; else it counts the classes among the first LISTED).  None
    when the search ran out of time or of `state_budget` bytes."""
    found = every_solution(puzzle, length, limit=LISTED, time_budget=time_budget, state_budget=state_budget)
    if found is None:
        return None
    grouped = classes(puzzle, found.listed)
    return {"count": len(grouped), "complete": found.complete, "orderings": found.orderings,
            "solutions": [moves_to_json(group[0]) for group in grouped[:limit]]}


def classes(puzzle: Puzzle, solutions: Sequence[Sequence[Move]]) -> list[list[list[Move]]]:
    """`solutions` (all of one length) grouped into classes of reorderings, each
    class in the order its solutions were given, classes by their first."""
    index = {tuple(s): i for i, s in enumerate(solutions)}
    parent = list(range(len(solutions)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, moves in enumerate(solutions):
        for j in _swappable(puzzle, moves):
            swapped = (*moves[:j], moves[j + 1], moves[j], *moves[j + 2:])
            other = index.get(swapped)
            if other is not None:
                a, b = root(i), root(other)
                parent[max(a, b)] = min(a, b)
    grouped: dict[int, list[list[Move]]] = {}
    for i, moves in enumerate(solutions):
        grouped.setdefault(root(i), []).append(list(moves))
    return [grouped[k] for k in sorted(grouped)]


def _swappable(puzzle: Puzzle, moves: Sequence[Move]) -> list[int]:
    """The places j where moves j and j+1 are independent (see the module's docstring)."""
    states = [State.start(puzzle)]
    for m in moves:
        states.append(states[-1].apply(m))
    found = []
    for j in range(len(moves) - 1):
        a, b = moves[j], moves[j + 1]
        if a.robot == b.robot:
            continue
        try:
            after = states[j].apply(b).apply(a)
        except IllegalMove:
            continue
        if after.cells == states[j + 2].cells and after.status == states[j + 2].status:
            found.append(j)
    return found
