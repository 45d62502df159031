"""SVG pictures of boards, puzzles and solutions, drawn like the printed game.

Colours are never the only cue: robots carry their initial, targets their
symbol shape, and solution moves are numbered.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from xml.sax.saxutils import escape

from solver.model.board import Board
from solver.model.geometry import DIRECTIONS
from solver.model.moves import try_slide
from solver.model.puzzle import Move, Puzzle

CELL = 40
MARGIN = 8
FILL = {
    "red": "#d7263d", "green": "#1b998b", "blue": "#2e5eaa",
    "yellow": "#f4c20d", "black": "#3a3a3a",
}
DARK = {
    "red": "#8c1020", "green": "#0f5f56", "blue": "#1a3a70",
    "yellow": "#9a7a00", "black": "#000000",
}
INITIAL = {"red": "R", "green": "G", "blue": "B", "yellow": "Y", "black": "K"}


def board_svg(board: Board, puzzle: Puzzle | None = None,
              solution: Sequence[Move] | None = None, title: str | None = None) -> str:
    """An SVG document of the board, with the puzzle's robots and goal and,
    if given, the solution's moves drawn as numbered paths."""
    w = board.width * CELL + 2 * MARGIN
    h = board.height * CELL + 2 * MARGIN
    out: list[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        f'role="img" font-family="Helvetica, Arial, sans-serif">',
        f"<title>{escape(title or _title(board, puzzle))}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="7" refY="5" markerWidth="4" '
        'markerHeight="4" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
        'fill="context-stroke"/></marker></defs>',
        f'<rect x="0" y="0" width="{w}" height="{h}" fill="#3b3b3b" rx="6"/>',
        f'<g transform="translate({MARGIN},{MARGIN})">',
    ]
    out.append(_cells(board))
    goal = puzzle.goal.cell if puzzle else None
    for t in board.targets:
        out.append(_target(t.cell, t.colour, t.symbol, highlight=t.cell == goal))
    if puzzle and puzzle.goal.symbol is None:
        out.append(_target(puzzle.goal.cell, puzzle.goal.colour, None, highlight=True))
    for d in board.diagonals:
        out.append(_diagonal(d.cell, d.colour, d.orientation))
    out.append(_walls(board))
    if puzzle:
        out.append(_chip(board, puzzle))
        if solution:
            out.append(_solution(puzzle, solution))
        for colour, cell in puzzle.robots:
            out.append(_robot(cell, colour))
    out.append("</g></svg>")
    return "\n".join(out)


def puzzle_svg(puzzle: Puzzle, solution: Sequence[Move] | None = None) -> str:
    return board_svg(puzzle.board, puzzle, solution)


def captioned_svg(puzzle: Puzzle, caption: str) -> str:
    """The puzzle as puzzle_svg draws it, with a line of text in a band below (a
    shared daily picture says which day it is)."""
    inner = puzzle_svg(puzzle)
    size = re.search(r'width="(\d+)" height="(\d+)"', inner)
    assert size is not None  # puzzle_svg's root element always has both
    w, h = (int(v) for v in size.groups())
    band = max(36, w // 14)
    inner = re.sub(r'^<svg ([^>]*?)width="\d+" height="\d+"', rf'<svg \1x="0" y="0" width="{w}" height="{h}"', inner,
                   count=1)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h + band}" width="{w}" '
            f'height="{h + band}" role="img" font-family="Helvetica, Arial, sans-serif">'
            f"<title>{escape(caption)}</title>"
            f'<rect width="{w}" height="{h + band}" fill="#ffffff"/>{inner}'
            f'<text x="{w / 2}" y="{h + band * 0.68}" text-anchor="middle" font-size="{band * 0.5:.0f}" '
            f'font-weight="bold" fill="#222">{escape(caption)}</text></svg>')


def sheet_svg(items: Sequence[tuple[Puzzle, str, Sequence[Move] | None]], columns: int = 4,
              title: str = "Puzzles") -> str:
    """Several puzzles on one printable sheet: each drawn as by puzzle_svg, scaled
    into a grid, with its caption (for example its code and length) below it."""
    thumb, caption, gap = 320, 28, 16
    columns = max(1, min(columns, len(items) or 1))
    rows = (len(items) + columns - 1) // columns
    w = columns * (thumb + gap) + gap
    h = rows * (thumb + caption + gap) + gap
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
           f'role="img" font-family="Helvetica, Arial, sans-serif">',
           f"<title>{escape(title)}</title>", f'<rect width="{w}" height="{h}" fill="#ffffff"/>']
    for i, (puzzle, text, solution) in enumerate(items):
        x = gap + (i % columns) * (thumb + gap)
        y = gap + (i // columns) * (thumb + caption + gap)
        inner = puzzle_svg(puzzle, solution)
        # The puzzle's own document, nested and scaled: its viewBox keeps the drawing whole.
        inner = re.sub(r'^<svg ([^>]*?)width="\d+" height="\d+"', rf'<svg \1x="{x}" y="{y}" width="{thumb}" '
                       rf'height="{thumb}"', inner, count=1)
        out.append(inner)
        out.append(f'<text x="{x + thumb / 2}" y="{y + thumb + 20}" text-anchor="middle" font-size="15" '
                   f'fill="#222">{escape(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _title(board: Board, puzzle: Puzzle | None) -> str:
    name = board.spec or f"custom {board.width} x {board.height} board"
    if puzzle is None:
        return f"Ricochet Robots board {name}"
    g = puzzle.goal
    what = f"{g.colour} {g.symbol or 'target'}" if g.colour else (g.symbol or "any-robot target")
    return f"Ricochet Robots puzzle on {name}: {what}"


def _centre(cell: tuple[int, int]) -> tuple[float, float]:
    return (cell[0] + 0.5) * CELL, (cell[1] + 0.5) * CELL


def _cells(board: Board) -> str:
    parts = []
    for y in range(board.height):
        for x in range(board.width):
            fill = "#2b2b2b" if (x, y) in board.blocked else ("#efe9dc" if (x + y) % 2 else "#e7e0d0")
            parts.append(f'<rect x="{x * CELL}" y="{y * CELL}" width="{CELL}" height="{CELL}" '
                         f'fill="{fill}" stroke="#c9c0ab" stroke-width="1"/>')
    return "<g>" + "".join(parts) + "</g>"


def wall_segments(board: Board) -> list[tuple[float, float, float, float]]:
    """Every wall as a segment (x1, y1, x2, y2) in the drawing's units (CELL a
    cell): inner walls, then the outer edge with gaps where the board opens."""
    out: list[tuple[float, float, float, float]] = []
    for x, y, side in board.walls_in_order():
        if side == "E":
            out.append(((x + 1) * CELL, y * CELL, (x + 1) * CELL, (y + 1) * CELL))
        else:
            out.append((x * CELL, (y + 1) * CELL, (x + 1) * CELL, (y + 1) * CELL))
    for x in range(board.width):
        for y, side, yy in ((0, "N", 0), (board.height - 1, "S", board.height)):
            if board.has_wall((x, y), side):
                out.append((x * CELL, yy * CELL, (x + 1) * CELL, yy * CELL))
    for y in range(board.height):
        for x, side, xx in ((0, "W", 0), (board.width - 1, "E", board.width)):
            if board.has_wall((x, y), side):
                out.append((xx * CELL, y * CELL, xx * CELL, (y + 1) * CELL))
    return out


def _walls(board: Board) -> str:
    stroke = 'stroke="#2a2118" stroke-width="5" stroke-linecap="round"'
    return "<g>" + "".join(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" {stroke}/>'
                           for x1, y1, x2, y2 in wall_segments(board)) + "</g>"


def shape_points(symbol: str, cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    """The corners of a target's triangle or hexagon ([] for other symbols)."""
    if symbol == "triangle":
        return [(cx, cy - r), (cx + r * 0.95, cy + r * 0.7), (cx - r * 0.95, cy + r * 0.7)]
    if symbol == "hexagon":
        return [(cx + r * math.cos(math.pi / 3 * k), cy + r * math.sin(math.pi / 3 * k)) for k in range(6)]
    return []


def _shape(symbol: str, cx: float, cy: float, r: float, fill: str, stroke: str) -> str:
    paint = f'fill="{fill}" stroke="{stroke}" stroke-width="1.5"'
    if symbol == "circle":
        return f'<circle cx="{cx}" cy="{cy}" r="{r * 0.85}" {paint}/>'
    if symbol == "square":
        s = r * 1.5
        return f'<rect x="{cx - s / 2}" y="{cy - s / 2}" width="{s}" height="{s}" {paint}/>'
    pts = shape_points(symbol, cx, cy, r)
    if not pts:
        return ""
    return f'<polygon points="{" ".join(f"{px:.1f},{py:.1f}" for px, py in pts)}" {paint}/>'


def _vortex(cx: float, cy: float, r: float) -> str:
    parts = []
    colours = ("red", "green", "blue", "yellow")
    for k, c in enumerate(colours):
        a0, a1 = math.pi / 2 * k, math.pi / 2 * (k + 1)
        x0, y0 = cx + r * math.cos(a0), cy + r * math.sin(a0)
        x1, y1 = cx + r * math.cos(a1), cy + r * math.sin(a1)
        parts.append(f'<path d="M{cx},{cy} L{x0:.1f},{y0:.1f} A{r},{r} 0 0 1 {x1:.1f},{y1:.1f} z" '
                     f'fill="{FILL[c]}"/>')
    spiral = " ".join(
        f"{cx + (r * t / 12) * math.cos(t):.1f},{cy + (r * t / 12) * math.sin(t):.1f}"
        for t in [i * 0.35 for i in range(34)])
    parts.append(f'<polyline points="{spiral}" fill="none" stroke="#fff" stroke-width="1.6"/>')
    return "".join(parts)


def _target(cell: tuple[int, int], colour: str | None, symbol: str | None, highlight: bool) -> str:
    cx, cy = _centre(cell)
    r = CELL * 0.3
    parts = []
    if highlight:
        parts.append(f'<rect x="{cell[0] * CELL + 2}" y="{cell[1] * CELL + 2}" width="{CELL - 4}" '
                     f'height="{CELL - 4}" fill="#fff7b0" stroke="#ff8c00" stroke-width="3" rx="4"/>')
    if colour is None:
        parts.append(_vortex(cx, cy, r))
    elif symbol is None:
        parts.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="none" stroke="{FILL[colour]}" '
                     f'stroke-width="3" stroke-dasharray="4 3"/>')
    else:
        parts.append(_shape(symbol, cx, cy, r, FILL[colour], DARK[colour]))
    return "".join(parts)


def _diagonal(cell: tuple[int, int], colour: str, orientation: str) -> str:
    x0, y0 = cell[0] * CELL + 3, cell[1] * CELL + 3
    x1, y1 = (cell[0] + 1) * CELL - 3, (cell[1] + 1) * CELL - 3
    if orientation == "/":
        y0, y1 = y1, y0
    return (f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="{DARK[colour]}" stroke-width="7" '
            f'stroke-linecap="round"/><line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" '
            f'stroke="{FILL[colour]}" stroke-width="4" stroke-linecap="round"/>')


def _robot(cell: tuple[int, int], colour: str) -> str:
    cx, cy = _centre(cell)
    r = CELL * 0.36
    text_fill = "#000" if colour == "yellow" else "#fff"
    return (f'<g><circle cx="{cx}" cy="{cy + 2}" r="{r}" fill="#000" opacity="0.25"/>'
            f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{FILL[colour]}" stroke="{DARK[colour]}" '
            f'stroke-width="2.5"/><text x="{cx}" y="{cy + 5}" text-anchor="middle" font-size="15" '
            f'font-weight="bold" fill="{text_fill}">{INITIAL[colour]}</text></g>')


def _chip(board: Board, puzzle: Puzzle) -> str:
    """The face-up target chip, drawn on the centrepiece when the board has one."""
    if not board.blocked:
        return ""
    xs = [c[0] for c in board.blocked]
    ys = [c[1] for c in board.blocked]
    cx = (min(xs) + max(xs) + 1) / 2 * CELL
    cy = (min(ys) + max(ys) + 1) / 2 * CELL
    g = puzzle.goal
    r = CELL * 0.45
    inner = _vortex(cx, cy, r * 0.8) if g.colour is None else (
        _shape(g.symbol, cx, cy, r * 0.75, FILL[g.colour], DARK[g.colour]) if g.symbol
        else f'<circle cx="{cx}" cy="{cy}" r="{r * 0.7}" fill="{FILL[g.colour]}"/>')
    return f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="#f8f4ea" stroke="#999" stroke-width="1.5"/>{inner}'


def solution_paths(puzzle: Puzzle, moves: Sequence[Move]) -> list[tuple[str, list[tuple[float, float]]]]:
    """Each move's robot and the centres it slides through (offset per robot so
    that crossing paths stay apart), up to the first move that cannot be played."""
    board = puzzle.board
    cells = {c: board.index(cell) for c, cell in puzzle.robots}
    out = []
    for move in moves:
        if move.robot not in cells:
            break
        start = cells[move.robot]
        others = [i for c, i in cells.items() if c != move.robot]
        path: list[int] = []
        result = try_slide(board, others, move.robot, start, DIRECTIONS.index(move.direction), path)
        if isinstance(result, str):
            break
        cells[move.robot] = result[0]
        offset = (list(FILL).index(move.robot) - 2) * 3  # keep crossing paths apart
        centres = (_centre(board.cell(i)) for i in [start] + path)
        out.append((move.robot, [(x + offset, y + offset) for x, y in centres]))
    return out


def _solution(puzzle: Puzzle, moves: Sequence[Move]) -> str:
    parts = []
    labels = []
    for n, (robot, pts) in enumerate(solution_paths(puzzle, moves), 1):
        parts.append(f'<polyline points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}" fill="none" '
                     f'stroke="{FILL[robot]}" stroke-width="4" stroke-linejoin="round" '
                     f'stroke-opacity="0.85" marker-end="url(#arrow)"/>')
        lx, ly = pts[-1]
        labels.append(f'<g><circle cx="{lx + 11}" cy="{ly - 11}" r="8" fill="#fff" '
                      f'stroke="{DARK[robot]}" stroke-width="1.5"/><text x="{lx + 11}" y="{ly - 7.5}" '
                      f'text-anchor="middle" font-size="10" font-weight="bold" fill="#000">{n}</text></g>')
    return "<g>" + "".join(parts) + "".join(labels) + "</g>"
