"""DriftingDroids game IDs: import and export, so positions can be shared with that program.

An ID such as `0765+42+2E21BD0F+93` is: four hex digits, the quadrants at NW,
NE, SE, SW (DriftingDroids numbers them 1A..4A, 1B..4B, 1C..4C, 1D..4D as
0..15, the digit being the colour marking 1 green, 2 blue, 3 red, 4 yellow);
then the robot count and the active robot (F: any robot, the vortex); then
each robot's cell as two hex digits (x + 16 y; robots red, green, blue,
yellow, then silver, our black); then the goal's cell.  DriftingDroids draws
the D sides without their diagonal barriers and keeps no rule options: a
puzzle on a D side keeps its barriers here, and imports take `rules` apart.
"""

from __future__ import annotations

import re

from solver.errors import InvalidInput
from solver.model.board import real_board, sections
from solver.model.geometry import ROBOT_COLOURS
from solver.model.puzzle import Goal, Puzzle, Rules

_DIGIT = {"green": 1, "blue": 2, "red": 3, "yellow": 4}
_ID = re.compile(r"^([0-9A-Fa-f]{4})\+([45])([0-4Ff])\+((?:[0-9A-Fa-f]{2}){4,5})\+([0-9A-Fa-f]{2})$")


def _number(section_id: str) -> int:
    q = sections()[section_id]
    return "ABCD".index(q["side"]) * 4 + _DIGIT[q["colour_marking"]] - 1


def _section(number: int) -> str:
    side, digit = "ABCD"[number // 4], number % 4 + 1
    colour = next(c for c, d in _DIGIT.items() if d == digit)
    return f"{colour}-{side}"


def to_driftingdroids_id(puzzle: Puzzle) -> str:
    """The DriftingDroids game ID of a puzzle on a real board with 4 or 5 robots."""
    board = puzzle.board
    if board.spec is None:
        raise InvalidInput("board", "DriftingDroids IDs exist only for boards of the 16 real quadrants")
    colours = puzzle.colours
    if colours not in (ROBOT_COLOURS[:4], ROBOT_COLOURS):
        raise InvalidInput("robots", "DriftingDroids IDs need red, green, blue and yellow (and optionally black)")
    quads = "".join(f"{_number(s):X}" for s in board.spec.split(","))
    active = "F" if puzzle.goal.colour is None else f"{colours.index(puzzle.goal.colour):X}"
    robots = "".join(f"{board.index(cell):02X}" for _, cell in puzzle.robots)
    return f"{quads}+{len(colours)}{active}+{robots}+{board.index(puzzle.goal.cell):02X}"


def driftingdroids_id(puzzle: Puzzle) -> str | None:
    """The puzzle's DriftingDroids ID where that program shows its board as we
    do (real quadrants without diagonal barriers: every 1999-edition board and
    the 2013 C sides) and its robots; None otherwise.  DriftingDroids plays
    without our rule options, so under the ricochet rule its optimum may be
    shorter than ours."""
    board = puzzle.board
    if board.spec is None or board.barriers or puzzle.colours not in (ROBOT_COLOURS[:4], ROBOT_COLOURS):
        return None
    return to_driftingdroids_id(puzzle)


def from_driftingdroids_id(game_id: str, rules: Rules | None = None) -> Puzzle:
    """The puzzle a DriftingDroids game ID names (rules default to docs/rules.md's)."""
    m = _ID.match(game_id.strip()) if isinstance(game_id, str) else None
    if not m:
        raise InvalidInput("game_id", "expected a DriftingDroids game ID like 0765+42+2E21BD0F+93")
    quads, count, active, robots, goal = m.groups()
    count = int(count)
    if len(robots) != 2 * count:
        raise InvalidInput("game_id", f"the ID announces {count} robots but lists {len(robots) // 2}")
    spec = ",".join(_section(int(q, 16)) for q in quads)
    try:
        board = real_board(spec)
    except InvalidInput as e:
        raise InvalidInput("game_id", e.message) from None
    cells = {ROBOT_COLOURS[i]: board.cell(int(robots[2 * i:2 * i + 2], 16)) for i in range(count)}
    goal_cell = board.cell(int(goal, 16))
    colour = None if active in "Ff" else ROBOT_COLOURS[int(active)]
    if colour is not None and int(active) >= count:
        raise InvalidInput("game_id", "the active robot is not among the robots")
    target = board.target_at(goal_cell)
    if target is None or target.colour != colour:
        raise InvalidInput("game_id", f"no {colour or 'vortex'} target at {list(goal_cell)} on {spec}")
    return Puzzle.create(board, cells, Goal(goal_cell, colour), rules)
