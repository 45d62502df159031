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
CLOSED = 5000  # orderings one class's closure may reach before it is left unknown (`proven_classes`)


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


def proven_classes(puzzle: Puzzle, solutions: Sequence[Sequence[Move]], *, bound: int = CLOSED,
                   work: int = 4 * CLOSED, enough: int | None = None) -> int:
    """How many distinct classes `solutions` (some of one length's optimal
    solutions, not necessarily every one) prove the puzzle has, at least.

    Each listed solution's class is closed under the swaps of independent
    adjacent moves (a search over its reorderings, at most `bound` of them):
    the swap is its own inverse, so the closure is the whole class, and a
    solution in no closure found so far is in a class of its own.  A class
    whose closure passed `bound` (or the `work` left) is left unknown:
    another listed solution may be in it, so all such count as one.  Stops
    once `enough` are proven, or when the closures have reached `work`
    reorderings in all (what is proven by then is a lower bound still)."""
    codes: dict[Move, int] = {}  # reorderings are kept as tuples of small ints: hashed far faster than of Moves
    seen: set[tuple[int, ...]] = set()  # the classes closed so far, and part of each unknown one
    exact = unknown = 0
    for moves in solutions:
        key = tuple(codes.setdefault(m, len(codes)) for m in moves)
        if key in seen:
            continue
        if work <= 0:
            break
        closure, closed = _closure(puzzle, tuple(moves), key, min(bound, work))
        work -= len(closure)
        seen |= closure
        if not closed:
            unknown = 1  # in none of the classes closed so far, so another, but maybe one with a later solution
            continue
        exact += 1
        if enough is not None and exact + unknown >= enough:
            break
    return exact + unknown


def _closure(puzzle: Puzzle, moves: tuple[Move, ...], key: tuple[int, ...],
             bound: int) -> tuple[set[tuple[int, ...]], bool]:
    """The reorderings of `moves` (`key`: its moves' codes) the swaps of
    independent moves reach, by their codes, and whether that is all of its
    class (False: the search stopped at `bound`).  A swap at j changes only
    the state after move j, so a reordering's swappable places are its
    parent's but for j - 1 and j + 1 (j is one)."""
    states = [State.start(puzzle)]
    for m in moves:
        states.append(states[-1].apply(m))
    closure = {key}
    frontier = [(moves, key, states, frozenset(_swappable(puzzle, moves)))]
    while frontier:
        current, code, states, places = frontier.pop()
        for j in places:
            swapped_code = (*code[:j], code[j + 1], code[j], *code[j + 2:])
            if swapped_code in closure:
                continue
            if len(closure) >= bound:
                return closure, False
            closure.add(swapped_code)
            swapped = (*current[:j], current[j + 1], current[j], *current[j + 2:])
            after = [*states[:j + 1], states[j].apply(swapped[j]), *states[j + 2:]]
            near = {k for k in (j - 1, j + 1) if 0 <= k < len(swapped) - 1 and _independent(swapped, after, k)}
            frontier.append((swapped, swapped_code, after, frozenset((places - {j - 1, j + 1}) | near)))
    return closure, True


def _independent(moves: Sequence[Move], states: Sequence[State], j: int) -> bool:
    """Whether moves j and j+1 are independent, `states` the states along `moves`."""
    a, b = moves[j], moves[j + 1]
    if a.robot == b.robot:
        return False
    try:
        after = states[j].apply(b).apply(a)
    except IllegalMove:
        return False
    return after.cells == states[j + 2].cells and after.status == states[j + 2].status


def _swappable(puzzle: Puzzle, moves: Sequence[Move]) -> list[int]:
    """The places j where moves j and j+1 are independent (see the module's docstring)."""
    states = [State.start(puzzle)]
    for m in moves:
        states.append(states[-1].apply(m))
    return [j for j in range(len(moves) - 1) if _independent(moves, states, j)]
