"""Every optimal solution: the C core's listing against a plain enumeration over
breadth-first layers (the reference search's way), the folding of reorderings,
and the API."""

from __future__ import annotations

import random

from solver.model.moves import IllegalMove, State, round_of
from solver.model.puzzle import Move, Puzzle
from solver.search.orders import LISTED, classes, distinct
from solver.search.solve import every_solution, solution_facts, solve
from tests.helpers import random_custom_puzzle


def every_by_layers(p: Puzzle, length: int) -> set[tuple[Move, ...]]:
    """Every solution of `length` moves, plainly: breadth-first layers of states
    (cells and ricochet status, as the rules engine moves them), then every path
    that goes one layer down with each move and ends solved."""
    active = set(round_of(p).active)
    moves = [Move(c, d) for c in p.colours for d in "NESW"]
    start = State.start(p)
    depth = {(start.cells, start.status): 0}
    layer = [start]
    for n in range(1, length + 1):
        following = []
        for state in layer:
            for m in moves:
                try:
                    after = state.apply(m)
                except IllegalMove:
                    continue
                if (after.cells, after.status) not in depth:
                    depth[(after.cells, after.status)] = n
                    following.append(after)
        layer = following
    found: set[tuple[Move, ...]] = set()

    def walk(state: State, path: tuple[Move, ...]) -> None:
        if len(path) == length:
            if state.solved(active):
                found.add(path)
            return
        for m in moves:
            try:
                after = state.apply(m)
            except IllegalMove:
                continue
            if depth.get((after.cells, after.status)) == len(path) + 1:
                walk(after, (*path, m))

    walk(start, ())
    return found


def test_the_listing_is_every_optimal_solution_on_small_boards():
    """Small boards with walls, blocked cells, barriers and the vortex, under both
    ricochet options: the core lists exactly the solutions the plain enumeration finds."""
    rng = random.Random(43)
    checked = several = 0
    while checked < 120:
        p = random_custom_puzzle(rng)
        answer = solve(p, max_depth=5)
        if answer.status != "optimal" or answer.length < 2:
            continue
        listed = every_solution(p, answer.length, limit=100_000)
        assert listed is not None and listed.complete
        assert set(map(tuple, listed.listed)) == every_by_layers(p, answer.length), p.to_json()
        assert len(listed.listed) == listed.orderings == solution_facts(p, answer.length)["solutions"]
        checked += 1
        several += len(listed.listed) > 1
    assert several >= 20


def test_sample_puzzles_list_solutions_that_replay_to_the_optimum(samples):
    from solver.model.moves import check

    for doc in samples:
        p = Puzzle.from_json(doc)
        shown = distinct(p, doc["optimal_length"], limit=50)
        assert shown is not None and 1 <= shown["count"] <= shown["orderings"]
        assert shown["complete"] or shown["orderings"] > LISTED  # every ordering listed, up to LISTED
        for moves in shown["solutions"]:
            verdict = check(p, [Move(m["robot"], m["direction"]) for m in moves])
            assert verdict.solved and verdict.length == doc["optimal_length"]


def test_reorderings_of_independent_moves_are_one_solution():
    """A position where two robots' moves commute: both orders are listed as
    orderings, folded into one solution; moves that do not commute stay apart."""
    rng = random.Random(7)
    folded = kept_apart = 0
    for _ in range(400):
        p = random_custom_puzzle(rng)
        answer = solve(p, max_depth=8)
        if answer.status != "optimal" or answer.length < 3:
            continue
        listed = every_solution(p, answer.length)
        groups = classes(p, listed.listed)
        assert sum(len(g) for g in groups) == len(listed.listed)
        for group in groups:
            for other in group[1:]:  # same multiset of moves, same end
                assert sorted(map(str, other)) == sorted(map(str, group[0]))
        folded += sum(len(g) > 1 for g in groups)
        kept_apart += len(groups) > 1
    assert folded >= 5 and kept_apart >= 5
