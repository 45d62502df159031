"""The generator: exact optimal lengths (proven), fairness, determinism, the report."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from solver.errors import InvalidInput
from solver.model.moves import check, round_of
from solver.model.puzzle import Puzzle, Rules
from solver.production.generate import generate
from solver.search.reference import reference_solve
from solver.search.solve import solve


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
@pytest.mark.parametrize("length", [14, 17, 20])
def test_generated_long_puzzles(length):
    """Long lengths: walks from bank puzzles (and climbs); the proof is the solver's.  Three
    lengths of the eight from 13 to 20 (the same walk and climb for each; the suite's time)."""
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


def test_five_robot_puzzles_are_proven_on_two_threads_and_keep_their_seed():
    """5-robot walks prove their candidates with A* on two threads; the search is
    the same on every run, so a seed keeps its puzzle and its solution."""
    from solver.production import generate as gen
    from solver.production.pools import Library, packaged

    assert gen.FIVE_ROBOT_THREADS == 2
    library = Library([packaged()])
    made = [generate(15, robots=5, seed=7, pools=library) for _ in range(2)]
    assert made[0].puzzle.code() == made[1].puzzle.code()
    assert made[0].solution.moves == made[1].solution.moves
    p = made[0].puzzle
    assert len(p.robots) == 5 and solve(p).length == 15 and check(p, made[0].solution.moves).solved


@pytest.mark.parametrize("bank_seeds", [True, False])
def test_long_puzzles_are_found_by_the_walk(monkeypatch, bank_seeds):
    """Every long search walks through solver.production.walk.walk: the long
    puzzle generate returns is one the walk reached (from the bank's puzzles, or
    climbing from a random placement), not one a loop of its own moved to."""
    from solver.production import generate as generating

    walked: set[str] = set()
    real_walk = generating.walk

    def counting(*args, **kwargs):
        for p, answer in real_walk(*args, **kwargs):
            walked.add(p.code())
            yield p, answer

    monkeypatch.setattr(generating, "walk", counting)
    g = generating.generate(generating.LONG + 1, seed=f"walked-{bank_seeds}", bank_seeds=bank_seeds,
                            time_budget=120)
    assert g.puzzle.code() in walked
