"""Puzzles and moves as values: validation, canonical JSON, string codes, content hash.

`Puzzle.from_json(p.to_json()) == p` and `Puzzle.from_code(p.code()) == p`
hold for every valid puzzle; `p.content_hash()` is stable across processes
and releases, so it can key caches.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import operator
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field, fields
from enum import IntFlag, StrEnum
from typing import Any, cast, get_type_hints

from solver.errors import InvalidInput
from solver.model.board import Board, Cell, _Checker, sections
from solver.model.geometry import DIRECTIONS, ROBOT_COLOURS, SYMBOLS, VORTEX


class Ricochet(StrEnum):
    """The ricochet rule option (docs/rules.md): a finishing move must have turned, or not."""

    TURN = "turn"
    NONE = "none"

    @classmethod
    def options(cls) -> tuple[str, ...]:
        return tuple(r.value for r in cls)


class RuleFlag(IntFlag):
    """The rule options as bits of one word, each set for an option's value
    other than its default: the rules byte of a puzzle code, and the word the C
    core takes (RULE_* in solver/core/core.h; tests/test_rules.py holds the two
    alike).  A new option takes the next bit: old codes keep their meaning."""

    PLAIN = 1              # ricochet: none (the plain rule: any finish counts)
    VORTEX_SIGHTLINE = 2


CODE_VERSION_REAL = 1
CODE_VERSION_CUSTOM = 2
MAX_CODE_LENGTH = 20_000


@dataclass(frozen=True)
class Rules:
    """Rule options of docs/rules.md; the defaults are the printed rules.

    Every option but the first is given by keyword, so no caller can drop or
    swap one by position; `dataclasses.replace(rules, option=value)` changes one
    and keeps the others.  An option is an enum (its JSON form the value's
    name) or a bool; JSON, the code's bits and the schemas follow the fields."""

    ricochet: Ricochet = Ricochet.TURN
    _: KW_ONLY
    vortex_sightline: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.ricochet, Ricochet):  # Rules("none") reads as Rules(ricochet=Ricochet.NONE)
            object.__setattr__(self, "ricochet", Ricochet(self.ricochet))

    @functools.cached_property
    def flags(self) -> int:
        """The options as a RuleFlag word (a plain int: it is on every search's path)."""
        return (_PLAIN if self.ricochet is Ricochet.NONE else 0) | (_SIGHTLINE if self.vortex_sightline else 0)

    @classmethod
    def from_flags(cls, flags: int) -> Rules:
        if flags & ~_KNOWN_FLAGS:
            raise ValueError(f"unknown rule bits {flags & ~_KNOWN_FLAGS:#x}")
        return cls(ricochet=Ricochet.NONE if flags & RuleFlag.PLAIN else Ricochet.TURN,
                   vortex_sightline=bool(flags & RuleFlag.VORTEX_SIGHTLINE))

    @classmethod
    def options(cls) -> dict[str, type]:
        """Each option's name and type (an enum, or bool), in order."""
        return _rule_options()

    @classmethod
    def every(cls) -> list[Rules]:
        """Every combination of the options' values (for tests that cover each)."""
        return [cls.from_flags(word) for word in range(_KNOWN_FLAGS + 1) if not word & ~_KNOWN_FLAGS]

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) if kind is bool else getattr(self, name).value
                for name, kind in _rule_options().items()}

    @classmethod
    def from_json(cls, value: Any, field: str = "rules") -> Rules:
        if value is None:
            return cls()
        if not isinstance(value, dict):
            raise InvalidInput(field, "expected an object like {\"ricochet\": \"turn\"}")
        options = cls.options()
        unknown = set(value) - set(options)
        if unknown:
            raise InvalidInput(f"{field}.{sorted(unknown)[0]}",
                               f"unknown rule option; the options are {' and '.join(options)}")
        given = {}
        for name, kind in options.items():
            if name not in value:
                continue
            v = value[name]
            if kind is bool:
                if not isinstance(v, bool):
                    raise InvalidInput(f"{field}.{name}", f"must be true or false, got {v!r}")
            elif not isinstance(v, str) or v not in cast(type[StrEnum], kind)._value2member_map_:
                raise InvalidInput(f"{field}.{name}", f"must be "
                                   f"{' or '.join(repr(m.value) for m in cast(type[StrEnum], kind))}, got {v!r}")
            given[name] = kind(v)
        return cls(**given)


_KNOWN_FLAGS = int(functools.reduce(operator.or_, RuleFlag))
_PLAIN, _SIGHTLINE = int(RuleFlag.PLAIN), int(RuleFlag.VORTEX_SIGHTLINE)


@functools.cache
def _rule_options() -> dict[str, type]:
    hints = get_type_hints(Rules)
    return {f.name: hints[f.name] for f in fields(Rules)}


@dataclass(frozen=True)
class Goal:
    """What a puzzle asks for: a robot of `colour` (None: any robot) on `cell`.

    `symbol` names the board's target there when the goal is one of its chips."""

    cell: Cell
    colour: str | None
    symbol: str | None = None

    @property
    def is_vortex(self) -> bool:
        return self.colour is None


@dataclass(frozen=True)
class Move:
    robot: str
    direction: str

    def to_json(self) -> dict[str, str]:
        return {"robot": self.robot, "direction": self.direction}

    def __str__(self) -> str:
        return f"{self.robot} {self.direction}"

    @classmethod
    def from_json(cls, value: Any, field: str = "move") -> Move:
        """A move object, or the short text form 'blue N'."""
        if isinstance(value, str):
            parts = value.split()
            value = {"robot": parts[0], "direction": parts[1]} if len(parts) == 2 else None
        if not isinstance(value, dict):
            raise InvalidInput(field, f"expected {{\"robot\": \"blue\", \"direction\": \"N\"}}, got {value!r}")
        robot, direction = value.get("robot"), value.get("direction")
        if robot not in ROBOT_COLOURS:
            raise InvalidInput(f"{field}.robot", f"must be one of {', '.join(ROBOT_COLOURS)}, got {robot!r}")
        if direction not in DIRECTIONS:
            raise InvalidInput(f"{field}.direction", f"must be one of N, E, S, W, got {direction!r}")
        return cls(robot, direction)


def moves_from_json(value: Any, field: str = "moves") -> list[Move]:
    if not isinstance(value, list):
        raise InvalidInput(field, "expected a list of moves like [{\"robot\": \"blue\", \"direction\": \"N\"}]")
    return [Move.from_json(m, f"{field}[{i}]") for i, m in enumerate(value)]


def moves_to_json(moves: Iterable[Move]) -> list[dict[str, str]]:
    return [m.to_json() for m in moves]


@dataclass(frozen=True, eq=False)
class Puzzle:
    """A board, robots on it, the goal and the rule options."""

    board: Board
    robots: tuple[tuple[str, Cell], ...]  # (colour, cell), in ROBOT_COLOURS order
    goal: Goal
    rules: Rules = field(default_factory=Rules)

    # -- construction ----------------------------------------------------------

    @classmethod
    def create(
        cls,
        board: Board,
        robots: Mapping[str, Any],
        goal: Goal,
        rules: Rules | None = None,
    ) -> Puzzle:
        """Validate robots and goal against the board and build the puzzle."""
        placed = _check_robots(board, robots)
        colours = {c for c, _ in placed}
        if goal.colour is not None and goal.colour not in colours:
            raise InvalidInput("target.colour",
                               f"the {goal.colour} robot is not in play; robots are {', '.join(sorted(colours))}")
        if not board.contains(goal.cell):
            raise InvalidInput("target.cell", f"cell {list(goal.cell)} is off the board")
        if goal.cell in board.blocked or board.diagonal_at(goal.cell):
            raise InvalidInput("target.cell", f"cell {list(goal.cell)} is blocked or holds a barrier; "
                               "no robot can stop there")
        # One goal, one form: a cell goal that is a board chip is that chip.
        here = board.target_at(goal.cell)
        symbol = here.symbol if here is not None and here.colour == goal.colour else None
        if goal.symbol is not None and goal.symbol != symbol:
            raise InvalidInput("target.symbol", f"the board has no such target at {list(goal.cell)}")
        goal = Goal(goal.cell, goal.colour, symbol)
        return cls(board, placed, goal, rules or Rules())

    @classmethod
    def from_json(cls, value: Any) -> Puzzle:
        if not isinstance(value, dict):
            raise InvalidInput("", "a puzzle is a JSON object with 'board', 'robots' and 'target'")
        for key in ("board", "robots", "target"):
            if key not in value:
                raise InvalidInput(key, "is required")
        board = Board.from_json(value["board"])
        rules = Rules.from_json(value.get("rules"))
        goal = _goal_from_json(board, value["target"])
        robots = value["robots"]
        if not isinstance(robots, dict):
            raise InvalidInput("robots", "expected an object of colour -> [x, y]")
        return cls.create(board, robots, goal, rules)

    @classmethod
    def from_code(cls, code: str) -> Puzzle:
        return _decode(code)

    # -- queries -----------------------------------------------------------------

    @functools.cached_property
    def colours(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.robots)

    def robot(self, colour: str) -> Cell:
        for c, cell in self.robots:
            if c == colour:
                return cell
        raise KeyError(colour)

    def with_robots(self, robots: Mapping[str, Cell]) -> Puzzle:
        return Puzzle.create(self.board, robots, self.goal, self.rules)

    # -- forms ---------------------------------------------------------------------

    def target_json(self) -> dict[str, Any]:
        g = self.goal
        if g.symbol is not None:
            return {"symbol": VORTEX} if g.symbol == VORTEX else {"colour": g.colour, "symbol": g.symbol}
        return {"cell": list(g.cell), "colour": g.colour or "any"}

    def to_json(self) -> dict[str, Any]:
        """The canonical docs/formats.md form (rules written out in full)."""
        return {
            "board": self.board.to_json(),
            "robots": {c: list(cell) for c, cell in self.robots},
            "target": self.target_json(),
            "rules": self.rules.to_json(),
        }

    def canonical(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON: equal puzzles, equal hashes, on any machine."""
        return hashlib.sha256(self.canonical().encode()).hexdigest()

    def code(self) -> str:
        """A compact URL-safe string; `Puzzle.from_code(p.code()) == p`."""
        return _encode(self)

    def _key(self) -> tuple[Any, ...]:
        return (self.board, self.robots, self.goal, self.rules)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Puzzle) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Puzzle({self.code()!r})"


def _check_robots(board: Board, robots: Mapping[str, Any]) -> tuple[tuple[str, Cell], ...]:
    if not robots:
        raise InvalidInput("robots", "at least one robot is needed")
    checker = _Checker(board.width, board.height, "robots")
    taken: dict[Cell, str] = {}
    for colour, raw in robots.items():
        if colour not in ROBOT_COLOURS:
            raise InvalidInput(f"robots.{colour}", f"unknown robot colour; robots are {', '.join(ROBOT_COLOURS)}")
        cell = checker.cell(list(raw) if isinstance(raw, tuple) else raw, f"robots.{colour}")
        if cell in board.blocked:
            raise InvalidInput(f"robots.{colour}", f"cell {list(cell)} is blocked (the centrepiece)")
        if board.diagonal_at(cell):
            raise InvalidInput(f"robots.{colour}", f"cell {list(cell)} holds a diagonal barrier")
        if cell in taken:
            raise InvalidInput(f"robots.{colour}", f"cell {list(cell)} is taken by the {taken[cell]} robot")
        taken[cell] = colour
    return tuple((c, (robots[c][0], robots[c][1])) for c in ROBOT_COLOURS if c in robots)


def _goal_from_json(board: Board, value: Any) -> Goal:
    if not isinstance(value, dict):
        raise InvalidInput("target", "expected {\"colour\": C, \"symbol\": S}, {\"symbol\": \"vortex\"} "
                           "or {\"cell\": [x, y], \"colour\": C}")
    colour = value.get("colour", value.get("robot"))  # "robot" as in quadrants.json test puzzles
    if "cell" in value:
        cell = _Checker(board.width, board.height, "target").cell(value["cell"], "target.cell")
        if colour in (None, "any"):
            colour = None
        elif colour not in ROBOT_COLOURS:
            raise InvalidInput("target.colour", f"must be one of {', '.join(ROBOT_COLOURS)} or 'any', got {colour!r}")
        here = board.target_at(cell)
        if "symbol" in value and (here is None or here.symbol != value["symbol"]):
            raise InvalidInput("target.symbol", f"the board has no {value['symbol']} target at {list(cell)}")
        return Goal(cell, colour)
    symbol = value.get("symbol")
    if symbol == VORTEX:
        chip = board.chip(None, VORTEX)
        if chip is None:
            raise InvalidInput("target.symbol", "this board has no vortex")
        return Goal(chip.cell, None, VORTEX)
    if symbol not in SYMBOLS:
        raise InvalidInput("target.symbol", f"must be one of {', '.join(SYMBOLS + (VORTEX,))}, got {symbol!r}")
    if colour not in ROBOT_COLOURS:
        raise InvalidInput("target.colour", f"must be one of {', '.join(ROBOT_COLOURS)}, got {colour!r}")
    chip = board.chip(colour, symbol)
    if chip is None:
        chips = ", ".join(f"{t.colour} {t.symbol}" if t.colour else t.symbol for t in board.targets)
        raise InvalidInput("target", f"the board has no {colour} {symbol}; its targets are {chips}")
    return Goal(chip.cell, colour, symbol)


# -- string codes ------------------------------------------------------------------
#
# Version byte, then the board (real: four 4-bit section numbers; custom: a
# varint length and the deflated canonical board JSON), a rules byte, a robot
# colour mask and one cell per robot (1 byte on boards up to 256 cells, else 2),
# then the goal: a board target's index, or a cell and colour.


def _section_numbers() -> dict[str, int]:
    return {sid: i for i, sid in enumerate(sections())}


def _encode(p: Puzzle) -> str:
    b = p.board
    out = bytearray()
    if b.spec:
        numbers = _section_numbers()
        out.append(CODE_VERSION_REAL)
        packed = 0
        for sid in b.spec.split(","):
            packed = (packed << 4) | numbers[sid]
        out += packed.to_bytes(2, "big")
    else:
        out.append(CODE_VERSION_CUSTOM)
        blob = zlib.compress(json.dumps(b.to_object(), sort_keys=True, separators=(",", ":")).encode(), 9)
        out += _varint(len(blob)) + blob
    out.append(p.rules.flags)
    out.append(sum(1 << ROBOT_COLOURS.index(c) for c in p.colours))
    for _, cell in p.robots:
        out += _cell_bytes(b, cell)
    g = p.goal
    if g.symbol is not None:
        out.append(0)
        out.append(b.targets.index(b.target_at(g.cell)))
    else:
        out.append(1)
        out += _cell_bytes(b, g.cell)
        out.append(ROBOT_COLOURS.index(g.colour) if g.colour else len(ROBOT_COLOURS))
    return base64.urlsafe_b64encode(bytes(out)).decode().rstrip("=")


def _decode(code: Any) -> Puzzle:
    if not isinstance(code, str) or not code or len(code) > MAX_CODE_LENGTH:
        raise InvalidInput("code", "expected a puzzle code string")
    try:
        data = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))
    except (binascii.Error, ValueError):
        raise InvalidInput("code", "not a puzzle code: it is not URL-safe base64") from None
    reader = _Reader(data)
    try:
        version = reader.byte()
        if version == CODE_VERSION_REAL:
            packed = int.from_bytes(reader.take(2), "big")
            ids = list(sections())
            numbers = [(packed >> shift) & 15 for shift in (12, 8, 4, 0)]
            board = Board.from_json(",".join(ids[n] for n in numbers), "code")
        elif version == CODE_VERSION_CUSTOM:
            blob = reader.take(reader.varint())
            obj = json.loads(zlib.decompressobj().decompress(blob, 1_000_000))
            board = Board.from_json(obj, "code")
        else:
            raise InvalidInput("code", f"unknown puzzle code version {version}")
        try:
            rules = Rules.from_flags(reader.byte())
        except ValueError:
            raise InvalidInput("code", "corrupt rules") from None
        mask = reader.byte()
        if not 0 < mask < 32:
            raise InvalidInput("code", "corrupt robot list")
        robots = {c: reader.cell(board) for i, c in enumerate(ROBOT_COLOURS) if mask >> i & 1}
        kind = reader.byte()
        if kind == 0:
            index = reader.byte()
            if index >= len(board.targets):
                raise InvalidInput("code", "corrupt target")
            t = board.targets[index]
            goal = Goal(t.cell, t.colour, t.symbol)
        elif kind == 1:
            cell = reader.cell(board)
            colour_index = reader.byte()
            if colour_index > len(ROBOT_COLOURS):
                raise InvalidInput("code", "corrupt target colour")
            goal = Goal(cell, ROBOT_COLOURS[colour_index] if colour_index < len(ROBOT_COLOURS) else None)
        else:
            raise InvalidInput("code", "corrupt target")
        if not reader.done():
            raise InvalidInput("code", "trailing bytes after the puzzle")
        return Puzzle.create(board, robots, goal, rules)
    except InvalidInput as e:
        raise e if e.field.startswith("code") else e.within("code") from None
    except (IndexError, ValueError, zlib.error, UnicodeDecodeError):
        raise InvalidInput("code", "not a valid puzzle code (truncated or corrupt)") from None


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _cell_bytes(board: Board, cell: Cell) -> bytes:
    index = board.index(cell)
    return index.to_bytes(1 if board.cells <= 256 else 2, "big")


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise IndexError("truncated")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def byte(self) -> int:
        return self.take(1)[0]

    def varint(self) -> int:
        n = shift = 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            if not b & 0x80 or shift > 28:
                return n
            shift += 7

    def cell(self, board: Board) -> Cell:
        index = int.from_bytes(self.take(1 if board.cells <= 256 else 2), "big")
        if index >= board.cells:
            raise InvalidInput("code", "corrupt cell")
        return board.cell(index)

    def done(self) -> bool:
        return self.pos == len(self.data)
