"""The puzzle library: every shelved puzzle's themes from one offline pass, and
an index by theme and rating that a request reads in O(log n).

A shelf is a pool (solver/production/pools.py) or the shelf of short and
rare-themed puzzles a targeted search found (`data/themed.jsonl.gz`, grown by
`ricochet themes`).  The pass (`theme_pass`) gives each pool row its themes
once, as `themes.themes` defines them, and keeps them in a table beside the
pool (`<pool id>.themes.gz`): the pass can stop at any row and resume where
it stopped, and a row's themes about every optimal solution are given only
when the listing was complete, as everywhere.  The index (`Index`) orders
every held puzzle of each (theme, ricochet option) by the rating it starts at
(glicko.prior: its length and the robots its solution moves); a request
walks outward from its aim, nearest first, as Lichess's selector compromises.

Table format (version 1): gzip-compressed JSON,

    {"format": "ricochet-themes", "version": 1, "pool": id, "themes": [names],
     "rows": n, "mask": [int per row], "state": [int per row],
     "length": [int per row], "moved": [int per row]}

`mask` bit i is `themes[i]`; `length` and `moved` are the row's optimal
length and the robots its solution moves (the rating it starts at); `state` is PENDING (not yet read), CHEAP (read
without listing: length, vortex, helpers from the counted facts, the
ricochet rule from the other option's pool, the listing's themes left out and
left to a later pass), FINAL (every theme the definitions allow, but a row of
more than LISTED orderings read before many-ways could be proven from a
partial listing: without it) or PROVEN (FINAL, and many-ways sought that way
where it can be: `rare_pass`).  Any state but PENDING is read, so a reader
that knows only FINAL reads a PROVEN row as one.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import json
import random
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from solver.model.geometry import DIRECTIONS
from solver.model.moves import round_of
from solver.model.puzzle import Move, Puzzle, Ricochet, Rules
from solver.play.glicko import prior
from solver.play.grades import DifficultyReport
from solver.production.generate import MAX_LENGTH
from solver.production.generated import Generated
from solver.production.pools import Library, Pool, pool_id, shipped
from solver.production.themes import THEMES, WAYS_LONGEST, blocker_moved_again, bounces, counted, shorter_plain, themes
from solver.search.orders import LISTED
from solver.search.solution import Solution

FORMAT = "ricochet-themes"
VERSION = 1
PENDING, CHEAP, FINAL, PROVEN = 0, 1, 2, 3
THEME_NAMES = tuple(THEMES)
BIT = {t: 1 << i for i, t in enumerate(THEME_NAMES)}
TABLES = Path(__file__).parent / "data" / "themes"
THEMED = Path(__file__).parent / "data" / "themed.jsonl.gz"
SCANNED = 256  # a length's rows in a pool looked through one by one (more: a bisection, as built pools sort them)
DRAW_SCAN = 4096  # places of a theme's column a draw looks at, at most
LISTING_BUDGET = 1.0  # seconds the pass lists one row's solutions for (past it: the listing's themes left out)
RARE_BUDGET = 5.0  # the rare pass's (its rows are read for a theme the listing may give: not lost to a busy machine)


def mask_of(names: list[str]) -> int:
    return sum(BIT[t] for t in names)


def names_of(mask: int) -> list[str]:
    return [t for t in THEME_NAMES if mask & BIT[t]]


@dataclass
class ThemeTable:
    """One pool's rows' themes (`mask`) and how far the pass read each (`state`)."""

    pool: str
    mask: array[int]
    state: array[int]
    length: array[int]  # each row's optimal length and the robots its solution moves: the rating it starts at
    moved: array[int]

    @classmethod
    def empty(cls, pool: Pool) -> ThemeTable:
        n = len(pool.rows)
        return cls(pool.id, array("H", [0]) * n, array("B", [PENDING]) * n, *_lengths(pool))

    def done(self, final: bool = True) -> bool:
        least = FINAL if final else CHEAP
        return all(s >= least for s in self.state)

    def dumps(self) -> bytes:
        doc = {"format": FORMAT, "version": VERSION, "pool": self.pool, "themes": list(THEME_NAMES),
               "rows": len(self.mask), "mask": list(self.mask), "state": list(self.state),
               "length": list(self.length), "moved": list(self.moved)}
        return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), compresslevel=9, mtime=0)

    @classmethod
    def loads(cls, data: bytes) -> ThemeTable:
        try:
            doc = json.loads(gzip.decompress(data))
        except (OSError, ValueError) as e:
            raise ValueError(f"not a themes table: {e}") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
            raise ValueError("not a themes table of a version known here")
        mask = array("H", doc["mask"])
        if doc["themes"] != list(THEME_NAMES):  # another version's order: each bit to ours (unknown ones dropped)
            order = [BIT.get(t, 0) for t in doc["themes"]]
            mask = array("H", (sum(b for i, b in enumerate(order) if m >> i & 1) for m in mask))
        return cls(doc["pool"], mask, array("B", doc["state"]), array("B", doc["length"]), array("B", doc["moved"]))


def _lengths(pool: Pool) -> tuple[array[int], array[int]]:
    rows = [pool.rows[i] for i in range(len(pool.rows))]
    return array("B", (r[1] for r in rows)), array("B", (len({m >> 2 for m in r[2]}) for r in rows))


class TableDirectory:
    """Theme tables as files `<pool id>.themes.gz` in one directory, written atomically."""

    SUFFIX = ".themes.gz"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def read(self, pool: str) -> ThemeTable | None:
        path = self.path / f"{pool}{self.SUFFIX}"
        return ThemeTable.loads(path.read_bytes()) if path.exists() else None

    def write(self, table: ThemeTable) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        final = self.path / f"{table.pool}{self.SUFFIX}"
        tmp = final.with_name(final.name + ".tmp")
        tmp.write_bytes(table.dumps())
        tmp.replace(final)


def twin_lengths(library: Library, pool: Pool) -> dict[tuple[int, ...], int]:
    """For a ricochet-rule pool: each position's optimum under the plain rule, as
    the plain-rule pool of the same analysis holds it (most of its positions)."""
    if pool.ricochet is not Ricochet.TURN:
        return {}
    twin = library.load(pool.id[: -len(Ricochet.TURN.value)] + Ricochet.NONE.value)
    return {tuple(row[0]): row[1] for row in twin.rows} if twin is not None else {}


def read_row(pool: Pool, i: int, plain: dict[tuple[int, ...], int], *, thorough: bool,
             budget: float = LISTING_BUDGET) -> tuple[int, int]:
    """Row i's theme mask and state.  What needs no search (the row's counted
    facts, the plain-rule twin's length, a single solution's walk) is read
    whatever is asked, PROVEN; a row that needs a listing (for many-ways
    too: `may_prove_ways`) or a plain-rule search is read so (PROVEN) when
    `thorough`, else without them (CHEAP)."""
    g = pool.generated(i)
    row = pool.rows[i]
    plain_length = plain.get(tuple(row[0]))
    count, capped = row[6], row[7]
    listing = count is None or (not capped and 1 < count <= LISTED) or may_prove_ways(row)  # None: not counted
    searching = listing or (pool.ricochet is Ricochet.TURN and plain_length is None)
    if thorough or not searching:
        return mask_of(themes(g.puzzle, g.solution.moves, time_budget=budget, report=g.difficulty,
                              plain_length=plain_length)), PROVEN
    found = set(themes(g.puzzle, g.solution.moves, thorough=False)) | counted(g.difficulty, row[1])
    if plain_length is not None and plain_length < row[1]:
        found.add("ricochet-rule")
    return mask_of(sorted(found)), CHEAP


class Tables(Protocol):
    """Where a pass keeps its tables: a directory (TableDirectory), Redis (the workers')."""

    def read(self, pool: str) -> ThemeTable | None: ...

    def write(self, table: ThemeTable) -> None: ...


def theme_pass(library: Library, tables: Tables, *, thorough: bool = True,
               progress: Callable[[int, int, int], None] | None = None,
               stop: Callable[[], bool] | None = None, save_every: float = 30.0,
               rows: Callable[[tuple[Any, ...]], bool] | None = None) -> dict[str, int]:
    """Give every row of every pool in `library` its themes, into `tables`.

    Resumable: a table is saved every `save_every` seconds and when its pool is
    done, and rows already read (to the state asked for) are not read again.
    `progress(pools_done, pools, rows_read)` after each pool; `stop()` asked
    between rows ends the pass early, its work kept.  `rows`, if given, picks
    the rows a thorough pass reads thoroughly (the others are read CHEAP): a
    targeted pass reads first those that may have a rare theme
    (`may_be_rare`).  Returns the counts."""
    entries = library.entries()
    want = FINAL if thorough else CHEAP
    read = done = 0
    for k, e in enumerate(entries):
        pool = library.load(e.id)
        if pool is None:
            continue
        table = tables.read(e.id) or ThemeTable.empty(pool)
        if len(table.mask) != len(pool.rows):
            table = ThemeTable.empty(pool)  # a pool rebuilt since: its rows are others
        todo = [i for i, s in enumerate(table.state)
                if s < want and (s == PENDING or rows is None or rows(pool.rows[i]))]
        if todo:
            plain = twin_lengths(library, pool)
            saved = time.monotonic()
            for i in todo:
                if stop is not None and stop():
                    tables.write(table)
                    return {"pools": len(entries), "pools_done": done, "rows_read": read, "stopped": 1}
                table.mask[i], table.state[i] = read_row(pool, i, plain,
                                                         thorough=thorough and (rows is None or rows(pool.rows[i])))
                read += 1
                if time.monotonic() - saved > save_every:
                    tables.write(table)
                    saved = time.monotonic()
            tables.write(table)
        done += 1
        if progress is not None:
            progress(k + 1, len(entries), read)
    return {"pools": len(entries), "pools_done": done, "rows_read": read, "stopped": 0}


def may_prove_ways(row: tuple[Any, ...]) -> bool:
    """Whether many-ways may be proven for the row from a partial listing
    (themes.ways_proven): more than LISTED orderings (or a capped count), at
    most WAYS_LONGEST moves."""
    return row[6] is not None and (row[7] or row[6] > LISTED) and row[1] <= WAYS_LONGEST


def may_show_diagonal(pool: Pool, i: int) -> bool:
    """Whether listing row i may give it diagonal: a board with diagonal
    barriers, an exact count a listing can complete (2 to LISTED orderings:
    one, and the pass read it without a search), and its served solution
    bouncing off one (every solution must)."""
    return bool(pool.board.diagonals) and _listable(pool, i) and bounces(pool.puzzle(i), pool.moves(i))


def _listable(pool: Pool, i: int) -> bool:
    """Whether row i was counted exactly, 2 to LISTED orderings: a listing completes (one: read without it)."""
    row = pool.rows[i]
    return row[6] is not None and not row[7] and 1 < row[6] <= LISTED


SOUGHT: dict[str, Callable[[Pool, int, int], bool]] = {  # (pool, row, state): the row may show the theme now
    "many-ways": lambda pool, i, state: state in (CHEAP, FINAL) and may_prove_ways(pool.rows[i]),
    "diagonal": lambda pool, i, state: state == CHEAP and may_show_diagonal(pool, i),
    "blocker-moved-again": lambda pool, i, state: state == CHEAP and _listable(pool, i)
    and blocker_moved_again(pool.moves(i)),
}


MOVED_ROUNDS = ((1, 2), (3, 3), (4, 6))  # robots moved: the rounds of the rare pass (fewer: many-ways more often)


def rare_pass(library: Library, tables: Tables, sought: tuple[str, ...] = tuple(SOUGHT), *,
              options: tuple[Ricochet, ...] = tuple(Ricochet), shard: tuple[int, int] = (0, 1),
              progress: Callable[[int, int, int, dict[str, int]], None] | None = None,
              stop: Callable[[], bool] | None = None, save_every: float = 30.0) -> dict[str, int]:
    """Read thoroughly, into state PROVEN, the rows of the pools of `options`
    that may show a `sought` theme (SOUGHT): many-ways, rows read before it
    could be proven from a partial listing (`may_prove_ways`); diagonal, rows
    read CHEAP whose served solution bounces off a diagonal barrier
    (`may_show_diagonal`); blocker-moved-again, rows read CHEAP whose served
    solution moves a blocker again (every solution must).  In rounds by the
    robots the row's solutions move at fewest (MOVED_ROUNDS: of 11-12 moves,
    many-ways came to about 58% of the rows moving two, 24% of three, none of
    four), each the shortest first (their listings are the quickest).
    Resumable as `theme_pass` is (a PROVEN row is not read again; PENDING
    rows are left to it).  `shard` (k, n): the k-th of every n pools, so that
    n processes share the work and no table.  `progress(fewest_moved, length, rows_read, found)`
    after each length, `found` the rows given each sought theme; `stop()`
    asked between rows.  Returns the counts."""
    entries = [e for e in library.entries() if e.ricochet in options][shard[0]::shard[1]]
    held: dict[str, ThemeTable] = {}
    read, found = 0, dict.fromkeys(sought, 0)
    for least, most in MOVED_ROUNDS:
        for n in range(1, MAX_LENGTH + 1):
            for e in entries:
                pool = library.load(e.id)
                table = held.get(e.id) or tables.read(e.id)
                if pool is None or table is None or len(table.mask) != len(pool.rows):
                    continue
                held[e.id] = table
                todo = [i for i in pool.lengths().get(n, []) if least <= (pool.rows[i][3] or 4) <= most
                        and any(SOUGHT[t](pool, i, table.state[i]) for t in sought)]
                done = _read_rare(library, pool, todo, table, tables, found, stop, save_every) if todo else 0
                read += done
                if done < len(todo):
                    return {"rows_read": read, **found, "stopped": 1}
            if progress is not None:
                progress(least, n, read, dict(found))
    return {"rows_read": read, **found, "stopped": 0}


def _read_rare(library: Library, pool: Pool, todo: list[int], table: ThemeTable, tables: Tables,
               found: dict[str, int], stop: Callable[[], bool] | None, save_every: float) -> int:
    """rare_pass's reading of one pool's rows `todo` (counting in `found` those
    given each theme): how many it read before `stop()`; the table saved."""
    plain, saved = twin_lengths(library, pool), time.monotonic()
    for k, i in enumerate(todo):
        if stop is not None and stop():
            tables.write(table)
            return k
        table.mask[i], table.state[i] = read_row(pool, i, plain, thorough=True, budget=RARE_BUDGET)
        for t in found:
            found[t] += bool(table.mask[i] & BIT[t])
        if time.monotonic() - saved > save_every:
            tables.write(table)
            saved = time.monotonic()
    tables.write(table)
    return len(todo)


def may_be_rare(row: tuple[Any, ...]) -> bool:
    """Whether a listing of the row's solutions may find a rare theme
    (many-ways: ten ways at least; unique; blocker-moved-again and the others
    about every solution need a listing that can be complete): a count of 10
    to LISTED orderings, exact."""
    return row[6] is not None and not row[7] and 10 <= row[6] <= LISTED


# -- the shelf of short and rare-themed puzzles -------------------------------------------------


@dataclass(frozen=True)
class Shelved:
    """A puzzle on the themed shelf: proven optimal, with its themes (thorough)."""

    code: str
    ricochet: str
    moves: tuple[int, ...]
    report: DifficultyReport
    themes: int

    def generated(self) -> Generated:
        p = Puzzle.from_code(self.code)
        path = [Move(p.colours[m >> 2], DIRECTIONS[m & 3]) for m in self.moves]
        return Generated(p, Solution("optimal", path, len(path), round_of(p), {"source": "library"}), self.report)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "ricochet": self.ricochet, "moves": list(self.moves), "difficulty": self.report,
                "themes": names_of(self.themes)}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Shelved:
        return cls(doc["code"], doc["ricochet"], tuple(doc["moves"]), doc["difficulty"], mask_of(doc["themes"]))

    @classmethod
    def of(cls, g: Generated, found: list[str]) -> Shelved:
        moves = tuple(g.puzzle.colours.index(m.robot) * 4 + DIRECTIONS.index(m.direction) for m in g.solution.moves)
        return cls(g.puzzle.code(), g.puzzle.rules.ricochet.value, moves, g.difficulty, mask_of(found))


def read_shelf(path: Path = THEMED) -> list[Shelved]:
    if not path.exists():
        return []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [Shelved.from_json(json.loads(line)) for line in f if line.strip()]


def write_shelf(items: list[Shelved], path: Path = THEMED) -> None:
    body = "".join(json.dumps(s.to_json(), separators=(",", ":")) + "\n" for s in sorted(items, key=lambda s: s.code))
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(gzip.compress(body.encode(), compresslevel=9, mtime=0))
    tmp.replace(path)


# -- the index ------------------------------------------------------------------------------------

SHELF = 0xFFF  # the source number of the themed shelf in a reference (a pool's is its place, 0..SHELF-1)
ROW_BITS = 20  # a reference: source << ROW_BITS | row (a pool holds fewer than 2**20 rows)


@dataclass
class _Column:
    """One (theme, option)'s puzzles by rating: parallel arrays, sorted."""

    ratings: np.ndarray
    refs: np.ndarray
    lengths: np.ndarray  # each one's optimal length


# The rating a puzzle starts at, by optimal length and robots its solution moves (glicko.prior).
_PRIORS = np.array([[prior(n, m).value if n else 0.0 for m in range(6)] for n in range(MAX_LENGTH + 1)],
                   dtype=np.float32)


class Index:
    """Every held puzzle by (theme, ricochet option), ordered by the rating it
    starts at; built once a process from the tables and the shelf (the pools
    themselves are loaded only when a puzzle of theirs is handed)."""

    def __init__(self, library: Library, tables: list[Tables], shelf: list[Shelved]) -> None:
        self.library = library
        self.shelf = shelf
        self.pools: list[str] = []
        self.masks: list[np.ndarray] = []  # per indexed pool: its rows' theme masks (0 for a row not read)
        parts: dict[str, list[tuple[np.ndarray, ...]]] = {}
        for e in library.entries():
            table = next((found for d in tables if (found := d.read(e.id)) is not None), None)
            if table is None or len(self.pools) >= SHELF:
                continue
            number = len(self.pools)
            self.pools.append(e.id)
            read = np.frombuffer(table.state, dtype=np.uint8) != PENDING
            mask = np.where(read, np.frombuffer(table.mask, dtype=np.uint16), 0).astype(np.uint16)
            self.masks.append(mask)
            rating = _PRIORS[np.frombuffer(table.length, dtype=np.uint8), np.frombuffer(table.moved, dtype=np.uint8)]
            refs = (np.uint32(number) << np.uint32(ROW_BITS)) | np.arange(len(mask), dtype=np.uint32)
            parts.setdefault(e.ricochet.value, []).append((mask, rating, refs, np.frombuffer(table.length, np.uint8)))
        if shelf:
            for option in {s.ricochet for s in shelf}:
                ks = [k for k, s in enumerate(shelf) if s.ricochet == option]
                mask = np.array([shelf[k].themes for k in ks], dtype=np.uint16)
                rating = np.array([_rating(len(shelf[k].moves), shelf[k].moves) for k in ks], dtype=np.float32)
                refs = (np.uint32(SHELF) << np.uint32(ROW_BITS)) | np.array(ks, dtype=np.uint32)
                lengths = np.array([len(shelf[k].moves) for k in ks], dtype=np.uint8)
                parts.setdefault(option, []).append((mask, rating, refs, lengths))
        self.numbers = {pool: k for k, pool in enumerate(self.pools)}
        self.shelved = {s.code: k for k, s in enumerate(shelf)}
        self.columns: dict[tuple[str, str], _Column] = {}
        for option, pieces in parts.items():
            mask, rating, refs, lengths = (np.concatenate(x) for x in zip(*pieces, strict=True))
            for t in THEME_NAMES:
                chosen = (mask & BIT[t]) != 0
                order = np.argsort(rating[chosen], kind="stable")
                self.columns[(t, option)] = _Column(rating[chosen][order], refs[chosen][order],
                                                    lengths[chosen][order])

    def count(self, theme: str, ricochet: Ricochet = Ricochet.TURN) -> int:
        column = self.columns.get((theme, ricochet.value))
        return int(len(column.refs)) if column is not None else 0

    def span(self, theme: str, ricochet: Ricochet = Ricochet.TURN) -> tuple[float, float] | None:
        column = self.columns.get((theme, ricochet.value))
        if column is None or not len(column.refs):
            return None
        return float(column.ratings[0]), float(column.ratings[-1])

    def nearest(self, theme: str, aim: float, ricochet: Ricochet = Ricochet.TURN) -> Iterator[tuple[float, int]]:
        """(rating, reference) of the theme's puzzles, nearest `aim` first: a
        bisection, then outward both ways."""
        column = self.columns.get((theme, ricochet.value))
        if column is None:
            return
        ratings, refs = column.ratings, column.refs
        hi = int(np.searchsorted(ratings, aim))
        lo = hi - 1
        while lo >= 0 or hi < len(ratings):
            if hi >= len(ratings) or (lo >= 0 and aim - ratings[lo] <= ratings[hi] - aim):
                yield float(ratings[lo]), int(refs[lo])
                lo -= 1
            else:
                yield float(ratings[hi]), int(refs[hi])
                hi += 1

    def draw(self, theme: str, ricochet: Ricochet, rng: random.Random, *, length: int | None = None,
             fits: Callable[[str], bool] | None = None, scan: int = DRAW_SCAN) -> Generated | None:
        """A puzzle of the theme chosen by `rng`: from a random place in its
        column (within the ratings of `length`, if given), the first of `length`
        whose board `fits` (its spec) within `scan` places on; None if none."""
        column = self.columns.get((theme, ricochet.value))
        if column is None or not len(column.refs):
            return None
        lo, hi = 0, len(column.refs)
        if length is not None:
            lo = int(np.searchsorted(column.ratings, _PRIORS[length][1], side="left"))
            hi = int(np.searchsorted(column.ratings, _PRIORS[length][4], side="right"))
            if lo >= hi:
                return None
        start = rng.randrange(lo, hi)
        for k in range(min(scan, hi - lo)):
            at = lo + (start - lo + k) % (hi - lo)
            if length is not None and int(column.lengths[at]) != length:
                continue
            ref = int(column.refs[at])
            if fits is None or fits(self.spec_of(ref)):
                return self.generated(ref)
        return None

    def spec_of(self, ref: int) -> str:
        """A reference's board spec, without making its puzzle (a pool's is in its id)."""
        source, i = ref >> ROW_BITS, ref & ((1 << ROW_BITS) - 1)
        if source == SHELF:
            return _shelf_spec(self.shelf[i].code)
        return self.pools[source].rsplit("@", 1)[0]

    def held(self, theme: str, ricochet: Ricochet, lo: int, hi: int) -> Iterator[tuple[int, int]]:
        """(length, reference) of every puzzle of the theme from lo to hi moves, by rating."""
        column = self.columns.get((theme, ricochet.value))
        if column is None:
            return
        for k in np.flatnonzero((column.lengths >= lo) & (column.lengths <= hi)):
            yield int(column.lengths[k]), int(column.refs[k])

    def pick(self, ref: int) -> tuple[Pool | None, int, Shelved | None]:
        """Where a reference's puzzle is: its pool and row, or the shelf's entry."""
        source, i = ref >> ROW_BITS, ref & ((1 << ROW_BITS) - 1)
        if source == SHELF:
            return None, -1, self.shelf[i]
        return self.library.load(self.pools[source]), i, None

    def generated(self, ref: int) -> Generated:
        source, i = ref >> ROW_BITS, ref & ((1 << ROW_BITS) - 1)
        if source == SHELF:
            return self.shelf[i].generated()
        pool = self.library.load(self.pools[source])
        assert pool is not None  # indexed from a loaded pool; pools are never unloaded
        return pool.generated(i)

    def lookup(self, p: Puzzle, length: int) -> list[str] | None:
        """The themes the pass gave `p` if the library holds it with this optimal
        `length` (a pool's row or a shelved puzzle), else None."""
        k = self.shelved.get(p.code())
        if k is not None:
            return self.themes_of(SHELF << ROW_BITS | k)
        ids = [pool_id(p.board.spec, p.goal, len(p.colours), p.rules.ricochet)] if p.board.spec else []
        number = self.numbers.get(ids[0]) if ids else None
        pool = self.library.load(ids[0]) if number is not None else None
        if number is None or pool is None or pool.colours != p.colours or p.rules != Rules(ricochet=p.rules.ricochet):
            return None
        cells = tuple(pool.board.index(cell) for _, cell in p.robots)
        rows = pool.lengths().get(length)
        if rows is None:
            return None
        # A built pool's rows are sorted by cells within a length; the catalogue's are kept as found.
        at = bisect.bisect_left(rows, cells, key=lambda i: tuple(pool.rows[i][0])) if len(rows) > SCANNED else 0
        for i in rows[at:] if len(rows) > SCANNED else rows:
            if tuple(pool.rows[i][0]) == cells:
                return self.themes_of(number << ROW_BITS | i)
            if len(rows) > SCANNED:
                break
        return None

    def themes_of(self, ref: int) -> list[str]:
        """The themes the pass gave a reference (a row read without its listing
        has none of the listing's themes, as after a listing that stopped)."""
        source, i = ref >> ROW_BITS, ref & ((1 << ROW_BITS) - 1)
        return names_of(self.shelf[i].themes if source == SHELF else int(self.masks[source][i]))


@functools.lru_cache(maxsize=8192)
def _shelf_spec(code: str) -> str:
    return Puzzle.from_code(code).board.spec or ""


_SHARED: list[Index] = []


def shared(library: Library | None = None, tables: list[Tables] | None = None) -> Index:
    """This process's index, built on first use: over `library` and `tables`
    when the first caller gives them (gunicorn's master, before it forks: the
    deployment's pools and the workers' tables), else what the package ships."""
    if not _SHARED:
        _SHARED.append(Index(library or Library(shipped()), tables or [TableDirectory(TABLES)], read_shelf()))
    return _SHARED[0]


def _rating(length: int, moves: tuple[int, ...]) -> float:
    return prior(length, len({m >> 2 for m in moves})).value


# -- the targeted search --------------------------------------------------------------------------

SHELF_LENGTHS = range(2, 8)  # the lengths pools do not hold (they start at pools.MIN_LENGTH)
BAND = 200  # rating points a band spans
PER_BAND = 50  # puzzles of a theme wanted in each band it can reach
PER_LENGTH = 150  # puzzles of each shelved length and option wanted, whatever their themes


def band_of(rating: float) -> int:
    return int(rating // BAND) * BAND


def grow_shelf(shelf: list[Shelved], *, seconds: float, seed: str = "shelf",
               options: tuple[Ricochet, ...] = (Ricochet.TURN, Ricochet.NONE),
               progress: Callable[[int, int], None] | None = None) -> list[Shelved]:
    """Search for short puzzles (SHELF_LENGTHS) on random 2013 boards until each
    length and option holds PER_LENGTH and each (theme, option, band) the
    shelf's lengths reach holds PER_BAND, or `seconds` pass; a puzzle is kept
    when it adds to what is still wanted.  Returns the grown shelf (a new list).
    Deterministic for a seed and a budget reached by the counts, not the clock."""

    have = {s.code for s in shelf}
    grown = list(shelf)
    counts: dict[tuple[Any, ...], int] = {}
    for s in grown:
        _count(counts, s)
    deadline = time.monotonic() + seconds
    k = 0
    while time.monotonic() < deadline:
        wanted = [(n, o) for o in options for n in SHELF_LENGTHS if _wants(counts, n, o)]
        if not wanted:
            break
        n, option = wanted[k % len(wanted)]
        k += 1
        g = _new_short(n, option, f"{seed}:{k}", have)
        if g is None:
            continue
        found = themes(g.puzzle, g.solution.moves, time_budget=2.0, report=g.difficulty)
        s = Shelved.of(g, found)
        if counts.get(("length", n, option.value), 0) < PER_LENGTH or any(
                counts.get((t, option.value, band_of(_rating(n, s.moves))), 0) < PER_BAND for t in found):
            have.add(s.code)
            grown.append(s)
            _count(counts, s)
            if progress is not None:
                progress(len(grown), k)
    return grown


RARE_SOUGHT = {"ricochet-rule": ((Ricochet.TURN,), range(3, 8)), "many-ways": ((Ricochet.TURN, Ricochet.NONE),
                                                                                range(4, 8))}


def seek_rare(shelf: list[Shelved], theme: str, *, seconds: float, seed: str = "rare",
              progress: Callable[[int, int], None] | None = None) -> list[Shelved]:
    """Search short puzzles for one rare theme (RARE_SOUGHT) for `seconds`,
    each tried first by what is cheap to know (ricochet-rule: a plain-rule
    solve one move shorter; many-ways: ten orderings at least in its report),
    and shelve every one that has it (its themes worked out in full).  Returns
    the grown shelf."""

    options, lengths = RARE_SOUGHT[theme]
    have, grown = {s.code for s in shelf}, list(shelf)
    deadline, k = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        n, option = lengths[k % len(lengths)], options[k // len(lengths) % len(options)]
        k += 1
        g = _new_short(n, option, f"{seed}:{theme}:{k}", have)
        if g is None:
            continue
        if theme == "ricochet-rule":
            if shorter_plain(g.puzzle, n, time_budget=1.0) is None:
                continue
        elif (g.difficulty.get("optimal_solutions") or 0) < 10:
            continue
        found = themes(g.puzzle, g.solution.moves, time_budget=2.0, report=g.difficulty)
        if theme in found:
            have.add(g.puzzle.code())
            grown.append(Shelved.of(g, found))
            if progress is not None:
                progress(len(grown), k)
    return grown


def _new_short(n: int, option: Ricochet, seed: str, have: set[str]) -> Generated | None:
    """A puzzle of n moves under the option, searched for from `seed`, unless none
    was found or the shelf has it (`have`: its codes)."""
    from solver.production.generate import generate
    from solver.production.generated import NoPuzzleFound

    try:
        g = generate(n, seed=seed, rules=Rules(ricochet=option), time_budget=2.0)
    except NoPuzzleFound:
        return None
    return None if g.puzzle.code() in have else g


def _count(counts: dict[tuple[Any, ...], int], s: Shelved) -> None:
    n = len(s.moves)
    counts[("length", n, s.ricochet)] = counts.get(("length", n, s.ricochet), 0) + 1
    for t in names_of(s.themes):
        key = (t, s.ricochet, band_of(_rating(n, s.moves)))
        counts[key] = counts.get(key, 0) + 1


def _wants(counts: dict[tuple[Any, ...], int], n: int, option: Ricochet) -> bool:
    """Whether a puzzle of length n could still add to the counts wanted: its
    length's count, or a theme's band at that length (rare ones keep it going)."""
    if counts.get(("length", n, option.value), 0) < PER_LENGTH:
        return True
    bands = {band_of(prior(n, m).value) for m in range(1, 5)}
    rare = ("ricochet-rule", "many-ways", "three-helpers", "diagonal", "blocker-moved-again", "unique")
    return any(counts.get((t, option.value, b), 0) < PER_BAND for t in rare for b in bands
               if (t != "ricochet-rule" or option is Ricochet.TURN) and (t != "three-helpers" or n >= 4))
