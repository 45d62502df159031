"""Real boards from the packaged quadrants, and custom board validation."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from solver.errors import InvalidInput
from solver.model.board import Board, all_boards, quadrant_data, real_board, rotations, section_ids
from solver.model.geometry import SYMBOLS
from tests.conftest import outside

CENTRE = [(7, 7), (8, 7), (7, 8), (8, 8)]


def test_packaged_quadrants_are_the_outside_ones():
    with open(outside("boards/quadrants.json"), encoding="utf-8") as f:
        assert quadrant_data() == json.load(f)


def test_edition_counts():
    boards_2013 = list(all_boards("2013"))
    boards_1999 = list(all_boards("1999"))
    assert len(boards_2013) == len(set(boards_2013)) == 1536
    assert len(boards_1999) == len(set(boards_1999)) == 96
    assert set(boards_1999) <= set(boards_2013)
    assert len(section_ids("2013")) == 16 and len(section_ids("1999")) == 8


def test_every_distinct_board_is_one_rotation_class():
    seen = set()
    for spec in all_boards("2013"):
        turns = rotations(spec)
        assert not seen & set(turns)
        seen.update(turns)
    assert len(seen) == 6144  # every valid spec, each board in its four turns


def _check_invariants(board: Board) -> None:
    assert (board.width, board.height) == (16, 16)
    # Walls are seen alike from both neighbours.
    for y in range(16):
        for x in range(15):
            assert board.has_wall((x, y), "E") == board.has_wall((x + 1, y), "W")
    for y in range(15):
        for x in range(16):
            assert board.has_wall((x, y), "S") == board.has_wall((x, y + 1), "N")
    # The centrepiece is blocked and walled all round.
    assert board.blocked == frozenset(CENTRE)
    for x in (7, 8):
        assert board.has_wall((x, 6), "S") and board.has_wall((x, 9), "N")
    for y in (7, 8):
        assert board.has_wall((6, y), "E") and board.has_wall((9, y), "W")
    # 17 targets: 16 coloured (each colour and symbol once) and one vortex.
    chips = Counter((t.colour, t.symbol) for t in board.targets)
    assert len(board.targets) == 17 and all(n == 1 for n in chips.values())
    assert sum(t.is_vortex for t in board.targets) == 1
    assert {(c, s) for c, s in chips if c} == {(c, s) for c in ("red", "green", "blue", "yellow") for s in SYMBOLS}
    assert len({t.cell for t in board.targets}) == 17
    # Every target sits in an L: one horizontal and one vertical wall.
    for t in board.targets:
        vertical = board.has_wall(t.cell, "E") or board.has_wall(t.cell, "W")
        horizontal = board.has_wall(t.cell, "N") or board.has_wall(t.cell, "S")
        assert vertical and horizontal, t
    # Barriers never share a cell with a target or the centre.
    for d in board.diagonals:
        assert board.target_at(d.cell) is None and d.cell not in board.blocked


@pytest.mark.parametrize("edition", ["2013", "1999"])
def test_all_real_boards_assemble_and_hold_their_invariants(edition):
    for spec in all_boards(edition):
        board = real_board(spec)
        assert board.spec == spec and board.edition == ("1999" if edition == "1999" else board.edition)
        _check_invariants(board)


def test_barrier_sections_carry_two_barriers_each():
    board = real_board("green-D,red-D,blue-D,yellow-D")
    assert len(board.diagonals) == 8
    assert real_board("green-A,yellow-B,red-B,blue-B").diagonals == ()


def test_quadrant_rotation_matches_the_format_table():
    # green-A's red circle at (4,1) in the quadrant frame, placed in each corner.
    spots = {0: (4, 1), 1: (14, 4), 2: (11, 14), 3: (1, 11)}
    base = ["green-A", "red-B", "yellow-A", "blue-A"]
    for turns, cell in spots.items():
        ids = base[-turns:] + base[:-turns] if turns else base
        board = real_board(",".join(ids))
        assert board.chip("red", "circle").cell == cell


def test_spec_object_form_matches_the_string():
    assert real_board({"NW": "green-A", "NE": "yellow-B", "SE": "red-B", "SW": "blue-B"}) == \
        real_board("green-A,yellow-B,red-B,blue-B")


@pytest.mark.parametrize("spec,message", [
    ("green-A,green-B,red-B,blue-B", "colour marking green is used twice"),
    ("green-A,yellow-B,red-B,purple-Z", "unknown section 'purple-Z' at SW; valid sections are green-A"),
    ("green-A,yellow-B,red-B", "4 sections"),
    ("", "4 sections"),
])
def test_invalid_specs_are_refused_with_what_is_valid(spec, message):
    with pytest.raises(InvalidInput, match=message) as e:
        real_board(spec)
    assert e.value.field == "board"


@pytest.mark.parametrize("parts,field", [
    ({"width": 3, "height": 8}, "board.width"),
    ({"width": 8, "height": 33}, "board.height"),
    ({"width": 8, "height": 8, "walls": [[8, 0, "E"]]}, "board.walls[0]"),
    ({"width": 8, "height": 8, "walls": [[1, 0, "X"]]}, "board.walls[0]"),
    ({"width": 8, "height": 8, "targets": [{"cell": [1, 1], "colour": "pink", "symbol": "circle"}]},
     "board.targets[0].colour"),
    ({"width": 8, "height": 8, "targets": [{"cell": [1, 1], "colour": "red", "symbol": "star"}]},
     "board.targets[0].symbol"),
    ({"width": 8, "height": 8, "blocked": [[1, 1]], "targets": [{"cell": [1, 1], "colour": "red",
                                                                 "symbol": "circle"}]},
     "board.targets[0].cell"),
    ({"width": 8, "height": 8, "diagonals": [{"cell": [1, 1], "colour": "red", "orientation": "|"}]},
     "board.diagonals[0].orientation"),
    ({"width": 8, "height": 8, "openings": [[3, 3, "N"]]}, "board.openings[0]"),
])
def test_invalid_custom_boards_name_the_field(parts, field):
    with pytest.raises(InvalidInput) as e:
        Board.from_json(parts)
    assert e.value.field == field


def test_custom_board_json_round_trip():
    obj = {"width": 8, "height": 8,
           "walls": [[1, 0, "E"], [3, 3, "S"], [5, 5, "N"], [0, 0, "N"]],
           "blocked": [[3, 3]],
           "targets": [{"cell": [5, 2], "colour": "red", "symbol": "circle"}],
           "diagonals": [{"cell": [2, 6], "colour": "blue", "orientation": "/"}],
           "openings": [[0, 4, "W"]]}
    board = Board.from_json(obj)
    again = Board.from_json(board.to_json())
    assert again == board
    assert board.has_wall((5, 4), "S") and board.has_wall((0, 0), "N")
    assert not board.has_wall((0, 4), "W")
    assert [5, 4, "S"] in board.to_json()["walls"]


def test_real_board_object_form_is_the_same_board():
    board = real_board("yellow-D,red-D,blue-A,green-C")
    obj = board.to_object()
    assert obj["spec"] == board.spec
    del obj["spec"]
    assert Board.from_json(obj) == board
