"""ASCII pictures of boards and puzzles, for terminals and test failures."""

from __future__ import annotations

from solver.model.board import Board
from solver.model.puzzle import Puzzle

_SYMBOL = {"circle": "c", "triangle": "t", "square": "s", "hexagon": "h"}
_ROBOT = {"red": "R", "green": "G", "blue": "B", "yellow": "Y", "black": "K"}

LEGEND = ("R G B Y K robots; rc gt bs yh targets (colour, symbol: circle triangle square hexagon); "
          "@@ vortex; r/ b\\ barriers; ### blocked; ! the puzzle's target")


def ascii_board(board: Board, puzzle: Puzzle | None = None) -> str:
    """Each cell is three characters: a robot letter, then a two-letter marker."""
    robots = {cell: colour for colour, cell in puzzle.robots} if puzzle else {}
    goal = puzzle.goal.cell if puzzle else None
    lines = []
    for y in range(board.height):
        top, row = ["+"], ["|" if board.has_wall((0, y), "W") else " "]
        for x in range(board.width):
            top.append("---" if board.has_wall((x, y), "N") else "   ")
            top.append("+")
            row.append(_cell(board, (x, y), robots, goal))
            row.append("|" if board.has_wall((x, y), "E") else " ")
        lines.append("".join(top))
        lines.append("".join(row))
    bottom = ["+"]
    for x in range(board.width):
        bottom.append("---" if board.has_wall((x, board.height - 1), "S") else "   ")
        bottom.append("+")
    lines.append("".join(bottom))
    return "\n".join(lines)


def _cell(board: Board, cell: tuple[int, int], robots: dict[tuple[int, int], str], goal: tuple[int, int] | None) -> str:
    if cell in board.blocked:
        return "###"
    first = _ROBOT[robots[cell]] if cell in robots else ("!" if cell == goal else " ")
    target = board.target_at(cell)
    barrier = board.diagonal_at(cell)
    if target is not None:
        marker = "@@" if target.is_vortex else (target.colour or "")[:1] + _SYMBOL[target.symbol]
    elif barrier is not None:
        marker = barrier.colour[0] + barrier.orientation
    else:
        marker = "  "
    return first + marker


def ascii_puzzle(puzzle: Puzzle) -> str:
    g = puzzle.goal
    what = (f"{g.colour or 'any'} robot to {list(g.cell)}"
            + (f" ({g.colour + ' ' if g.colour else ''}{g.symbol})" if g.symbol else ""))
    return f"{ascii_board(puzzle.board, puzzle)}\ntarget: {what}; rules: ricochet={puzzle.rules.ricochet}"
