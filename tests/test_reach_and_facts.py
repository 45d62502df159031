"""Reach tables (one search rates every target) and facts over all optimal solutions."""

from __future__ import annotations

import random
from dataclasses import replace
from itertools import product

from solver.model.geometry import DIRECTIONS
from solver.model.moves import IllegalMove, State, round_of
from solver.model.puzzle import Goal, Move, Puzzle
from solver.search.solve import reach, solution_facts, solve
from tests.helpers import random_custom_puzzle, random_real_puzzle


def test_reach_agrees_with_solving_each_target():
    rng = random.Random(11)
    checked = 0
    for _ in range(12):
        p = random_real_puzzle(rng, rng.choice([4, 5]), rng.choice(["1999", "2013"]))
        p = Puzzle.create(p.board, dict(p.robots), p.goal, replace(p.rules, vortex_sightline=False))
        table = reach(p, max_depth=7)
        assert table.complete_to == 7
        for t in p.board.targets:
            q = Puzzle.create(p.board, dict(p.robots), Goal(t.cell, t.colour), p.rules)
            expected = solve(q, max_depth=7)
            got = table.goal_length(q.goal)
            if expected.status == "optimal":
                assert got == expected.length, (q.to_json(), got, expected.length)
            else:
                assert got is None
            checked += 1
    assert checked == 12 * 17


def test_reach_on_custom_boards_with_every_feature():
    rng = random.Random(12)
    for _ in range(150):
        p = random_custom_puzzle(rng)
        p = Puzzle.create(p.board, dict(p.robots), p.goal, replace(p.rules, vortex_sightline=False))
        table = reach(p, max_depth=6)
        expected = solve(p, max_depth=6)
        got = table.goal_length(p.goal)
        if expected.status == "optimal":
            assert got == expected.length, p.to_json()
        else:
            assert got is None, p.to_json()


def _all_solutions(p: Puzzle, length: int) -> list[list[Move]]:
    """Every legal sequence of exactly `length` moves that solves `p` (brute force)."""
    active = round_of(p).active
    found = []
    moves = [Move(c, d) for c in p.colours for d in DIRECTIONS]
    for seq in product(moves, repeat=length):
        state = State.start(p)
        try:
            for m in seq:
                state = state.apply(m)
        except IllegalMove:
            continue
        if state.solved(active):
            found.append(list(seq))
    return found


def test_facts_match_brute_force_enumeration():
    rng = random.Random(13)
    compared = 0
    while compared < 40:
        p = random_custom_puzzle(rng)
        if len(p.robots) > 3:
            continue
        answer = solve(p, max_depth=4)
        if answer.status != "optimal" or not 1 <= answer.length <= 4:
            continue
        sols = _all_solutions(p, answer.length)
        facts = solution_facts(p, answer.length)
        assert facts["solutions"] == len(sols), p.to_json()
        assert facts["fewest_robots"] == min(len({m.robot for m in s}) for s in sols)
        switches = min(sum(a.robot != b.robot for a, b in zip(s, s[1:])) for s in sols)
        assert facts["fewest_switches"] == switches
        assert any({m.robot for m in s} == set(facts["fewest_robots_moved"]) for s in sols)
        compared += 1


def test_facts_cap_the_count():
    p = Puzzle.from_json({"board": {"width": 6, "height": 6}, "robots": {"red": [0, 0], "blue": [5, 5],
                          "green": [3, 0]}, "target": {"cell": [5, 0], "colour": "red"},
                          "rules": {"ricochet": "none"}})
    assert solution_facts(p, 1)["solutions"] == 0  # green is in the way
    facts = solution_facts(p, 3, cap=2)
    assert facts["solutions"] == 2 and facts["capped"]
