"""Pools: thousands of proven, rated puzzles of every length from one analysis.

A pool is one (board, target, robot count, ricochet option).  Its positions
come from the retrograde analysis of the board and target
(`solver.search.solve.analyse`: the plain-rule length of every position at once).
While that table is in memory it is the solver's lower bound: exact under the
plain rule, and a lower bound under the ricochet rule, which only takes
finishing moves away.  So every position is proven under the rules in force
by a search that follows the table, and its difficulty report (which counts
every optimal solution) walks only states on optimal paths.  One analysis
gives both ricochet options' pools.

Only fair positions are kept: robots on cells without a chip, the round not
void.  Within a pool no two positions share an optimal solution (positions
that differ only where an idle robot stands look alike to a player).

Storage format (version 1): gzip-compressed JSON,

    {"format": "ricochet-pool", "version": 1, "id": ..., "board": spec,
     "target": {"cell": [x, y], "colour": "red" | null, "symbol": ...},
     "robots": ["red", "green", "blue", "yellow"], "ricochet": "turn" | "none",
     "built": {"per_length": n, "min_length": m, "seed": s, "analysis_seconds": t,
               "code": "<package version>"},
     "fair_positions": {"<length>": count, ...},      # in the whole analysis
     "columns": [...ROW_COLUMNS...],
     "rows": [[cells, length, moves, fewest_robots, helper_moves, switches,
               solutions, capped, lone_bound], ...]}

`cells` are the robots' cell indices (y * width + x) in `robots` order;
`moves` one integer per move, robot index * 4 + direction (N E S W); the last
six columns are the facts `difficulty.rate` turns back into the report.  Rows
are sorted by length, then by cells.  A reader refuses other formats and
versions it does not know.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import marshal
import os
import random
import re
import sys
import tempfile
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from solver.errors import InvalidInput
from solver.model.board import Board, BoardKind, real_board
from solver.model.geometry import DIRECTIONS, ROBOT_COLOURS
from solver.model.moves import round_of
from solver.model.puzzle import Goal, Move, Puzzle, Ricochet, Rules
from solver.production.difficulty import FACTS_CAP, rate
from solver.production.generated import Generated
from solver.search.solution import Solution
from solver.search.solve import Analysis, analyse, solution_facts, solve

FORMAT = "ricochet-pool"
VERSION = 1
ROW_COLUMNS = ("cells", "length", "moves", "fewest_robots", "helper_moves", "switches", "solutions", "capped",
               "lone_bound")
MIN_LENGTH = 8  # pools keep positions from this length on: shorter ones are cheap to search for
PER_LENGTH = 2000  # positions drawn per length (before fairness and one per solution)
PACKAGED = Path(__file__).parent / "data" / "pools"
CATALOGUE = Path(__file__).parent / "data" / "catalogue"  # solver/production/catalogue.py grows it


def target_named(board: str, name: str) -> Goal:
    """A board's chip named `colour-symbol` or `vortex` (as the command line and pool jobs name them)."""
    b = real_board(board)
    names = {(f"{t.colour}-{t.symbol}" if t.colour else t.symbol): t for t in b.targets}
    if name not in names:
        raise InvalidInput("target", f"{name!r} is not a chip of {board}; choose one of {', '.join(sorted(names))}")
    t = names[name]
    return Goal(t.cell, t.colour, t.symbol)


def pool_id(board: str | None, goal: Goal, robots: int, ricochet: Ricochet) -> str:
    """A pool's name: board spec, target cell and colour, robots, ricochet option."""
    x, y = goal.cell
    return f"{board}@{x}-{y}-{goal.colour or 'any'}-{robots}-{ricochet}"


class PackedRows(Sequence[tuple[Any, ...]]):
    """A loaded pool's rows as one bytes object (each row marshalled) and where
    each ends: reading a row makes a new tuple and writes to nothing shared.
    Why: CPython writes a reference count into every object it reads, and a page
    written is copied, so a web process forked after gunicorn's master loaded
    the pools (preload_app) made its own copy of every page of row tuples it
    read; 100,000 random draws took 125 MiB of a web process's own, and an hour
    of mixed load took web processes over their budget (docs/operations.md).
    Packed, the rows also take about a fifth of the memory."""

    __slots__ = ("_data", "_ends")

    def __init__(self, rows: Iterable[Sequence[Any]]) -> None:
        chunks, ends, at = [], array("Q"), 0
        for row in rows:
            chunk = marshal.dumps(tuple(row))
            chunks.append(chunk)
            at += len(chunk)
            ends.append(at)
        self._data, self._ends = b"".join(chunks), ends

    @classmethod
    def from_parts(cls, data: bytes, ends: array[int]) -> PackedRows:
        """Rows packed before (`parts`), checked to fit together."""
        if ends.typecode != "Q" or (len(ends) and ends[-1] != len(data)):
            raise ValueError("packed rows whose ends do not fit their data")
        rows = cls(())
        rows._data, rows._ends = data, ends
        return rows

    def parts(self) -> tuple[bytes, array[int]]:
        """The packed bytes and where each row ends."""
        return self._data, self._ends

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i: int | slice) -> Any:  # noqa: ANN401 - a row, or a list of rows for a slice
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("pool row index out of range")
        return marshal.loads(self._data[self._ends[i - 1] if i else 0:self._ends[i]])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == tuple(b) for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # compared by value, as the list it replaces (None: unhashable)

    def __repr__(self) -> str:
        return f"PackedRows({len(self)} rows, {len(self._data)} bytes)"


@dataclass
class Pool:
    board: Board
    goal: Goal
    colours: tuple[str, ...]
    ricochet: Ricochet
    rows: Sequence[tuple[Any, ...]]  # a list while built, PackedRows once loaded
    fair_positions: dict[int, int] = field(default_factory=dict)
    built: dict[str, Any] = field(default_factory=dict)
    _by_length: dict[int, array[int]] | None = field(default=None, repr=False, compare=False)
    _move_of: list[Move] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def id(self) -> str:
        return pool_id(self.board.spec, self.goal, len(self.colours), self.ricochet)

    def lengths(self) -> dict[int, array[int]]:
        """Row indices per optimal length (computed once: a pool never changes), as
        arrays: reading one makes a new int, where a list's ints would be shared
        objects written to (see PackedRows)."""
        if self._by_length is None:
            by_length: dict[int, array[int]] = {}
            for i, row in enumerate(self.rows):
                by_length.setdefault(row[1], array("I")).append(i)
            self._by_length = by_length
        return self._by_length

    def puzzle(self, i: int) -> Puzzle:
        cells = self.rows[i][0]
        return Puzzle.create(self.board, {c: self.board.cell(k) for c, k in zip(self.colours, cells)}, self.goal,
                             Rules(ricochet=self.ricochet))

    def moves(self, i: int) -> list[Move]:
        """Row i's optimal solution."""
        if self._move_of is None:  # a row's move m is robot m >> 2 going DIRECTIONS[m & 3]; a Move never changes
            self._move_of = [Move(c, d) for c in self.colours for d in DIRECTIONS]
        table = self._move_of
        return [table[m] for m in self.rows[i][2]]

    def generated(self, i: int) -> Generated:
        """Row i as a generated puzzle: its proof and report were made when the pool was built."""
        cells, length, moves, fewest, helpers, switches, solutions, capped, lone = self.rows[i]
        p = self.puzzle(i)
        path = self.moves(i)
        stats = {"source": "pool", "pool": self.id, "lone_bound": lone}
        solution = Solution("optimal", path, length, round_of(p), stats)
        report = rate(length, fewest_robots=fewest, helper_moves=helpers, switches=switches, solutions=solutions,
                      capped=capped, lone_bound=lone, void=False, robots=len(self.colours), ricochet=self.ricochet)
        return Generated(p, solution, report)

    # -- storage --------------------------------------------------------------------

    def dumps(self) -> bytes:
        doc = {"format": FORMAT, "version": VERSION, "id": self.id, "board": self.board.spec,
               "target": {"cell": list(self.goal.cell), "colour": self.goal.colour, "symbol": self.goal.symbol},
               "robots": list(self.colours), "ricochet": self.ricochet, "built": self.built,
               "fair_positions": {str(k): v for k, v in sorted(self.fair_positions.items())},
               "columns": list(ROW_COLUMNS), "rows": [list(r) for r in self.rows]}
        return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=9, mtime=0)

    @classmethod
    def loads(cls, data: bytes) -> Pool:
        try:
            doc = json.loads(gzip.decompress(data))
        except (OSError, ValueError) as e:
            raise ValueError(f"not a pool file: {e}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("not a pool file")
        if doc.get("version") != VERSION:
            raise ValueError(f"pool format version {doc.get('version')} is not known here (this reads {VERSION})")
        if tuple(doc["columns"]) != ROW_COLUMNS:
            raise ValueError("pool columns differ from this version's")
        t = doc["target"]
        goal = Goal(tuple(t["cell"]), t["colour"], t.get("symbol"))
        by_length: dict[int, array[int]] = {}  # now, from the rows in hand: in gunicorn's master, before it
        for i, r in enumerate(doc["rows"]):  # forks, so its web processes share them (`lengths`)
            by_length.setdefault(r[1], array("I")).append(i)
        rows = PackedRows((tuple(r[0]), r[1], tuple(r[2]), *r[3:]) for r in doc["rows"])
        return cls(real_board(doc["board"]), goal, tuple(doc["robots"]), Ricochet(doc["ricochet"]), rows,
                   {int(k): v for k, v in doc["fair_positions"].items()}, doc.get("built", {}), by_length)


# -- building ---------------------------------------------------------------------------


def build(board: str | Board, goal: Goal, *, robots: int = 4, per_length: int = PER_LENGTH,
          min_length: int = MIN_LENGTH, seed: int | str = 0, threads: int = 2,
          ricochet: Iterable[Ricochet] = tuple(Ricochet),
          progress: Callable[[str, int, int], None] | None = None) -> list[Pool]:
    """The pools of one board and goal, one per ricochet option, from one analysis.

    `progress(stage, done, total)` hears of the analysis and of each option's
    proofs.  Needs cells^robots bytes while it runs (4 GiB for 4 robots on 16 x 16)."""
    b = real_board(board) if isinstance(board, str) else board
    colours = ROBOT_COLOURS[:robots]
    report = progress or (lambda stage, done, total: None)
    report("analysis", 0, 1)
    with analyse(b, colours, goal, threads=threads) as table:
        report("analysis", 1, 1)
        digest = hashlib.sha256(f"pool:{seed}:{b.spec}:{goal.cell}:{goal.colour}:{robots}".encode()).digest()
        fair, drawn = table.sample(per_length, min_length=min_length, seed=int.from_bytes(digest[:8], "little"))
        built = {"per_length": per_length, "min_length": min_length, "seed": str(seed),
                 "analysis_seconds": round(table.seconds, 1)}
        return [_prove(b, goal, colours, option, drawn, fair, built, table, threads, report)
                for option in ricochet]


def _prove(board: Board, goal: Goal, colours: tuple[str, ...], ricochet: Ricochet,
           drawn: list[tuple[int, dict[str, Any], list[Move]]], fair: dict[int, int], built: dict[str, Any],
           table: Analysis, threads: int, report: Callable[[str, int, int], None]) -> Pool:
    """Prove each drawn position under one ricochet option with the table as the
    solver's bound; keep fair ones, one per optimal solution."""
    from concurrent.futures import ThreadPoolExecutor

    def one(item: tuple[int, dict[str, Any], list[Move]]) -> tuple[Any, ...] | None:
        _, cells, _ = item
        p = Puzzle.create(board, cells, goal, Rules(ricochet=ricochet))
        if round_of(p).void:
            return None
        answer = solve(p, exact=table)
        if answer.status != "optimal" or answer.round.void or not answer.length:
            return None
        facts = solution_facts(p, answer.length, cap=FACTS_CAP, exact=table)
        if facts is None:
            return None
        finisher = goal.colour or answer.finisher
        moves = tuple(colours.index(m.robot) * 4 + DIRECTIONS.index(m.direction) for m in answer.moves)
        return (tuple(board.index(cells[c]) for c in colours), answer.length, moves, facts["fewest_robots"],
                sum(1 for m in answer.moves if m.robot != finisher), facts["fewest_switches"],
                facts["solutions"], facts["capped"], answer.stats["lone_bound"])

    rows: list[tuple[Any, ...]] = []
    seen: set[tuple[int, ...]] = set()
    step = 256
    with ThreadPoolExecutor(max_workers=threads) as workers:
        for first in range(0, len(drawn), step):
            for row in workers.map(one, drawn[first:first + step]):
                if row is not None and row[2] not in seen:
                    seen.add(row[2])
                    rows.append(row)
            report(f"proofs ({ricochet})", min(first + step, len(drawn)), len(drawn))
    rows.sort(key=lambda r: (r[1], r[0]))
    return Pool(board, goal, colours, ricochet, rows, fair, built)


# -- where pools live -------------------------------------------------------------------


class PoolSource(Protocol):
    """Somewhere pools are kept: the package's starter set, a directory, Redis."""

    def ids(self) -> list[str]: ...

    def read(self, pool: str) -> bytes | None: ...


class DirectorySource:
    """Pools as files `<id>.pool.gz` in one directory."""

    SUFFIX = ".pool.gz"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def ids(self) -> list[str]:
        if not self.path.is_dir():
            return []
        return sorted(p.name[: -len(self.SUFFIX)] for p in self.path.glob(f"*{self.SUFFIX}"))

    def read(self, pool: str) -> bytes | None:
        path = self.path / f"{pool}{self.SUFFIX}"
        return path.read_bytes() if path.exists() else None

    def write(self, pool: Pool) -> Path:
        """Write atomically (a reader never sees half a pool)."""
        self.path.mkdir(parents=True, exist_ok=True)
        final = self.path / f"{pool.id}{self.SUFFIX}"
        tmp = final.with_suffix(".tmp")
        tmp.write_bytes(pool.dumps())
        tmp.replace(final)
        return final


def packaged() -> DirectorySource:
    """The starter set shipped with the package (read-only)."""
    return DirectorySource(PACKAGED)


def shipped() -> list[DirectorySource]:
    """Every pool the package ships: the starter set, then the catalogue of long
    puzzles over the edition (solver/production/catalogue.py)."""
    return [packaged(), DirectorySource(CATALOGUE)]


@dataclass(frozen=True)
class Entry:
    """What a pool holds, known from its id without loading it."""

    id: str
    board: str
    cell: tuple[int, int]
    colour: str | None
    robots: int
    ricochet: Ricochet

    @classmethod
    def parse(cls, pool: str) -> Entry | None:
        try:
            spec, rest = pool.rsplit("@", 1)
            x, y, colour, robots, ricochet = rest.split("-")
            return cls(pool, spec, (int(x), int(y)), None if colour == "any" else colour, int(robots),
                       Ricochet(ricochet))
        except ValueError:
            return None

    def fits(self, board: str, robots: int, ricochet: Ricochet) -> bool:
        """Whether a request for `board` (a spec or random-2013/-beginner/-1999) may draw on this pool."""
        return self.robots == robots and self.ricochet == ricochet and admits(board, self.board)


def admits(board: str, spec: str) -> bool:
    """Whether a request for `board` (a spec or random-2013/-beginner/-1999) admits the real board `spec`."""
    sides = [part.rsplit("-", 1)[-1] for part in spec.split(",")]
    if board == BoardKind.RANDOM_2013:
        return True  # every real board is a 2013 board (the 1999 sides are its A and B)
    if board == BoardKind.RANDOM_BEGINNER:
        return "D" not in sides
    if board == BoardKind.RANDOM_1999:
        return all(s in "AB" for s in sides)
    return spec == board


# Pools parsed in this process, by their bytes' digest, shared by every Library: a process that opens
# the shipped pools again (a CLI command, a test) parses each file once (932 files: about 4.5 s).
# A pool is never changed once loaded, and new bytes are a new key; the oldest leave past PARSED_MAX.
_PARSED: OrderedDict[bytes, Pool] = OrderedDict()
PARSED_MAX = 4096


def _parsed(data: bytes, pool_id: str) -> Pool:
    key = hashlib.blake2b(data, digest_size=16).digest()
    pool = _PARSED.get(key)
    if pool is None:
        pool = _PARSED[key] = _unpacked(pool_id, key) or _packed(pool_id, key, Pool.loads(data))
        if len(_PARSED) > PARSED_MAX:
            _PARSED.popitem(last=False)
    return pool


# Parsed pools kept on disk, in their packed form: every process that starts (gunicorn's master, a
# worker, a CLI command) opens all the pools, and parsing the JSON of the 932 shipped ones took 4.7 s
# of CPU each time, reading them packed 0.7 s.  A file is named by its pool's id and the digest of
# the pool file's bytes, and by what made it (the pool format, this module's code, the Python and
# its byte order): a pool file or code that changed is a new name, and writing it removes the pool's
# files of other names, so the folder holds one file per pool.  A cache: a file missing, unreadable or
# not as this code writes it is parsed from its pool again (and written anew).
_MADE_BY = "-".join([str(VERSION), hashlib.blake2b(Path(__file__).read_bytes(), digest_size=6).hexdigest(),
                     f"py{sys.version_info[0]}{sys.version_info[1]}", sys.byteorder])


@dataclass
class PackedCache:
    folder: Path | None = None  # none: every process parses the pools' files (`keep_packed_in`)
    listed: dict[str, list[str]] | None = None  # the folder's files by pool, listed at this process's first write

    def others(self, stem: str, name: str) -> list[str]:
        """The pool's files of names other than `name` (listed once a process, not once a pool)."""
        if self.listed is None:
            self.listed = {}
            for found in self.folder.iterdir() if self.folder is not None else ():
                if found.name.endswith(".packed"):
                    self.listed.setdefault(found.name.split(".", 1)[0], []).append(found.name)
        return [n for n in self.listed.pop(stem, []) if n != name]


_CACHE = PackedCache()


def keep_packed_in(folder: Path | None) -> None:
    """Where this process keeps (and finds) parsed pools: RICOCHET_POOL_CACHE."""
    _CACHE.folder, _CACHE.listed = folder, None


_NAMEABLE = re.compile(r"[A-Za-z0-9@,:_+-]{1,200}")  # a pool id as a file name; another is named by its digest


def _packed_path(pool_id: str, key: bytes) -> Path | None:
    folder = _CACHE.folder
    stem = pool_id if _NAMEABLE.fullmatch(pool_id) else hashlib.blake2b(pool_id.encode(), digest_size=8).hexdigest()
    return None if folder is None else folder / f"{stem}.{key.hex()}-{_MADE_BY}.packed"


def _unpacked(pool_id: str, key: bytes) -> Pool | None:
    path = _packed_path(pool_id, key)
    if path is None:
        return None
    try:
        head, data, ends, by_length = marshal.loads(zlib.decompress(path.read_bytes()))
        doc = json.loads(head)
        rows = PackedRows.from_parts(data, array("Q", ends))
        lengths = {int(n): array("I", at) for n, at in by_length.items()}
        t = doc["target"]
        return Pool(real_board(doc["board"]), Goal(tuple(t["cell"]), t["colour"], t.get("symbol")),
                    tuple(doc["robots"]), Ricochet(doc["ricochet"]), rows,
                    {int(k): v for k, v in doc["fair_positions"].items()}, doc["built"], lengths)
    except Exception:  # noqa: BLE001 - only a cache: whatever is wrong with it, the pool's file is parsed
        return None


def _packed(pool_id: str, key: bytes, pool: Pool) -> Pool:
    """`pool`, kept on disk for the next process (when a folder is set and writable)."""
    path = _packed_path(pool_id, key)
    rows = pool.rows
    if path is None or not isinstance(rows, PackedRows):
        return pool
    head = json.dumps({"board": pool.board.spec, "robots": list(pool.colours), "ricochet": pool.ricochet,
                       "target": {"cell": list(pool.goal.cell), "colour": pool.goal.colour,
                                  "symbol": pool.goal.symbol},
                       "fair_positions": {str(k): v for k, v in pool.fair_positions.items()}, "built": pool.built})
    data, ends = rows.parts()
    lengths = {n: at.tobytes() for n, at in pool.lengths().items()}
    body = zlib.compress(marshal.dumps((head, data, ends.tobytes(), lengths)), 1)  # 27 MB for the shipped, 0.6 s
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        stem = path.name.split(".", 1)[0]
        handle, spare = tempfile.mkstemp(dir=path.parent, prefix=f".{stem}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(body)
            os.replace(spare, path)  # whole or not at all: processes (and threads) at once each write theirs
        except OSError:
            os.unlink(spare)
            raise
        for old in _CACHE.others(stem, path.name):  # the pool's files of other names: another file, code, Python
            (path.parent / old).unlink(missing_ok=True)
    except OSError:
        pass  # a read-only or full disk: the next process parses the pool's file too
    return pool


class Library:
    """Every pool a process can see, from several sources (the first that holds
    an id wins), loaded on first use and kept: pools never change once written."""

    def __init__(self, sources: Iterable[PoolSource]) -> None:
        self.sources = list(sources)
        self._loaded: dict[str, Pool] = {}

    def entries(self) -> list[Entry]:
        ids = sorted({i for s in self.sources for i in s.ids()})
        return [e for i in ids if (e := Entry.parse(i)) is not None]

    def fitting(self, board: str, robots: int, ricochet: Ricochet) -> list[Entry]:
        return [e for e in self.entries() if e.fits(board, robots, ricochet)]

    def load(self, pool: str) -> Pool | None:
        if pool not in self._loaded:
            for source in self.sources:
                data = source.read(pool)
                if data is not None:
                    self._loaded[pool] = _parsed(data, pool)
                    break
            else:
                return None
        return self._loaded[pool]

    def pools(self, board: str, robots: int, ricochet: Ricochet) -> Iterator[Pool]:
        for e in self.fitting(board, robots, ricochet):
            if (p := self.load(e.id)) is not None:
                yield p


def draw(library: Library, lo: int, hi: int, *, board: str, robots: int, ricochet: Ricochet,
         rng: random.Random) -> Generated | None:
    """One pool puzzle of lo..hi moves fitting the request, chosen by `rng`: a
    length first (each held length alike), then a pool holding it, then a row."""
    by_length: dict[int, list[tuple[Pool, array[int]]]] = {}
    for pool in library.pools(board, robots, ricochet):
        for n, rows in pool.lengths().items():
            if lo <= n <= hi:
                by_length.setdefault(n, []).append((pool, rows))
    if not by_length:
        return None
    n = rng.choice(sorted(by_length))
    pool, rows = rng.choice(by_length[n])
    return pool.generated(rng.choice(rows))
