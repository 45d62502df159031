"""DriftingDroids game IDs."""

from __future__ import annotations

import random

import pytest

from solver.errors import InvalidInput
from solver.formats.driftingdroids import from_driftingdroids_id, to_driftingdroids_id
from solver.model.puzzle import Puzzle
from tests.helpers import random_real_puzzle


def test_the_published_24_move_id_is_the_24_move_puzzle(quadrant_test_puzzles):
    # DriftingDroids' own default game ID, quoted in quadrants.json for the 24-move puzzle.
    t = next(t for t in quadrant_test_puzzles if t["optimal_moves"] == 24)
    p = from_driftingdroids_id("0765+42+2E21BD0F+93")
    assert p == Puzzle.from_json({**t, "rules": None})
    assert to_driftingdroids_id(p) == "0765+42+2E21BD0F+93"


def test_round_trip_on_random_real_puzzles():
    rng = random.Random(21)
    for _ in range(300):
        p = random_real_puzzle(rng, rng.choice([4, 5]), rng.choice(["1999", "2013"]))
        assert from_driftingdroids_id(to_driftingdroids_id(p), p.rules) == p


@pytest.mark.parametrize("bad", ["", "0765+42+2E21BD0F", "0765+42+2E21BD0F+94", "0065+42+2E21BD0F+93",
                                 "0765+52+2E21BD0F+93", "zz65+42+2E21BD0F+93"])
def test_bad_ids_are_refused(bad):
    with pytest.raises(InvalidInput) as e:
        from_driftingdroids_id(bad)
    assert e.value.field == "game_id"
