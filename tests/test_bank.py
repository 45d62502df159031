"""The bank of verified long puzzles, and the generator serving from it."""

from __future__ import annotations

import pytest

from solver import bank
from solver.daily import DAILY_BANK_ENTRIES
from solver.generate import BANK_FROM, generate
from solver.puzzle import Puzzle
from solver.rules import check, round_of
from solver.solve import solve

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
    """Every entry was proven when it was banked; this proves again the ones the
    daily puzzle serves and a fixed sample of the rest (all of them take minutes)."""
    sample = list(ENTRIES[:DAILY_BANK_ENTRIES]) + list(ENTRIES[DAILY_BANK_ENTRIES::30])
    for e in sample:
        assert solve(Puzzle.from_code(e["code"])).length == e["length"], e["code"]


def test_long_lengths_are_served_from_the_bank_at_once():
    lengths = sorted({e["length"] for e in ENTRIES if e["length"] >= BANK_FROM and e["robots"] == 4
                      and e["ricochet"] == "turn"})
    assert lengths
    codes = {e["code"] for e in ENTRIES}
    for n in lengths:
        g = generate(n, seed=1, max_evaluations=0)  # no search at all: the bank answers
        assert g.solution.length == n and g.puzzle.code() in codes
        assert check(g.puzzle, g.solution.moves).solved
