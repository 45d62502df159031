"""Puzzles as values: validation with named fields, canonical JSON, codes, hashes."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.errors import InvalidInput
from solver.model.board import Board, all_boards, real_board
from solver.model.geometry import ROBOT_COLOURS, SYMBOLS
from solver.model.puzzle import Goal, Move, Puzzle, Rules

SPECS = list(all_boards("2013"))
BASE = {"board": "green-A,yellow-B,red-B,blue-B",
        "robots": {"red": [14, 2], "green": [2, 2], "blue": [13, 11], "yellow": [15, 0]},
        "target": {"colour": "blue", "symbol": "triangle"}}


@st.composite
def real_puzzles(draw) -> Puzzle:
    board = real_board(draw(st.sampled_from(SPECS)))
    free = [(x, y) for y in range(16) for x in range(16)
            if (x, y) not in board.blocked and board.diagonal_at((x, y)) is None]
    colours = ["red", "green", "blue", "yellow"] + (["black"] if draw(st.booleans()) else [])
    cells = draw(st.lists(st.sampled_from(free), min_size=len(colours), max_size=len(colours), unique=True))
    t = draw(st.sampled_from(board.targets))
    rules = Rules(draw(st.sampled_from(["turn", "none"])), vortex_sightline=draw(st.booleans()))
    return Puzzle.create(board, dict(zip(colours, cells)), Goal(t.cell, t.colour, t.symbol), rules)


@st.composite
def custom_puzzles(draw) -> Puzzle:
    w, h = draw(st.integers(4, 32)), draw(st.integers(4, 32))
    cell = st.tuples(st.integers(0, w - 1), st.integers(0, h - 1))
    cells = draw(st.lists(cell, min_size=1, max_size=12, unique=True))
    blocked = cells[:1] if draw(st.booleans()) else []
    rest = cells[len(blocked):]
    walls = draw(st.lists(st.tuples(st.integers(0, w - 1), st.integers(0, h - 1), st.sampled_from("NESW")),
                          max_size=20))
    targets = []
    if rest:
        targets.append({"cell": list(rest[0]), "colour": draw(st.sampled_from(ROBOT_COLOURS)),
                        "symbol": draw(st.sampled_from(SYMBOLS))})
    diagonals = []
    if len(rest) > 1 and draw(st.booleans()):
        diagonals.append({"cell": list(rest[1]), "colour": draw(st.sampled_from(ROBOT_COLOURS)),
                          "orientation": draw(st.sampled_from(["/", "\\"]))})
    openings = [[0, draw(st.integers(0, h - 1)), "W"]] if draw(st.booleans()) else []
    board = Board.custom(w, h, [list(x) for x in walls], [list(c) for c in blocked], targets, diagonals, openings)
    free = [c for c in rest[2:] if c not in {tuple(d["cell"]) for d in diagonals}] or []
    robot_cells = free[:draw(st.integers(1, 5))]
    if not robot_cells:
        robot_cells = [next((x, y) for y in range(h) for x in range(w)
                            if (x, y) not in board.blocked and not board.diagonal_at((x, y)))]
    colours = draw(st.permutations(ROBOT_COLOURS))[:len(robot_cells)]
    robots = dict(zip(colours, robot_cells))
    goal_cell = draw(st.sampled_from([(x, y) for y in range(h) for x in range(w)
                                      if (x, y) not in board.blocked and not board.diagonal_at((x, y))]))
    goal_colour = draw(st.sampled_from([None, *robots]))
    return Puzzle.create(board, robots, Goal(goal_cell, goal_colour), Rules(draw(st.sampled_from(["turn", "none"]))))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(real_puzzles(), custom_puzzles()))
def test_json_and_code_round_trip_exactly(p):
    assert Puzzle.from_json(p.to_json()) == p
    assert Puzzle.from_json(json.loads(json.dumps(p.to_json()))) == p
    code = p.code()
    assert Puzzle.from_code(code) == p
    assert Puzzle.from_code(code).code() == code
    assert Puzzle.from_json(p.to_json()).content_hash() == p.content_hash()
    assert all(ch.isalnum() or ch in "-_" for ch in code)


def test_real_board_codes_are_short():
    p = Puzzle.from_json({**BASE, "robots": {**BASE["robots"], "black": [0, 15]}})
    assert len(p.code()) <= 16


def test_code_and_hash_are_stable_across_releases():
    # Pinned: changing either breaks links and caches in the field.
    p = Puzzle.from_json(BASE)
    assert p.code() == "AQ2VAA8uIr0PAAk"
    assert p.content_hash() == "799bfb23af0f123b09be52ba99d74ca0ad913375d9fc4e3599a8b6432f3515f2"
    assert Puzzle.from_code("AQ2VAA8uIr0PAAk") == p


def test_canonical_json_fills_in_defaults():
    assert Puzzle.from_json(BASE).to_json() == {**BASE, "rules": {"ricochet": "turn", "vortex_sightline": False}}


def test_target_forms_that_name_the_same_chip_are_equal():
    by_chip = Puzzle.from_json(BASE)
    cell = list(by_chip.goal.cell)
    assert Puzzle.from_json({**BASE, "target": {"cell": cell, "colour": "blue"}}) == by_chip
    assert Puzzle.from_json({**BASE, "target": {"robot": "blue", "cell": cell}}) == by_chip
    vortex = Puzzle.from_json({**BASE, "target": {"symbol": "vortex"}})
    assert vortex.goal.colour is None and vortex.to_json()["target"] == {"symbol": "vortex"}


@pytest.mark.parametrize("change,field", [
    ({"robots": {"red": [7, 7], "green": [2, 2], "blue": [13, 11], "yellow": [15, 0]}}, "robots.red"),
    ({"robots": {"red": [16, 2], "green": [2, 2], "blue": [13, 11], "yellow": [15, 0]}}, "robots.red"),
    ({"robots": {"red": [2, 2], "green": [2, 2], "blue": [13, 11], "yellow": [15, 0]}}, "robots.green"),
    ({"robots": {"red": [14, 2], "pink": [2, 2]}}, "robots.pink"),
    ({"target": {"colour": "blue", "symbol": "star"}}, "target.symbol"),
    ({"target": {"colour": "pink", "symbol": "circle"}}, "target.colour"),
    ({"target": {"cell": [16, 0], "colour": "red"}}, "target.cell"),
    ({"target": {"cell": [7, 7], "colour": "red"}}, "target.cell"),
    ({"target": {"cell": [3, 3], "colour": "black"}}, "target.colour"),
    ({"rules": {"ricochet": "sometimes"}}, "rules.ricochet"),
    ({"rules": {"vortex_sightline": "yes"}}, "rules.vortex_sightline"),
    ({"rules": {"speed": 3}}, "rules.speed"),
    ({"board": "green-A,green-B,red-B,blue-B"}, "board"),
    ({"board": 7}, "board"),
])
def test_invalid_puzzles_name_the_field(change, field):
    with pytest.raises(InvalidInput) as e:
        Puzzle.from_json({**BASE, **change})
    assert e.value.field == field, str(e.value)


def test_robot_on_a_barrier_is_refused():
    board = real_board("green-D,red-D,blue-D,yellow-D")
    barrier = board.diagonals[0].cell
    with pytest.raises(InvalidInput, match="diagonal barrier") as e:
        Puzzle.from_json({**BASE, "board": board.spec, "target": {"symbol": "vortex"},
                          "robots": {**BASE["robots"], "red": list(barrier)}})
    assert e.value.field == "robots.red"


@pytest.mark.parametrize("code", ["", "!!!!", "AQ2V", "AQ2VAA8uIr0PAAkAAA", "Zm9vYmFy", "A" * 30000, "Ag"])
def test_corrupt_codes_are_refused(code):
    with pytest.raises(InvalidInput) as e:
        Puzzle.from_code(code)
    assert e.value.field.startswith("code")


def test_moves_parse_both_forms():
    assert Move.from_json("blue N") == Move.from_json({"robot": "blue", "direction": "N"}) == Move("blue", "N")
    with pytest.raises(InvalidInput, match="direction"):
        Move.from_json({"robot": "blue", "direction": "up"})
