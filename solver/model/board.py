"""Boards: walls, blocked cells, targets, diagonal barriers and edge openings.

Real boards are assembled from the packaged quadrant layouts and named by a
spec string (four section ids clockwise from the top-left); custom boards are
any size from 4 x 4 to 32 x 32.  A board is an immutable value.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from solver.errors import InvalidInput
from solver.model.geometry import DIRECTIONS, DX, DY, ROBOT_COLOURS, SYMBOLS, VORTEX

Cell = tuple[int, int]

MIN_SIZE, MAX_SIZE = 4, 32
REAL_SIZE = 16
POSITIONS = ("NW", "NE", "SE", "SW")
EDITIONS = ("1999", "2013")


class BoardKind(StrEnum):
    """A board asked for by kind rather than by spec: a random board of an edition
    (the beginner kind: a 2013 board without diagonal barriers)."""

    RANDOM_2013 = "random-2013"
    RANDOM_1999 = "random-1999"
    RANDOM_BEGINNER = "random-beginner"

    @property
    def edition(self) -> str:
        return "1999" if self is BoardKind.RANDOM_1999 else "2013"

    @property
    def barriers(self) -> bool:
        """Whether its boards may carry diagonal barriers."""
        return self is not BoardKind.RANDOM_BEGINNER

    @property
    def banked(self) -> bool:
        """Whether the bank of long puzzles holds puzzles of this kind (not beginner boards apart)."""
        return self is not BoardKind.RANDOM_BEGINNER

    @classmethod
    def of(cls, board: object) -> BoardKind | None:
        """The kind `board` names, or None for a spec or a board object."""
        return cls(board) if isinstance(board, str) and board in cls._value2member_map_ else None


@dataclass(frozen=True, order=True)
class Target:
    """A target space: a coloured symbol, or the vortex (colour None)."""

    cell: Cell
    colour: str | None
    symbol: str

    @property
    def is_vortex(self) -> bool:
        return self.colour is None

    def to_json(self) -> dict[str, Any]:
        return {"cell": list(self.cell), "colour": self.colour, "symbol": self.symbol}


@dataclass(frozen=True, order=True)
class Diagonal:
    """A diagonal barrier: robots of its colour pass, others turn 90 degrees."""

    cell: Cell
    colour: str
    orientation: str  # "/" or "\\"

    def to_json(self) -> dict[str, Any]:
        return {"cell": list(self.cell), "colour": self.colour, "orientation": self.orientation}


class Board:
    """An immutable board.  Use `Board.from_json`, `real_board` or `Board.custom`."""

    __slots__ = (
        "width", "height", "walls", "blocked", "targets", "diagonals", "openings",
        "spec", "cells", "barriers", "steps", "_diagonal_at", "_target_at", "_key", "_hash",
    )

    def __init__(
        self,
        width: int,
        height: int,
        walls: frozenset[tuple[int, int, str]],
        blocked: frozenset[Cell],
        targets: tuple[Target, ...],
        diagonals: tuple[Diagonal, ...],
        openings: frozenset[tuple[int, int, str]],
        spec: str | None = None,
    ) -> None:
        # Callers outside this module go through the validating constructors.
        self.width = width
        self.height = height
        self.walls = walls  # interior wall segments, each once as (x, y, "E"|"S")
        self.blocked = blocked
        self.targets = targets
        self.diagonals = diagonals
        self.openings = openings
        self.spec = spec
        self.cells = width * height
        self._key = (width, height, walls, blocked, targets, diagonals, openings)
        self._hash = hash(self._key)
        self._diagonal_at = {d.cell: d for d in diagonals}
        self.barriers = {d.cell[1] * width + d.cell[0]: d for d in diagonals}  # by flat index
        self._target_at = {t.cell: t for t in targets}
        self.steps = _step_table(self)  # [direction][cell] -> next cell or -1

    # -- identity -----------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.spec:
            return f"Board({self.spec!r})"
        return f"Board(custom {self.width}x{self.height})"

    # -- queries --------------------------------------------------------------

    def index(self, cell: Cell) -> int:
        return cell[1] * self.width + cell[0]

    def cell(self, index: int) -> Cell:
        return (index % self.width, index // self.width)

    def contains(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.width and 0 <= cell[1] < self.height

    def step(self, index: int, direction: int) -> int:
        """The cell entered by one step from `index`, or -1 where a wall, the
        edge or a blocked cell stops it.  Edge openings wrap to the far side."""
        return self.steps[direction][index]

    def diagonal_at(self, cell: Cell) -> Diagonal | None:
        return self._diagonal_at.get(cell)

    def target_at(self, cell: Cell) -> Target | None:
        return self._target_at.get(cell)

    def start_cells(self) -> list[Cell]:
        """Cells a robot may start on under the set-up rule: open, no target, no barrier."""
        return [(x, y) for y in range(self.height) for x in range(self.width)
                if (x, y) not in self.blocked and (x, y) not in self._diagonal_at and (x, y) not in self._target_at]

    def chip(self, colour: str | None, symbol: str) -> Target | None:
        """The board's target with that colour and symbol (the vortex: symbol 'vortex')."""
        for t in self.targets:
            if t.symbol == symbol and (symbol == VORTEX or t.colour == colour):
                return t
        return None

    def walls_in_order(self) -> list[tuple[int, int, str]]:
        """The interior walls row by row: the one order every drawing and document uses
        (a frozenset's own order changes with the process's hash seed)."""
        return sorted(self.walls, key=_wall_order)

    def has_wall(self, cell: Cell, side: str) -> bool:
        """Whether a wall (or the closed board edge) lies on that side of the cell."""
        x, y = cell
        d = DIRECTIONS.index(side)
        nx, ny = x + DX[d], y + DY[d]
        if not (0 <= nx < self.width and 0 <= ny < self.height):
            return (x, y, side) not in self.openings
        if side == "E":
            return (x, y, "E") in self.walls
        if side == "S":
            return (x, y, "S") in self.walls
        return (nx, ny, "E" if side == "W" else "S") in self.walls

    @property
    def edition(self) -> str | None:
        """'1999' when every section is an A or B side, '2013' for other real boards."""
        if self.spec is None:
            return None
        return "1999" if all(s[-1] in "AB" for s in self.spec.split(",")) else "2013"

    @property
    def has_barriers(self) -> bool:
        return bool(self.diagonals)

    # -- JSON -----------------------------------------------------------------

    def to_json(self) -> str | dict[str, Any]:
        """The docs/formats.md form: the spec string for a real board, else the object."""
        return self.spec if self.spec else self.to_object()

    def to_object(self) -> dict[str, Any]:
        """The full object form (also for real boards, with their spec beside)."""
        obj: dict[str, Any] = {
            "width": self.width,
            "height": self.height,
            "walls": [[x, y, s] for (x, y, s) in self.walls_in_order()],
            "blocked": [list(c) for c in sorted(self.blocked, key=_cell_order)],
            "targets": [t.to_json() for t in self.targets],
            "diagonals": [d.to_json() for d in self.diagonals],
            "openings": [[x, y, s] for (x, y, s) in sorted(self.openings, key=_wall_order)],
        }
        if self.spec:
            obj["spec"] = self.spec
        return obj

    @classmethod
    def from_json(cls, value: Any, field: str = "board") -> Board:
        if isinstance(value, str):
            return real_board(value, field)
        if isinstance(value, dict):
            if set(value) <= set(POSITIONS) and value:
                return real_board(value, field)
            return cls.custom(
                width=value.get("width"),
                height=value.get("height"),
                walls=value.get("walls", []),
                blocked=value.get("blocked", []),
                targets=value.get("targets", []),
                diagonals=value.get("diagonals", []),
                openings=value.get("openings", []),
                field=field,
            )
        raise InvalidInput(field, "expected a board spec string like "
                           "'green-A,yellow-B,red-B,blue-B' or a board object")

    @classmethod
    def custom(
        cls,
        width: Any,
        height: Any,
        walls: Any = (),
        blocked: Any = (),
        targets: Any = (),
        diagonals: Any = (),
        openings: Any = (),
        field: str = "board",
    ) -> Board:
        """Validate and build a custom board from the docs/formats.md object fields."""
        for name, size in (("width", width), ("height", height)):
            if not _is_int(size) or not MIN_SIZE <= size <= MAX_SIZE:
                raise InvalidInput(f"{field}.{name}",
                                   f"must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {size!r}")
        board_cells = _Checker(width, height, field)
        wall_set = set()
        for i, w in enumerate(_as_list(walls, f"{field}.walls")):
            x, y, side = board_cells.sided(w, f"{field}.walls[{i}]")
            seg = _canonical_wall(x, y, side, width, height)
            if seg is not None:
                wall_set.add(seg)
        blocked_set = set()
        for i, c in enumerate(_as_list(blocked, f"{field}.blocked")):
            blocked_set.add(board_cells.cell(c, f"{field}.blocked[{i}]"))
        if len(blocked_set) >= width * height:
            raise InvalidInput(f"{field}.blocked", "blocks every cell of the board")

        target_list = _custom_targets(board_cells, targets, blocked_set, field)
        taken = blocked_set | {t.cell for t in target_list}
        diagonal_list = _custom_diagonals(board_cells, diagonals, taken, field)
        opening_set = set()
        for i, o in enumerate(_as_list(openings, f"{field}.openings")):
            f = f"{field}.openings[{i}]"
            x, y, side = board_cells.sided(o, f)
            d = DIRECTIONS.index(side)
            if 0 <= x + DX[d] < width and 0 <= y + DY[d] < height:
                raise InvalidInput(f, f"[{x}, {y}, {side!r}] is not on the board's outer edge")
            opening_set.add((x, y, side))

        return cls(
            width, height, frozenset(wall_set), frozenset(blocked_set),
            tuple(sorted(target_list, key=_target_order)),
            tuple(sorted(diagonal_list, key=lambda d: _cell_order(d.cell))),
            frozenset(opening_set),
        )


def _custom_targets(board_cells: _Checker, targets: Any, blocked: set[Cell], field: str) -> list[Target]:
    """A custom board's targets, checked: each on a free cell of its own, each chip once."""
    target_list: list[Target] = []
    seen_cells: dict[Cell, str] = {}
    seen_chips: set[tuple[str | None, str]] = set()
    for i, t in enumerate(_as_list(targets, f"{field}.targets")):
        f = f"{field}.targets[{i}]"
        if not isinstance(t, dict):
            raise InvalidInput(f, "expected an object with 'cell', 'colour' and 'symbol'")
        cell = board_cells.cell(t.get("cell"), f"{f}.cell")
        symbol = t.get("symbol")
        colour = t.get("colour")
        if symbol == VORTEX:
            if colour not in (None, "any"):
                raise InvalidInput(f"{f}.colour", "the vortex has no colour: use null")
            colour = None
        else:
            if symbol not in SYMBOLS:
                raise InvalidInput(f"{f}.symbol",
                                   f"must be one of {', '.join(SYMBOLS + (VORTEX,))}, got {symbol!r}")
            if colour not in ROBOT_COLOURS:
                raise InvalidInput(f"{f}.colour",
                                   f"must be one of {', '.join(ROBOT_COLOURS)}, got {colour!r}")
        if cell in blocked:
            raise InvalidInput(f"{f}.cell", f"{list(cell)} is a blocked cell")
        if cell in seen_cells:
            raise InvalidInput(f"{f}.cell", f"{list(cell)} already holds the {seen_cells[cell]} target")
        if (colour, symbol) in seen_chips:
            raise InvalidInput(f, f"the {colour or ''} {symbol} target is listed twice".replace("  ", " "))
        seen_cells[cell] = f"{colour or ''} {symbol}".strip()
        seen_chips.add((colour, symbol))
        target_list.append(Target(cell, colour, symbol))
    return target_list


def _custom_diagonals(board_cells: _Checker, diagonals: Any, taken: set[Cell], field: str) -> list[Diagonal]:
    """A custom board's diagonal barriers, checked: each on a cell without a block, target or other barrier."""
    diagonal_list: list[Diagonal] = []
    diagonal_cells: set[Cell] = set()
    for i, d in enumerate(_as_list(diagonals, f"{field}.diagonals")):
        f = f"{field}.diagonals[{i}]"
        if not isinstance(d, dict):
            raise InvalidInput(f, "expected an object with 'cell', 'colour' and 'orientation'")
        cell = board_cells.cell(d.get("cell"), f"{f}.cell")
        if d.get("colour") not in ROBOT_COLOURS:
            raise InvalidInput(f"{f}.colour",
                               f"must be one of {', '.join(ROBOT_COLOURS)}, got {d.get('colour')!r}")
        if d.get("orientation") not in ("/", "\\"):
            raise InvalidInput(f"{f}.orientation", f"must be '/' or '\\', got {d.get('orientation')!r}")
        if cell in taken or cell in diagonal_cells:
            raise InvalidInput(f"{f}.cell", f"{list(cell)} is blocked, holds a target or another barrier")
        diagonal_cells.add(cell)
        diagonal_list.append(Diagonal(cell, d["colour"], d["orientation"]))
    return diagonal_list


# -- real boards ----------------------------------------------------------------


@functools.cache
def quadrant_data() -> dict[str, Any]:
    """The packaged quadrants.json (read on first use, never at import)."""
    return json.loads((Path(__file__).resolve().parents[1] / "data" / "quadrants.json").read_text(encoding="utf-8"))


@functools.cache
def sections() -> dict[str, dict[str, Any]]:
    """Quadrant layouts by id (`green-A` ... `yellow-D`)."""
    return {q["id"]: q for q in quadrant_data()["quadrants"]}


def section_ids(edition: str = "2013") -> list[str]:
    sides = "AB" if edition == "1999" else "ABCD"
    return [s for s in sections() if s[-1] in sides]


def parse_spec(spec: Any, field: str = "board") -> tuple[str, str, str, str]:
    """Four section ids (NW, NE, SE, SW) from a spec string or a {NW: .., ...} object."""
    if isinstance(spec, dict):
        missing = [p for p in POSITIONS if p not in spec]
        if missing:
            raise InvalidInput(field, f"missing position(s) {', '.join(missing)}; give NW, NE, SE and SW")
        ids = [spec[p] for p in POSITIONS]
    elif isinstance(spec, str):
        ids = [s.strip() for s in spec.split(",")]
    else:
        raise InvalidInput(field, "expected a board spec string like 'green-A,yellow-B,red-B,blue-B'")
    known = sections()
    if len(ids) != 4:
        raise InvalidInput(field, f"a board spec names 4 sections clockwise from the top-left, "
                           f"separated by commas, e.g. 'green-A,yellow-B,red-B,blue-B'; got {len(ids)}")
    for pos, s in zip(POSITIONS, ids):
        if not isinstance(s, str) or s not in known:
            raise InvalidInput(field, f"unknown section {s!r} at {pos}; valid sections are "
                               f"{', '.join(known)}")
    colours = [known[s]["colour_marking"] for s in ids]
    if len(set(colours)) != 4:
        repeated = sorted({c for c in colours if colours.count(c) > 1})
        raise InvalidInput(field, f"colour marking {', '.join(repeated)} is used twice; a board uses "
                           f"one section of each colour marking (red, green, blue, yellow)")
    return tuple(ids)


@functools.lru_cache(maxsize=2048)
def _assemble(ids: tuple[str, str, str, str]) -> Board:
    known = sections()
    walls: set[tuple[int, int, str]] = set()
    blocked: set[Cell] = set()
    targets: list[Target] = []
    diagonals: list[Diagonal] = []
    offsets = ((0, 0), (8, 0), (8, 8), (0, 8))
    for turns, (sid, (ox, oy)) in enumerate(zip(ids, offsets)):
        q = known[sid]

        def place(x: int, y: int, turns: int = turns, ox: int = ox, oy: int = oy) -> Cell:
            for _ in range(turns):
                x, y = 7 - y, x
            return (x + ox, y + oy)

        for x, y, side in q["walls"]:
            bx, by = place(x, y)
            bside = DIRECTIONS[(DIRECTIONS.index(side) + turns) % 4]
            seg = _canonical_wall(bx, by, bside, REAL_SIZE, REAL_SIZE)
            if seg is not None:
                walls.add(seg)
        for x, y in q["blocked"]:
            blocked.add(place(x, y))
        for t in q["targets"]:
            targets.append(Target(place(*t["cell"]), t["colour"], t["symbol"]))
        for d in q["diagonals"]:
            o = d["orientation"]
            if turns % 2:
                o = "\\" if o == "/" else "/"
            diagonals.append(Diagonal(place(*d["cell"]), d["colour"], o))
    return Board(
        REAL_SIZE, REAL_SIZE, frozenset(walls), frozenset(blocked),
        tuple(sorted(targets, key=_target_order)),
        tuple(sorted(diagonals, key=lambda d: _cell_order(d.cell))),
        frozenset(), spec=",".join(ids),
    )


def real_board(spec: Any, field: str = "board") -> Board:
    """The real board named by `spec` (see docs/formats.md), validated."""
    return _assemble(parse_spec(spec, field))


def all_boards(edition: str = "2013") -> Iterator[str]:
    """Every distinct board of an edition, as spec strings (2013: 1,536; 1999: 96).

    Turning a whole board does not make a new one, so each board is named once,
    in the rotation that puts the green section at the top-left."""
    if edition not in EDITIONS:
        raise InvalidInput("edition", f"must be one of {', '.join(EDITIONS)}, got {edition!r}")
    by_colour: dict[str, list[str]] = {}
    for sid in section_ids(edition):
        by_colour.setdefault(sections()[sid]["colour_marking"], []).append(sid)
    for others in itertools.permutations(("red", "blue", "yellow")):
        for combo in itertools.product(by_colour["green"], *(by_colour[c] for c in others)):
            yield ",".join(combo)


def rotations(spec: str) -> list[str]:
    """The four spec strings of one board turned by 0..3 quarter turns clockwise."""
    ids = list(parse_spec(spec))
    return [",".join(ids[-k:] + ids[:-k]) if k else ",".join(ids) for k in range(4)]


# -- helpers ----------------------------------------------------------------------


def _step_table(board: Board) -> tuple[list[int], ...]:
    w, h = board.width, board.height
    wall = np.zeros((h, w, 4), dtype=bool)
    wall[0, :, 0] = wall[:, w - 1, 1] = wall[h - 1, :, 2] = wall[:, 0, 3] = True
    for x, y, side in board.walls:
        if side == "E":
            wall[y, x, 1] = wall[y, x + 1, 3] = True
        else:
            wall[y, x, 2] = wall[y + 1, x, 0] = True
    table: list[list[int]] = [[-1] * (w * h) for _ in range(4)]
    for y in range(h):
        for x in range(w):
            if (x, y) in board.blocked:
                continue
            for d in range(4):
                nx, ny = x + DX[d], y + DY[d]
                if (x, y, DIRECTIONS[d]) in board.openings:
                    nx, ny = nx % w, ny % h
                elif wall[y, x, d]:
                    continue
                if (nx, ny) not in board.blocked:
                    table[d][y * w + x] = ny * w + nx
    return tuple(table)


def _canonical_wall(x: int, y: int, side: str, w: int, h: int) -> tuple[int, int, str] | None:
    """One segment, named from the cell to its west or north; None for the outer edge."""
    if side == "N":
        x, y, side = x, y - 1, "S"
    elif side == "W":
        x, y, side = x - 1, y, "E"
    if x < 0 or y < 0 or (side == "E" and x >= w - 1) or (side == "S" and y >= h - 1):
        return None
    return (x, y, side)


def _cell_order(c: Cell) -> tuple[int, int]:
    return (c[1], c[0])


def _wall_order(w: tuple[int, int, str]) -> tuple[int, int, str]:
    return (w[1], w[0], w[2])


def _target_order(t: Target) -> tuple[int, int]:
    colour = ROBOT_COLOURS.index(t.colour) if t.colour else len(ROBOT_COLOURS)
    return (colour, (SYMBOLS + (VORTEX,)).index(t.symbol))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _as_list(v: Any, field: str) -> list[Any]:
    if v is None:
        return []
    if not isinstance(v, (list, tuple)):
        raise InvalidInput(field, "expected a list")
    return list(v)


class _Checker:
    """Validates cells and wall sides against one board size."""

    def __init__(self, width: int, height: int, field: str) -> None:
        self.width, self.height, self.field = width, height, field

    def cell(self, value: Any, field: str) -> Cell:
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or not all(_is_int(v) for v in value)):
            raise InvalidInput(field, f"expected a cell [x, y], got {value!r}")
        x, y = value
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise InvalidInput(field, f"cell {[x, y]} is off the {self.width} x {self.height} board")
        return (x, y)

    def sided(self, value: Any, field: str) -> tuple[int, int, str]:
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            raise InvalidInput(field, f"expected [x, y, side] with side N, E, S or W, got {value!r}")
        x, y = self.cell(value[:2], field)
        if value[2] not in DIRECTIONS:
            raise InvalidInput(field, f"side must be N, E, S or W, got {value[2]!r}")
        return (x, y, value[2])


@functools.cache
def _specs(edition: str, barriers: bool) -> tuple[str, ...]:
    return tuple(s for s in all_boards(edition) if barriers or "D" not in s)


def random_board_spec(rng: random.Random, edition: str = "2013", barriers: bool = True) -> str:
    """A board of the edition chosen by `rng`; without `barriers`, no diagonal-barrier
    section (the beginner option)."""
    return rng.choice(_specs(edition, barriers))
