"""Every rule of docs/rules.md sections 3 and 4, each pinned on a hand-built board."""

from __future__ import annotations

import pytest

from solver.model.board import real_board
from solver.model.moves import TURNED, State, check, round_of
from tests.helpers import after, custom, illegal, moves, puzzle

# -- sliding -----------------------------------------------------------------------


def test_robot_slides_until_the_board_edge():
    p = puzzle(custom(), {"red": (2, 2)}, (5, 5))
    assert after(p, "red E") == {"red": (5, 2)}
    assert after(p, "red N") == {"red": (2, 0)}
    assert after(p, "red W") == {"red": (0, 2)}
    assert after(p, "red S") == {"red": (2, 5)}


def test_robot_stops_at_a_wall_on_either_side_of_it():
    b = custom(walls=[[4, 2, "E"], [2, 0, "S"]])
    p = puzzle(b, {"red": (0, 2)}, (5, 5))
    assert after(p, "red E") == {"red": (4, 2)}
    # The wall S of (2,0) is the wall N of (2,1): seen from below too.
    p = puzzle(b, {"red": (2, 4)}, (5, 5))
    assert after(p, "red N") == {"red": (2, 1)}


def test_robot_stops_before_another_robot():
    p = puzzle(custom(), {"red": (0, 3), "blue": (4, 3)}, (5, 5))
    assert after(p, "red E") == {"red": (3, 3), "blue": (4, 3)}


def test_a_move_that_leaves_the_robot_in_place_is_not_a_move():
    p = puzzle(custom(walls=[[1, 1, "E"]]), {"red": (1, 1), "blue": (1, 2)}, (5, 5))
    assert illegal(p, "red E") == "the robot cannot move that way"
    assert illegal(p, "red S") == "the robot cannot move that way"
    assert illegal(p, "red W, red W") == "the robot cannot move that way"


def test_centrepiece_stops_robots_and_cannot_be_entered():
    board = real_board("green-A,yellow-B,red-B,blue-B")
    p = puzzle(board, {"red": (7, 0), "green": (0, 7), "blue": (15, 8), "yellow": (8, 9)}, (4, 1))
    cells = after(p, "red S, green E, blue W")
    assert cells["red"] == (7, 6)
    assert cells["green"] == (6, 7)
    assert cells["blue"] == (9, 8)
    assert illegal(p, "yellow N") == "the robot cannot move that way"
    with pytest.raises(ValueError, match="robots.red: cell \\[7, 7\\] is blocked"):
        p.with_robots({"red": (7, 7)})


def test_blocked_cell_on_a_custom_board_stops_robots():
    p = puzzle(custom(blocked=[[3, 2]]), {"red": (0, 2)}, (5, 5))
    assert after(p, "red E") == {"red": (2, 2)}


def test_every_move_counts_one_however_far():
    p = puzzle(custom(), {"red": (0, 0), "blue": (5, 5)}, (5, 0))
    verdict = check(p, moves("red E"))
    assert verdict.length == 1


# -- diagonal barriers ----------------------------------------------------------------

# A blue barrier at (3,3) on a 7x7 board; a red robot enters it from each side.
DEFLECTIONS = [
    ("/", (0, 3), "E", (3, 0)),   # E -> N
    ("/", (3, 6), "N", (6, 3)),   # N -> E
    ("/", (6, 3), "W", (3, 6)),   # W -> S
    ("/", (3, 0), "S", (0, 3)),   # S -> W
    ("\\", (0, 3), "E", (3, 6)),  # E -> S
    ("\\", (3, 0), "S", (6, 3)),  # S -> E
    ("\\", (6, 3), "W", (3, 0)),  # W -> N
    ("\\", (3, 6), "N", (0, 3)),  # N -> W
]


@pytest.mark.parametrize("orientation,start,direction,end", DEFLECTIONS)
def test_barrier_deflects_robots_of_other_colours(orientation, start, direction, end):
    b = custom(7, 7, diagonals=[{"cell": [3, 3], "colour": "blue", "orientation": orientation}])
    p = puzzle(b, {"red": start}, (6, 6))
    assert after(p, f"red {direction}") == {"red": end}
    assert State.start(p).apply(moves(f"red {direction}")[0]).status == (TURNED,)


@pytest.mark.parametrize("orientation", ["/", "\\"])
@pytest.mark.parametrize("start,direction,end", [((0, 3), "E", (6, 3)), ((3, 0), "S", (3, 6)),
                                                  ((6, 3), "W", (0, 3)), ((3, 6), "N", (3, 0))])
def test_barrier_lets_its_own_colour_pass(orientation, start, direction, end):
    b = custom(7, 7, diagonals=[{"cell": [3, 3], "colour": "blue", "orientation": orientation}])
    p = puzzle(b, {"blue": start}, (6, 6), colour="blue")
    assert after(p, f"blue {direction}") == {"blue": end}
    assert State.start(p).apply(moves(f"blue {direction}")[0]).status != (TURNED,)


def test_a_robot_cannot_stop_on_a_barrier():
    # Deflected north into a wall at once: the slide would end on the barrier.
    b = custom(7, 7, walls=[[3, 3, "N"]], diagonals=[{"cell": [3, 3], "colour": "blue", "orientation": "/"}])
    p = puzzle(b, {"red": (0, 3)}, (6, 6))
    assert illegal(p, "red E") == "the robot would stop on a diagonal barrier"
    # Passing straight through, but a robot stands just behind the barrier.
    p = puzzle(custom(7, 7, diagonals=[{"cell": [3, 3], "colour": "blue", "orientation": "/"}]),
               {"blue": (0, 3), "red": (4, 3)}, (6, 6))
    assert illegal(p, "blue E") == "the robot would stop on a diagonal barrier"


def test_a_slide_that_never_ends_is_not_allowed():
    # Four barriers bend a slide round a square, back through its own start cell.
    loop = [{"cell": [4, 1], "colour": "blue", "orientation": "\\"},
            {"cell": [4, 4], "colour": "blue", "orientation": "/"},
            {"cell": [1, 4], "colour": "blue", "orientation": "\\"},
            {"cell": [1, 1], "colour": "blue", "orientation": "/"}]
    p = puzzle(custom(diagonals=loop), {"red": (2, 1)}, (5, 5))
    assert illegal(p, "red E") == "the slide never ends"
    # The same robot leaving the loop the other way is fine.
    assert after(p, "red N") == {"red": (2, 0)}


def test_robots_cannot_start_on_a_barrier():
    b = custom(diagonals=[{"cell": [2, 2], "colour": "blue", "orientation": "/"}])
    with pytest.raises(ValueError, match="robots.red: .*diagonal barrier"):
        puzzle(b, {"red": (2, 2)}, (5, 5))


# -- edge openings ----------------------------------------------------------------------


def test_edge_opening_wraps_to_the_far_side_and_keeps_sliding():
    b = custom(5, 5, walls=[[3, 2, "W"]], openings=[[0, 2, "W"]])
    p = puzzle(b, {"red": (2, 2)}, (4, 4))
    assert after(p, "red W") == {"red": (3, 2)}


def test_edge_opening_blocked_by_a_robot_on_the_far_side():
    b = custom(5, 5, walls=[[3, 2, "W"]], openings=[[0, 2, "W"]])
    p = puzzle(b, {"red": (2, 2), "blue": (4, 2)}, (4, 4))
    assert after(p, "red W")["red"] == (0, 2)


def test_edge_opening_is_a_gap_in_one_wall_only():
    b = custom(5, 5, openings=[[0, 2, "W"]])
    p = puzzle(b, {"red": (2, 2)}, (4, 4))
    assert after(p, "red E") == {"red": (4, 2)}


def test_an_open_row_with_nothing_in_it_never_ends():
    b = custom(5, 5, openings=[[0, 2, "W"]])
    p = puzzle(b, {"red": (2, 2)}, (4, 4))
    assert illegal(p, "red W") == "the slide never ends"


def test_openings_only_on_the_outer_edge():
    with pytest.raises(ValueError, match=r"board.openings\[0\]: .*outer edge"):
        custom(5, 5, openings=[[2, 2, "W"]])


# -- the ricochet rule --------------------------------------------------------------------


def _status(p, text):
    state = State.start(p)
    for m in moves(text):
        state = state.apply(m)
    return dict(zip(p.colours, state.status))


def test_ricochet_turn_across_interleaved_moves_counts():
    p = puzzle(custom(), {"red": (2, 3), "blue": (5, 5)}, (5, 0))
    assert _status(p, "red N, blue W, red E")["red"] == TURNED


def test_ricochet_reversal_is_not_a_turn():
    p = puzzle(custom(), {"red": (2, 3), "blue": (5, 5)}, (5, 0))
    assert _status(p, "red E, red W")["red"] != TURNED
    assert _status(p, "red N, blue W, red S, red N")["red"] != TURNED


def test_ricochet_same_direction_twice_is_not_a_turn():
    # Blue blocks red's way east, then steps aside; red goes on east.
    p = puzzle(custom(), {"red": (0, 2), "blue": (3, 2)}, (5, 0))
    assert _status(p, "red E, blue N, red E")["red"] != TURNED


def test_solution_without_a_turn_fails_the_rule_but_passes_without_it():
    b = custom()
    p = puzzle(b, {"red": (0, 0), "blue": (5, 5)}, (0, 5))
    text = "red S, red N, red S"  # reaches (0,5) with vertical moves only: no turn
    v = check(p, moves(text))
    assert v.legal and v.reached_target and not v.solved and not v.ricochet
    assert "ricochet" in v.reason
    v = check(puzzle(b, {"red": (0, 0), "blue": (5, 5)}, (0, 5), ricochet="none"), moves(text))
    assert v.solved


def test_deflection_counts_as_a_ricochet():
    b = custom(7, 7, diagonals=[{"cell": [3, 3], "colour": "blue", "orientation": "/"}])
    p = puzzle(b, {"red": (0, 3)}, (3, 0))
    v = check(p, moves("red E"))
    assert v.solved and v.ricochet and v.length == 1


def test_passing_over_the_target_does_not_count():
    p = puzzle(custom(), {"red": (0, 2), "blue": (5, 5)}, (3, 2), ricochet="none")
    v = check(p, moves("red E"))
    assert v.legal and not v.reached_target and not v.solved


# -- the vortex ------------------------------------------------------------------------------


def _vortex_board(*extra_walls):
    """The vortex at (2,2) with a wall on its north side; a wall west of (2,4)."""
    return custom(targets=[{"cell": [2, 2], "colour": None, "symbol": "vortex"},
                           {"cell": [4, 4], "colour": "red", "symbol": "circle"}],
                  walls=[[2, 2, "N"], [2, 4, "W"], *extra_walls])


@pytest.mark.parametrize("robot", ["red", "green", "blue", "yellow", "black"])
def test_any_robot_may_finish_on_the_vortex(robot):
    others = iter([(0, 0), (1, 0), (3, 0), (4, 0), (5, 0)])
    robots = {c: (5, 4) if c == robot else next(others)
              for c in ("red", "green", "blue", "yellow", "black")}
    p = puzzle(_vortex_board(), robots, (2, 2), colour=None)
    assert not round_of(p).void
    v = check(p, moves(f"{robot} W, {robot} N"))
    assert v.solved and v.finisher == robot and v.ricochet


def test_vortex_reached_without_a_turn_does_not_count():
    p = puzzle(_vortex_board(), {"black": (2, 5), "red": (0, 0)}, (2, 2), colour=None)
    v = check(p, moves("black N"))
    assert v.reached_target and not v.solved and v.void
    assert check(puzzle(_vortex_board(), {"black": (2, 5), "red": (0, 0)}, (2, 2), colour=None,
                        ricochet="none"), moves("black N")).solved


def test_vortex_sightline_robots_that_see_the_vortex_are_not_active():
    robots = {"red": (2, 5), "blue": (5, 4)}
    p = puzzle(_vortex_board(), robots, (2, 2), colour=None, sightline=True)
    rnd = round_of(p)
    assert rnd.active == ("blue",) and not rnd.void
    assert not check(p, moves("blue N, red N")).solved  # red sees the vortex: not active
    assert check(p, moves("blue W, blue N")).solved
    # Without the house rule the same round is void: red reaches the vortex in one move.
    off = puzzle(_vortex_board(), robots, (2, 2), colour=None)
    assert round_of(off).void_reason == "the red robot reaches the target in one move (N)"


def test_vortex_sightline_void_when_no_robot_is_active():
    p = puzzle(_vortex_board([2, 2, "E"]), {"red": (2, 5), "blue": (0, 2)}, (2, 2), colour=None,
               sightline=True)
    rnd = round_of(p)
    assert rnd.void and rnd.active == () and "none is active" in rnd.void_reason


def test_chip_target_needs_its_own_robot():
    b = custom(targets=[{"cell": [4, 4], "colour": "red", "symbol": "circle"}], walls=[[4, 4, "E"]])
    p = puzzle(b, {"red": (0, 0), "blue": (0, 4)}, (4, 4))
    v = check(p, moves("blue E"))
    assert not v.reached_target and not v.solved


# -- void rounds -----------------------------------------------------------------------------


def test_void_when_the_active_robot_already_stands_on_the_target():
    p = puzzle(custom(), {"red": (5, 0), "blue": (0, 5)}, (5, 0))
    rnd = round_of(p)
    assert rnd.void and rnd.void_reason == "the red robot already stands on the target"


def test_void_when_the_active_robot_reaches_the_target_in_one_move():
    p = puzzle(custom(), {"red": (0, 0), "blue": (0, 5)}, (5, 0))
    rnd = round_of(p)
    assert rnd.void and rnd.void_reason == "the red robot reaches the target in one move (E)"
    # Still solvable under the ricochet rule, by a route with a turn.
    v = check(p, moves("red S, red E, red N"))
    assert v.solved and v.void


def test_not_void_when_another_robot_reaches_the_target_in_one_move():
    p = puzzle(custom(), {"red": (2, 3), "blue": (0, 0)}, (5, 0))
    assert not round_of(p).void


def test_a_non_active_robot_on_the_target_must_move_away():
    p = puzzle(custom(), {"red": (0, 2), "blue": (5, 0)}, (5, 0), ricochet="none")
    v = check(p, moves("red N, red E"))
    assert not v.reached_target  # red stops next to blue
    v = check(p, moves("blue S, red N, red E"))
    assert v.solved


# -- the rule options as one value, end to end ---------------------------------------


def test_the_rule_bits_are_the_c_cores():
    """Python's RuleFlag and the core's RULE_* name the same bits, and the core
    refuses a word with a bit it does not know."""
    from solver import _core
    from solver.model.puzzle import RuleFlag

    assert {f.name: f.value for f in RuleFlag} == {"PLAIN": _core.RULE_PLAIN,
                                                    "VORTEX_SIGHTLINE": _core.RULE_VORTEX_SIGHTLINE}
    assert sum(RuleFlag) == _core.RULES_KNOWN


def test_every_combination_of_options_survives_json_codes_and_the_core():
    """Each combination of the options (Rules.every) comes back from its JSON, its
    code and the request schema, and the core solves under it as the reference does."""
    from dataclasses import replace

    from service.shapes import Rules as RulesShape
    from solver.model.puzzle import Puzzle, Rules
    from solver.search.reference import reference_solve
    from solver.search.solve import solve

    every = Rules.every()
    assert len(every) == 2 ** len(Rules.options()) and len(set(every)) == len(every)
    assert set(RulesShape().fields) == set(Rules.options())
    b = _vortex_board()
    base = puzzle(b, {"red": (0, 0), "green": (2, 4)}, (2, 2), colour=None)  # green sees the vortex
    lengths = []
    for rules in every:
        p = replace(base, rules=rules)
        assert Rules.from_json(rules.to_json()) == rules and RulesShape().load(rules.to_json()) == rules.to_json()
        assert Puzzle.from_code(p.code()) == p and Rules.from_flags(rules.flags) == rules
        lengths.append(solve(p).length)
        assert lengths[-1] == reference_solve(p).length, rules
    assert lengths == [3, 1, 6, 6]  # turn, none, and with the sightline each (green is not active)


def test_options_after_the_first_are_given_by_keyword():
    from dataclasses import replace

    from solver.model.puzzle import Ricochet, Rules

    with pytest.raises(TypeError):
        Rules("none", True)  # type: ignore[misc]
    rules = Rules(ricochet=Ricochet.NONE, vortex_sightline=True)
    assert replace(rules, ricochet=Ricochet.TURN) == Rules(vortex_sightline=True)
    assert Rules("none").ricochet is Ricochet.NONE  # the JSON spelling reads as the enum
