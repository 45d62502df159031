"""The generator: exact optimal lengths (proven), fairness, determinism, the report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from solver.errors import InvalidInput
from solver.production.generate import generate
from solver.puzzle import Puzzle, Rules
from solver.reference import reference_solve
from solver.rules import check, round_of
from solver.solve import solve


@pytest.mark.parametrize("length", range(2, 13))
def test_generated_puzzle_has_exactly_the_requested_optimal_length(length):
    g = generate(length, seed=42)
    p = g.puzzle
    assert solve(p).length == length == g.solution.length
    assert check(p, g.solution.moves).solved
    if length <= 6:
        assert reference_solve(p, max_states=2_000_000).length == length
    # Fair: set-up rule (no robot on a target), never void, the ricochet rule in force.
    assert all(p.board.target_at(cell) is None for _, cell in p.robots)
    assert not round_of(p).void
    assert p.rules == Rules()


@pytest.mark.slow
@pytest.mark.parametrize("length", range(13, 21))
def test_generated_long_puzzles(length):
    """Long lengths: walks from bank puzzles (and climbs); the proof is the solver's."""
    g = generate(length, seed=7)
    assert solve(g.puzzle).length == length == g.solution.length
    assert check(g.puzzle, g.solution.moves).solved
    assert not round_of(g.puzzle).void
    assert all(g.puzzle.board.target_at(cell) is None for _, cell in g.puzzle.robots)
    from solver.production import bank

    assert g.puzzle.code() not in {e["code"] for e in bank.entries()}, "a new position, not a bank entry"


def test_random_placements_only_without_bank_seeds():
    g = generate(12, seed=3, bank_seeds=False)
    assert solve(g.puzzle).length == 12


def test_ranges_boards_robots_and_targets():
    g = generate(min_length=5, max_length=7, board="green-A,yellow-B,red-B,blue-B", robots=5, target="vortex",
                 seed=3)
    assert 5 <= g.solution.length <= 7
    assert g.puzzle.board.spec == "green-A,yellow-B,red-B,blue-B" and len(g.puzzle.robots) == 5
    assert g.puzzle.goal.colour is None
    g = generate(6, board="random-1999", target="red", seed=4, rules=Rules("none"))
    assert g.puzzle.board.edition == "1999" and g.puzzle.goal.colour == "red"
    assert g.puzzle.rules.ricochet == "none" and not round_of(g.puzzle).void


def test_min_robots_moved():
    g = generate(6, seed=5, min_robots_moved=2)
    assert g.difficulty["fewest_robots_moved"] >= 2


def test_same_seed_same_puzzle_in_another_process():
    here = [generate(n, seed="s").puzzle.code() for n in (3, 7, 9)]
    code = ("from solver.production.generate import generate; "
            "print([generate(n, seed='s').puzzle.code() for n in (3, 7, 9)])")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert there.strip() == str(here)
    assert generate(7, seed="t").puzzle.code() != here[1]


def test_difficulty_report_fields_and_grades():
    easy, hard = generate(3, seed=1), generate(11, seed=1)
    for g in (easy, hard):
        d = g.difficulty
        assert d["optimal_length"] == g.solution.length
        assert d["fewest_robots_moved"] >= 1 and d["optimal_solutions"] >= 1
        assert d["bound_gap"] >= 0 and d["grade"] in ("beginner", "easy", "medium", "hard", "expert", "extreme")
    assert hard.difficulty["score"] > easy.difficulty["score"]
    out = easy.to_json()
    assert Puzzle.from_json(out) == easy.puzzle and out["optimal_length"] == 3


@pytest.mark.parametrize("kwargs,field", [
    ({}, "length"),
    ({"length": 0}, "min_length"),
    ({"length": 99}, "min_length"),
    ({"min_length": 8, "max_length": 5}, "min_length"),
    ({"length": 5, "robots": 3}, "robots"),
    ({"length": 5, "target": "pink"}, "target"),
])
def test_bad_requests_name_the_field(kwargs, field):
    with pytest.raises(InvalidInput) as e:
        generate(**kwargs)
    assert e.value.field == field


def test_cli_generate_json_lines():
    out = subprocess.run([sys.executable, "-m", "service.cli", "generate", "--length", "5", "--count", "3",
                          "--seed", "9"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    rows = [json.loads(x) for x in out.stdout.splitlines()]
    assert len(rows) == 3 and all(r["optimal_length"] == 5 for r in rows)
    assert all(solve(Puzzle.from_json(r)).length == 5 for r in rows)


def test_time_budget_ends_a_hopeless_search():
    from solver.production.generate import NoPuzzleFound

    with pytest.raises(NoPuzzleFound, match="pack"):
        generate(16, seed="budget", time_budget=0.2, board="green-A,yellow-B,red-B,blue-B")


def test_five_robot_walks_run_side_by_side_and_keep_their_seed(monkeypatch):
    """5-robot walks run on WALK_THREADS threads; the answer is the lowest-numbered
    walk's that finds one, whichever thread finishes first.  Here walks 0 and 1
    both find a puzzle: held back until walk 1 is done, walk 0 still gives it."""
    import random
    import threading
    import time as clock

    from solver.production import bank
    from solver.production import generate as gen
    from solver.production.pools import Library, packaged

    monkeypatch.setattr(gen, "FIFTH_SLACK", 0)  # starts of 14 moves only: a quick test
    starts = gen._walk_starts(14, 14, "random-2013", 5, Rules(), Library([packaged()]))
    banked = frozenset(e["code"] for e in bank.entries())
    tag = random.Random(2).getrandbits(64)  # the tag _walks_side_by_side draws from Random(2)
    one_walk, finished, walk_one_done = gen._one_walk, [], threading.Event()

    def numbered(*args: object, slow: int | None = None) -> object:
        rng = args[6]
        k = next(i for i in range(100) if random.Random(f"walk:{tag}:{i}").getstate() == rng.getstate())
        if k == slow:
            walk_one_done.wait(60)
        found, n = one_walk(*args)
        finished.append((k, found is not None))
        if k == 1:
            walk_one_done.set()
        return found, n

    def side_by_side(slow: int | None) -> str:
        finished.clear()
        monkeypatch.setattr(gen, "_one_walk", lambda *args: numbered(*args, slow=slow))
        found, _ = gen._walks_side_by_side(starts, banked, 14, 14, Rules(), 0, random.Random(2), 1000,
                                           clock.monotonic() + 120, None, gen.WALK_THREADS)
        assert found is not None and solve(found.puzzle).length == 14 and len(found.puzzle.robots) == 5
        return found.puzzle.code()

    steady = side_by_side(slow=None)
    assert (0, True) in finished and (1, True) in finished  # two walks find a puzzle
    walk_one_done.clear()
    assert side_by_side(slow=0) == steady and finished[0] == (1, True)  # walk 1 first, walk 0's answer
