"""The bank of verified long puzzles, and the generator serving from it."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from solver.model.geometry import ROBOT_COLOURS
from solver.model.moves import check, round_of
from solver.model.puzzle import Puzzle
from solver.production import bank, maintain
from solver.production.generate import BANK_FROM, generate
from solver.search.solve import solve

ENTRIES = bank.entries()


def test_every_entry_replays_to_a_fair_solution_of_its_length():
    assert ENTRIES, "the bank is empty: run `ricochet bank`"
    for e in ENTRIES:
        p = Puzzle.from_code(e["code"])
        verdict = check(p, bank.solution_of(e))
        assert verdict.legal and verdict.solved and verdict.length == e["length"], e["code"]
        assert not round_of(p).void
        assert all(p.board.target_at(cell) is None for _, cell in p.robots)
        assert e["difficulty"]["optimal_length"] == e["length"]
    assert len({e["code"] for e in ENTRIES}) == len(ENTRIES)


@pytest.mark.slow
def test_entries_are_optimal():
    """Every entry was proven when it was banked (and `ricochet bank --merge`
    replays each one); this proves the first 20 again (all of them would take
    many minutes)."""
    sample = list(ENTRIES[:20])
    for e in sample:
        assert solve(Puzzle.from_code(e["code"])).length == e["length"], e["code"]


@pytest.mark.slow
def test_the_longest_found_is_optimal():
    """The maximum the README records (4 robots, 2013 boards) is proven again."""
    e = max(bank.matching(0, maintain.MAX_BANK_LENGTH, 4, "turn"), key=lambda e: e["length"])
    assert solve(Puzzle.from_code(e["code"]), state_budget=maintain.BANK_STATE_BUDGET).length == e["length"]


def test_twenty_distinct_puzzles_for_every_length_from_16_to_the_longest():
    """The generator's acceptance: 4 robots, 2013 boards, the ricochet rule."""
    lengths = Counter(e["length"] for e in bank.matching(0, maintain.MAX_BANK_LENGTH, 4, "turn"))
    assert {n: lengths[n] for n in range(16, max(lengths) + 1) if lengths[n] < 20} == {}


def test_long_lengths_are_served_from_the_bank_at_once():
    lengths = sorted({e["length"] for e in ENTRIES if e["length"] >= BANK_FROM and e["robots"] == 4
                      and e["ricochet"] == "turn"})
    assert lengths
    codes = {e["code"] for e in ENTRIES}
    for n in lengths:
        g = generate(n, seed=1, max_evaluations=0)  # no search at all: the bank answers
        assert g.solution.length == n and g.puzzle.code() in codes
        assert check(g.puzzle, g.solution.moves).solved


def test_the_bank_obeys_its_variety_rule():
    """New positions only; no two entries on one board and target share their
    optimal solution; below CLUSTER_FROM moves at most PER_GOAL per board and target."""
    v = maintain.Variety()
    for e in ENTRIES:
        p = Puzzle.from_code(e["code"])
        assert v.admits(p, e["length"], e["solution"]), e["code"]
        v.add(p, e["length"], e["solution"])


def test_variety_refuses_repeats_and_caps_short_lengths():
    e = next(e for e in ENTRIES if e["length"] < maintain.CLUSTER_FROM and e["robots"] == 4)
    p = Puzzle.from_code(e["code"])
    v = maintain.Variety([e])
    assert not v.admits(p, e["length"], e["solution"])  # the same position
    other = [{"robot": "red", "direction": "N"}]
    moved = Puzzle.create(p.board, {**dict(p.robots), p.colours[-1]: next(
        c for c in p.board.start_cells() if c not in dict(p.robots).values())}, p.goal, p.rules)
    assert not v.admits(moved, e["length"], e["solution"])  # another position, the same solution
    assert v.admits(moved, e["length"], other)
    for i in range(maintain.PER_GOAL - 1):
        v.add(Puzzle.create(p.board, dict(p.robots), p.goal, p.rules), e["length"], [*other] * (i + 2))
    assert not v.admits(moved, e["length"], other)  # PER_GOAL entries on this board and target
    assert v.admits(moved, maintain.CLUSTER_FROM, other)  # long puzzles cluster: no cap
    taken = set(dict(moved.robots).values())
    fifth = next(c for c in p.board.start_cells() if c not in taken)
    more = Puzzle.create(p.board, {**dict(moved.robots), ROBOT_COLOURS[len(taken)]: fifth}, p.goal, p.rules)
    assert v.admits(more, e["length"], other)  # with another robot count the cap starts again


def test_merge_appends_only_new_fair_entries(tmp_path):
    """`ricochet bank --merge`: parallel runs' files join the bank file given; lines never move."""
    bank_file = tmp_path / "bank.jsonl"
    first = [json.dumps(e) for e in ENTRIES[:3]]
    bank_file.write_text("\n".join(first) + "\n")
    extra = tmp_path / "run.jsonl"
    lines = [json.dumps(e) for e in ENTRIES[2:6]]  # one already banked
    extra.write_text("\n".join(lines) + "\n")
    added = maintain.merge([extra], bank_file)
    assert added and {e["code"] for e in added} <= {e["code"] for e in ENTRIES[3:6]}
    text = bank_file.read_text().splitlines()
    assert text[:3] == first and len(text) == 3 + len(added)
    broken = tmp_path / "broken.jsonl"
    wrong = {**ENTRIES[10], "length": ENTRIES[10]["length"] + 1}
    broken.write_text(json.dumps(wrong) + "\n")
    if wrong["code"] not in {json.loads(t)["code"] for t in text}:
        with pytest.raises(ValueError, match="does not replay"):
            maintain.merge([broken], bank_file)


def test_lengths_beyond_the_bank_are_refused_at_once():
    from solver.production.generate import MAX_LENGTH, NoPuzzleFound

    longest = max(e["length"] for e in ENTRIES if e["robots"] == 4 and e["ricochet"] == "turn")
    with pytest.raises(NoPuzzleFound, match=f"the longest banked is {longest}"):
        generate(MAX_LENGTH, seed=1, max_evaluations=10**9)  # no search: it would never end


def test_five_robot_walks_start_from_four_robot_entries_with_a_fifth_robot():
    four = [Puzzle.from_code(e["code"]) for e in bank.matching(16, 17, 4, "turn")[:10]]
    starts = [bank.with_fifth_robot(p, random.Random(i)) for i, p in enumerate(four)]
    assert starts == [bank.with_fifth_robot(p, random.Random(i)) for i, p in enumerate(four)]  # per seed
    for p, original in zip(starts, four):
        assert p.colours == ROBOT_COLOURS[:5]
        fifth = p.robot(ROBOT_COLOURS[4])
        assert Puzzle.create(p.board, {c: cell for c, cell in p.robots if c != ROBOT_COLOURS[4]}, p.goal,
                             p.rules) == original
        assert fifth in p.board.start_cells() and fifth not in {cell for c, cell in original.robots}


def test_long_five_robot_puzzles_are_rated_without_counting_their_solutions(monkeypatch):
    """The count does not finish in time for them (FIVE_ROBOTS_UNCOUNTED_FROM):
    it is not attempted, so their report is the same on every machine; shorter
    5-robot puzzles are counted as before."""
    from solver.production import difficulty as rating
    from solver.search.solve import solution_facts

    counted = []
    monkeypatch.setattr(rating, "solution_facts", lambda *a, **k: counted.append(a) or solution_facts(*a, **k))
    entry = min((e for e in ENTRIES if e["robots"] == 5 and e["length"] >= rating.FIVE_ROBOTS_UNCOUNTED_FROM),
                key=lambda e: e["length"])
    report = rating.difficulty(Puzzle.from_code(entry["code"]), bank.generated(entry).solution)
    assert not counted and report["optimal_solutions"] is None and report["robot_switches"] is None
    assert report["optimal_length"] == entry["length"] and report["grade"]
    short = Puzzle.from_json({"board": "green-A,yellow-B,red-B,blue-B", "target": {"colour": "red", "symbol": "circle"},
                              "robots": {"red": [0, 0], "green": [15, 0], "blue": [0, 15], "yellow": [15, 15],
                                         "black": [7, 4]}})
    assert rating.difficulty(short, solve(short))["optimal_solutions"] >= 1 and len(counted) == 1
