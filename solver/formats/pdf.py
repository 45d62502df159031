"""Printable books of puzzles as PDF (reportlab): A4 or Letter, a chosen number
of puzzles a page, each numbered with its optimal length and grade and captioned
with its robot and target, the solutions at the back.  Boards are vector
drawings from the same geometry as the SVG pictures (solver/formats/svg.py:
cells, walls, targets, paths), and the text is set in Bitstream Vera, which
reportlab ships and the PDF embeds.  A club prints in black and white, so
nothing is told by colour alone: the goal's cell is hatched inside a thick
black frame, the robot to move wears a black ring, and every robot its
letter."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

from reportlab.lib.colors import HexColor
from reportlab.lib.pagesizes import A4, LETTER
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

from solver.model.board import Board
from solver.model.puzzle import Move, Puzzle

from .svg import CELL, DARK, FILL, INITIAL, MARGIN, shape_points, solution_paths, wall_segments

PAPERS = {"a4": A4, "letter": LETTER}
GRIDS = {1: (1, 1), 2: (1, 2), 4: (2, 2), 6: (2, 3), 9: (3, 3), 12: (3, 4), 20: (4, 5)}  # per page: columns, rows
SOLUTION_COLUMNS, SOLUTION_ROWS = 2, 12
SOLUTIONS_PER_PAGE = SOLUTION_COLUMNS * SOLUTION_ROWS
PAGE_MARGIN = 36.0  # points: half an inch
FONT, BOLD = "Vera", "VeraBd"
TITLE_SIZE, SMALLEST_TITLE = 11.0, 7.0  # points: a long title is set smaller, down to this, then cut


@dataclass(frozen=True)
class BookItem:
    """One puzzle of a book: its number, optimal length, grade and code, and the solution printed at the back."""

    puzzle: Puzzle
    number: int
    length: int
    grade: str | None
    code: str
    moves: Sequence[Move]


def book_pdf(items: Sequence[BookItem], title: str, paper: str = "a4", per_page: int = 4,
             solutions: bool = True) -> bytes:
    """The book: pages of `per_page` puzzles (a key of GRIDS), then the solutions,
    SOLUTIONS_PER_PAGE a page; every page numbered."""
    if paper not in PAPERS or per_page not in GRIDS:
        raise ValueError(f"paper is one of {sorted(PAPERS)} and per_page one of {sorted(GRIDS)}")
    _fonts()
    size = PAPERS[paper]
    buffer = io.BytesIO()
    c = Canvas(buffer, pagesize=size, invariant=True, pageCompression=1, initialFontName=FONT, initialFontSize=9)
    c.setTitle(title)
    c.setCreator("ricochet-service")
    c.setAuthor("ricochet-service")
    c.setSubject(f"{len(items)} Ricochet Robots puzzles")
    puzzle_pages = math.ceil(len(items) / per_page)
    pages = puzzle_pages + (math.ceil(len(items) / SOLUTIONS_PER_PAGE) if solutions else 0)
    for page in range(puzzle_pages):
        _frame(c, size, title, page + 1, pages)
        _puzzle_page(c, size, items[page * per_page:(page + 1) * per_page], per_page)
        c.showPage()
    if solutions:
        for page in range(pages - puzzle_pages):
            _frame(c, size, f"{title}: solutions", puzzle_pages + page + 1, pages)
            _solution_page(c, size, items[page * SOLUTIONS_PER_PAGE:(page + 1) * SOLUTIONS_PER_PAGE])
            c.showPage()
    c.save()
    return buffer.getvalue()


def _fonts() -> None:
    if FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont(FONT, "Vera.ttf"))  # in reportlab's own fonts folder
        pdfmetrics.registerFont(TTFont(BOLD, "VeraBd.ttf"))


def unprintable(text: str) -> str:
    """The characters of `text` the book's font has no glyph for ("" when it prints whole):
    a title is checked with this where it is given, so that no book shows empty boxes."""
    _fonts()
    glyphs = pdfmetrics.getFont(BOLD).face.charToGlyph
    return "".join(sorted({ch for ch in text if not glyphs.get(ord(ch))}))


def _fitted(text: str, font: str, size: float, width: float) -> tuple[str, float]:
    """`text` in the largest size down to SMALLEST_TITLE that fits `width`; cut with an ellipsis below that."""
    while size > SMALLEST_TITLE and pdfmetrics.stringWidth(text, font, size) > width:
        size -= 0.5
    while pdfmetrics.stringWidth(text, font, size) > width and len(text) > 1:
        text = text[:-2].rstrip() + "…"
    return text, size


def _frame(c: Canvas, size: tuple[float, float], title: str, page: int, pages: int) -> None:
    width, height = size
    c.setFillColor(HexColor("#222222"))
    text, points = _fitted(title, BOLD, TITLE_SIZE, width - 2 * PAGE_MARGIN)
    c.setFont(BOLD, points)
    c.drawString(PAGE_MARGIN, height - PAGE_MARGIN + 8, text)
    c.setFont(FONT, 9)
    c.drawRightString(width - PAGE_MARGIN, PAGE_MARGIN - 20, f"page {page} of {pages}")


def caption(item: BookItem) -> str:
    moves = "move" if item.length == 1 else "moves"
    return f"{item.number}. {item.length} {moves}" + (f" · {item.grade}" if item.grade else "")


def goal_text(puzzle: Puzzle) -> str:
    """The puzzle's robot and target in words ("Red robot to the red triangle"): what
    colour alone told, which black-and-white printing loses."""
    goal = puzzle.goal
    if goal.is_vortex:
        return "Any robot to the vortex"
    target = f"the {goal.colour} {goal.symbol}" if goal.symbol else "the marked cell"
    return f"{(goal.colour or '').capitalize()} robot to {target}"


def move_lines(moves: Sequence[Move], width: float, size: float) -> list[str]:
    """The moves ("red N, blue E, ...") broken into lines `width` wide between
    moves only: a move is never split from its direction."""
    words = [f"{m.robot} {m.direction}" + ("," if n < len(moves) - 1 else "") for n, m in enumerate(moves)]
    lines: list[str] = []
    for word in words:
        if lines and pdfmetrics.stringWidth(f"{lines[-1]} {word}", FONT, size) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _puzzle_page(c: Canvas, size: tuple[float, float], items: Sequence[BookItem], per_page: int) -> None:
    width, height = size
    columns, rows = GRIDS[per_page]
    cell_w = (width - 2 * PAGE_MARGIN) / columns
    cell_h = (height - 2 * PAGE_MARGIN - 10) / rows
    large = per_page <= 6
    label = 38.0 if large else 34.0
    for i, item in enumerate(items):
        x0 = PAGE_MARGIN + (i % columns) * cell_w
        top = height - PAGE_MARGIN - 10 - (i // columns) * cell_h
        side = min(cell_w, cell_h - label) - 12
        x = x0 + (cell_w - side) / 2
        draw_board(c, item.puzzle.board, item.puzzle, x, top - 6, side)
        middle = x0 + cell_w / 2
        c.setFillColor(HexColor("#222222"))
        c.setFont(BOLD, 11 if large else 9)
        c.drawCentredString(middle, top - side - 19, caption(item))
        goal, points = _fitted(goal_text(item.puzzle), FONT, 9.5 if large else 8, cell_w - 4)
        c.setFont(FONT, points)
        c.drawCentredString(middle, top - side - 19 - points - 2, goal)
        c.setFont(FONT, 6.5)
        c.setFillColor(HexColor("#555555"))
        c.drawCentredString(middle, top - side - 19 - points - 11, item.code)


def _solution_page(c: Canvas, size: tuple[float, float], items: Sequence[BookItem]) -> None:
    width, height = size
    col_w = (width - 2 * PAGE_MARGIN) / SOLUTION_COLUMNS
    row_h = (height - 2 * PAGE_MARGIN - 14) / SOLUTION_ROWS
    for i, item in enumerate(items):
        x = PAGE_MARGIN + (i // SOLUTION_ROWS) * col_w
        y = height - PAGE_MARGIN - 14 - (i % SOLUTION_ROWS) * row_h
        c.setFillColor(HexColor("#222222"))
        c.setFont(BOLD, 9)
        c.drawString(x, y, caption(item))
        lines, font_size = _wrap(item.moves, col_w - 12, row_h - 14)
        c.setFont(FONT, font_size)
        for n, line in enumerate(lines):
            c.drawString(x + 8, y - 11 - n * font_size * 1.2, line)


def _wrap(moves: Sequence[Move], width: float, height: float) -> tuple[list[str], float]:
    """The moves in lines `width` wide (broken between moves), in the largest size (8 to 4 pt) that fits `height`."""
    size = 8.0
    while True:
        lines = move_lines(moves, width, size)
        if len(lines) * size * 1.2 <= height or size <= 4:
            return lines, size
        size -= 0.5


# -- the board, as vectors ------------------------------------------------------------------


def draw_board(c: Canvas, board: Board, puzzle: Puzzle | None, x: float, top: float, side: float,
               moves: Sequence[Move] | None = None) -> None:
    """The board (with the puzzle's robots and goal, and `moves` as paths) in a
    square of `side` points whose top-left corner is (x, top), drawn as svg.py
    draws it: its units (CELL a cell), y downwards."""
    units = max(board.width, board.height) * CELL + 2 * MARGIN
    c.saveState()
    c.translate(x, top)
    c.scale(side / units, -side / units)
    c.setFillColor(HexColor("#3b3b3b"))
    c.roundRect(0, 0, units, units, 6, stroke=0, fill=1)
    c.translate(MARGIN, MARGIN)
    _cells(c, board)
    goal = puzzle.goal.cell if puzzle else None
    for t in board.targets:
        _target(c, t.cell, t.colour, t.symbol, t.cell == goal)
    if puzzle and puzzle.goal.symbol is None:
        _target(c, puzzle.goal.cell, puzzle.goal.colour, None, True)
    for d in board.diagonals:
        _diagonal(c, d.cell, d.colour, d.orientation)
    c.setStrokeColor(HexColor("#2a2118"))
    c.setLineWidth(5)
    c.setLineCap(1)
    for x1, y1, x2, y2 in wall_segments(board):
        c.line(x1, y1, x2, y2)
    if puzzle:
        if moves:
            _paths(c, puzzle, moves)
        for colour, cell in puzzle.robots:
            _robot(c, cell, colour, active=colour == puzzle.goal.colour)
    c.restoreState()


def _cells(c: Canvas, board: Board) -> None:
    c.setStrokeColor(HexColor("#c9c0ab"))
    c.setLineWidth(1)
    cells: dict[str, list[tuple[int, int]]] = {}
    for y in range(board.height):
        for x in range(board.width):
            fill = "#2b2b2b" if (x, y) in board.blocked else ("#efe9dc" if (x + y) % 2 else "#e7e0d0")
            cells.setdefault(fill, []).append((x, y))
    for fill, where in cells.items():  # one path per fill: a smaller, quicker page
        c.setFillColor(HexColor(fill))
        path = c.beginPath()
        for x, y in where:
            path.rect(x * CELL, y * CELL, CELL, CELL)
        c.drawPath(path, stroke=1, fill=1)


def _polygon(c: Canvas, points: Sequence[tuple[float, float]]) -> None:
    path = c.beginPath()
    path.moveTo(*points[0])
    for p in points[1:]:
        path.lineTo(*p)
    path.close()
    c.drawPath(path, stroke=1, fill=1)


def _shape(c: Canvas, symbol: str, cx: float, cy: float, r: float, colour: str) -> None:
    c.setFillColor(HexColor(FILL[colour]))
    c.setStrokeColor(HexColor(DARK[colour]))
    c.setLineWidth(1.5)
    if symbol == "circle":
        c.circle(cx, cy, r * 0.85, stroke=1, fill=1)
    elif symbol == "square":
        c.rect(cx - r * 0.75, cy - r * 0.75, r * 1.5, r * 1.5, stroke=1, fill=1)
    elif shape_points(symbol, cx, cy, r):
        _polygon(c, shape_points(symbol, cx, cy, r))


def _vortex(c: Canvas, cx: float, cy: float, r: float) -> None:
    for k, colour in enumerate(("red", "green", "blue", "yellow")):
        c.setFillColor(HexColor(FILL[colour]))
        c.wedge(cx - r, cy - r, cx + r, cy + r, -90 * (k + 1), 90, stroke=0, fill=1)
    c.setStrokeColor(HexColor("#ffffff"))
    c.setLineWidth(1.6)
    spiral = [(cx + (r * t / 12) * math.cos(t), cy + (r * t / 12) * math.sin(t)) for t in (i * 0.35 for i in range(34))]
    c.lines([(*a, *b) for a, b in zip(spiral, spiral[1:])])


def _target(c: Canvas, cell: tuple[int, int], colour: str | None, symbol: str | None, highlight: bool) -> None:
    cx, cy = (cell[0] + 0.5) * CELL, (cell[1] + 0.5) * CELL
    r = CELL * 0.3
    if highlight:
        _goal_cell(c, cell)
    if colour is None:
        _vortex(c, cx, cy, r)
    elif symbol is None:
        c.setStrokeColor(HexColor(FILL[colour]))
        c.setLineWidth(3)
        c.setDash(4, 3)
        c.circle(cx, cy, r, stroke=1, fill=0)
        c.setDash()
    else:
        _shape(c, symbol, cx, cy, r, colour)


def _goal_cell(c: Canvas, cell: tuple[int, int]) -> None:
    """The goal's cell as black and white prints it: light, hatched, in a thick black frame."""
    x, y = cell[0] * CELL, cell[1] * CELL
    c.setFillColor(HexColor("#fff7b0"))
    c.setStrokeColor(HexColor("#000000"))
    c.setLineWidth(4)
    c.roundRect(x + 2.5, y + 2.5, CELL - 5, CELL - 5, 3, stroke=1, fill=1)
    c.saveState()
    clip = c.beginPath()
    clip.rect(x + 4.5, y + 4.5, CELL - 9, CELL - 9)
    c.clipPath(clip, stroke=0, fill=0)
    c.setStrokeColor(HexColor("#000000"))
    c.setLineWidth(1)
    for k in range(-CELL, CELL, 6):  # hatching at 45 degrees
        c.line(x + k, y, x + k + CELL, y + CELL)
    c.restoreState()


def _diagonal(c: Canvas, cell: tuple[int, int], colour: str, orientation: str) -> None:
    x0, y0 = cell[0] * CELL + 3, cell[1] * CELL + 3
    x1, y1 = (cell[0] + 1) * CELL - 3, (cell[1] + 1) * CELL - 3
    if orientation == "/":
        y0, y1 = y1, y0
    c.setLineCap(1)
    for paint, width in ((DARK[colour], 7), (FILL[colour], 4)):
        c.setStrokeColor(HexColor(paint))
        c.setLineWidth(width)
        c.line(x0, y0, x1, y1)


def _label(c: Canvas, text: str, cx: float, cy: float, size: float, colour: str) -> None:
    """Text centred on (cx, cy), upright in the flipped drawing."""
    c.saveState()
    c.translate(cx, cy)
    c.scale(1, -1)
    c.setFillColor(HexColor(colour))
    c.setFont(BOLD, size)
    c.drawCentredString(0, -size * 0.35, text)
    c.restoreState()


def _robot(c: Canvas, cell: tuple[int, int], colour: str, active: bool = False) -> None:
    """A robot with its letter; the one to move ringed in black, white between (told apart without colour)."""
    cx, cy = (cell[0] + 0.5) * CELL, (cell[1] + 0.5) * CELL
    r = CELL * 0.36
    if active:
        c.setFillColor(HexColor("#ffffff"))
        c.setStrokeColor(HexColor("#000000"))
        c.setLineWidth(3.5)
        c.circle(cx, cy, CELL * 0.48, stroke=1, fill=1)
    c.setFillColor(HexColor(FILL[colour]))
    c.setStrokeColor(HexColor(DARK[colour]))
    c.setLineWidth(2.5)
    c.circle(cx, cy, r, stroke=1, fill=1)
    _label(c, INITIAL[colour], cx, cy, 15, "#000000" if colour == "yellow" else "#ffffff")


def _paths(c: Canvas, puzzle: Puzzle, moves: Sequence[Move]) -> None:
    drawn = solution_paths(puzzle, moves)
    c.setLineWidth(4)
    c.setLineJoin(1)
    for robot, pts in drawn:
        c.setStrokeColor(HexColor(FILL[robot]))
        c.lines([(*a, *b) for a, b in zip(pts, pts[1:])])
    for n, (robot, pts) in enumerate(drawn, 1):
        lx, ly = pts[-1]
        c.setFillColor(HexColor("#ffffff"))
        c.setStrokeColor(HexColor(DARK[robot]))
        c.setLineWidth(1.5)
        c.circle(lx + 11, ly - 11, 8, stroke=1, fill=1)
        _label(c, str(n), lx + 11, ly - 11, 10, "#000000")
