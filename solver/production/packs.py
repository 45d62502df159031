"""A pack's plan: which puzzles come from pools (and the bank), and which are searched for.

A pure function of the request, its seed and the pool set.  Lengths take
turns (lo..hi in an order drawn from the seed), and for each length the
(board, target) pairs that hold it take turns too: every fitting pool, and
the bank's proven long puzzles grouped by board and target.  So a pack
spreads over every source before it repeats one; after that each pair is
drawn on in proportion to what it holds.  No two planned puzzles
share a board, target and optimal solution.  Items no source can fill (no
pool holds the length, or its puzzles are used up) are searched for.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from solver.errors import InvalidInput
from solver.model.board import BoardKind
from solver.model.puzzle import Move, Puzzle, Ricochet, Rules, moves_from_json
from solver.play.glicko import prior
from solver.production import bank
from solver.production import library as themed
from solver.production.generate import generate
from solver.production.generated import Generated, GeneratedJson, NoPuzzleFound
from solver.production.pools import Entry, Library, Pool, admits, shipped
from solver.production.themes import THEMES, themes, themes_of_length
from solver.search.solve import Cancel


class PackRequest(TypedDict):
    """A pack request as workers/schemas.py's PackRequest loads it (POST /v1/packs, the
    ricochet.pack task's job, `ricochet pack`): defaults filled in."""

    count: int
    min_length: int
    max_length: int
    seed: int | str
    board: str
    robots: int
    ricochet: str
    min_rating: NotRequired[int]
    max_rating: NotRequired[int]
    theme: NotRequired[str]
    title: NotRequired[str]


WANTED = ("min_rating", "max_rating", "theme")  # what a request may narrow a pack to, beside its lengths
PACK_THEMES = tuple(THEMES)  # every theme: the library's pass gave its puzzles theirs (issue 68)
SHORT = 7  # a searched item this short has its solutions listed for a theme that needs them (milliseconds)
LENGTH_THEMES = ("long", "short", "very-long")
CLASH_RETRIES = 5  # a searched item that repeats another's board, target and solution is searched again


@dataclass(frozen=True)
class Planned:
    """Item `index`: a pool row, a bank entry, or (neither) a search for `length` moves."""

    index: int
    length: int
    pool: Pool | None = None
    row: int = -1
    entry: dict[str, Any] | None = None

    @property
    def drawn(self) -> bool:
        return self.pool is not None or self.entry is not None

    def generated(self) -> Generated:
        if self.pool is not None:
            return self.pool.generated(self.row)
        assert self.entry is not None
        return bank.generated(self.entry)


def variety_key(item: Mapping[str, Any]) -> str:
    """What no two puzzles of a pack share: board, target and optimal solution."""
    board = item["board"] if isinstance(item["board"], str) else item["board"].get("spec", str(item["board"]))
    target = item["target"]
    moves = " ".join(f"{m['robot'][0]}{m['direction']}" for m in item["solution"])
    return f"{board}|{target.get('cell')}|{target.get('colour')}|{moves}"


Pick = tuple[Pool | None, int, dict[str, Any] | None]


def fits(request: Mapping[str, Any], p: Puzzle, moves: Sequence[Move]) -> bool:
    """Whether a puzzle and its optimal solution fit the request's rating band and
    theme (if it asks for them): the rating it starts at (glicko.prior, from its
    length and the robots the solution moves) and the themes that solution shows."""
    if "min_rating" in request or "max_rating" in request:
        rating = prior(len(moves), len({m.robot for m in moves})).value
        if not request.get("min_rating", 0) <= rating <= request.get("max_rating", 9999):
            return False
    return "theme" not in request or request["theme"] in themes_known(p, moves)


def themes_known(p: Puzzle, moves: Sequence[Move]) -> list[str]:
    """A pack item's themes: those the library's pass gave it, when it holds it;
    else a short one's, its solutions listed; else those its one solution shows."""
    held = themed.shared().lookup(p, len(moves))
    if held is not None:
        return held
    return themes(p, moves, time_budget=1.0) if len(moves) <= SHORT else themes(p, moves, thorough=False)


def fitting_lengths(request: Mapping[str, Any], lo: int, hi: int, robots: int) -> list[int]:
    """The lengths from lo to hi whose puzzles can fit the request's rating band and
    theme (all of them without either): the band holds the rating a puzzle of that
    length starts at with some number of robots moved (one for a solo), and a
    theme of length holds that length."""
    low, high = request.get("min_rating", 0), request.get("max_rating", 9999)
    theme = request.get("theme")
    moved = [1] if theme == "solo" else range(1, robots + 1)
    return [n for n in range(lo, hi + 1) if any(low <= prior(n, k).value <= high for k in moved)
            and (theme not in LENGTH_THEMES or theme in themes_of_length(n))]


def plan(count: int, lo: int, hi: int, *, board: str, robots: int, ricochet: Ricochet, seed: int | str,
         library: Library | None, wanted: dict[str, Any] | None = None) -> list[Planned]:
    """`wanted`: the request's rating band and theme, if any; then only picks that fit."""
    extra = f":{sorted(wanted.items())}" if wanted else ""  # a pack without them is drawn as it always was
    rng = random.Random(f"pack-plan:{seed}:{lo}:{hi}:{board}:{robots}:{ricochet}{extra}")
    lengths = fitting_lengths(wanted or {}, lo, hi, robots) or list(range(lo, hi + 1))
    theme = (wanted or {}).get("theme")
    sources = _held(theme, lo, hi, board, ricochet) if theme and robots == 4 else {}
    if sources:  # a themed pack: the library's puzzles of the theme, at the lengths it holds them
        lengths = [n for n in lengths if n in sources] or sorted(sources)
    else:
        sources = _sources(lo, hi, board, robots, ricochet, library)
    rng.shuffle(lengths)
    queues: dict[int, Iterator[Pick]] = {n: _turns(sources.get(n, {}), rng) for n in lengths}
    taken: set[tuple[Any, ...]] = set()
    out = []
    for index in range(count):
        n = lengths[index % len(lengths)]
        # A themed pack takes a held puzzle of another length before it searches (a theme is rare at some)
        for m in [n] + ([k for k in lengths if k != n] if theme and robots == 4 else []):
            pick = _next_pick(queues[m], taken, wanted)
            if pick is not None:
                n = m
                break
        out.append(Planned(index, n, *pick) if pick else Planned(index, n))
    return out


def _next_pick(queue: Iterator[Pick], taken: set[tuple[Any, ...]], wanted: dict[str, Any] | None) -> Pick | None:
    """The queue's next pick that repeats none `taken` and fits `wanted`; taken then."""
    for candidate in queue:
        keys = _keys(candidate)
        if taken.isdisjoint(keys) and (not wanted or fits(wanted, *_drawn(candidate))):
            taken.update(keys)
            return candidate
    return None


def _held(theme: str, lo: int, hi: int, board: str, ricochet: Ricochet) -> dict[int, dict[str, list[Pick]]]:
    """Per length, per (board, target): the library's puzzles of the theme
    (solver/production/library.py: pool rows and the shelf), on boards `board` admits."""
    out: dict[int, dict[str, list[Pick]]] = {}
    index = themed.shared()
    for n, ref in index.held(theme, ricochet, lo, hi):
        pool, row, shelved = index.pick(ref)
        if pool is not None:
            if admits(board, pool.board.spec or ""):
                out.setdefault(n, {}).setdefault(f"{pool.board.spec}@{pool.goal.cell}", []).append((pool, row, None))
        elif shelved is not None:
            g = shelved.generated()
            if g.puzzle.board.spec and admits(board, g.puzzle.board.spec):
                entry = {"code": shelved.code, "length": n, "difficulty": shelved.report,
                         "solution": [m.to_json() for m in g.solution.moves]}
                out.setdefault(n, {}).setdefault(f"{g.puzzle.board.spec}@{g.puzzle.goal.cell}", []).append(
                    (None, -1, entry))
    return out


def _sources(lo: int, hi: int, board: str, robots: int, ricochet: Ricochet,
             library: Library | None) -> dict[int, dict[str, list[Pick]]]:
    """Per length, per (board, target): the picks that source holds."""
    out: dict[int, dict[str, list[Pick]]] = {}
    if library is not None:
        for pool in library.pools(board, robots, ricochet):
            pair = f"{pool.board.spec}@{pool.goal.cell}"
            for n, rows in pool.lengths().items():
                if lo <= n <= hi:
                    out.setdefault(n, {}).setdefault(pair, []).extend((pool, i, None) for i in rows)
    if BoardKind.of(board) is not None or "," in board:
        for e in sorted(bank.entries(), key=lambda e: e["code"]):
            if not lo <= e["length"] <= hi or e["robots"] != robots or e["ricochet"] != ricochet:
                continue
            p = Puzzle.from_code(e["code"])
            entry = Entry(p.code(), p.board.spec or "", p.goal.cell, p.goal.colour, robots, ricochet)
            if p.board.spec and entry.fits(board, robots, ricochet):
                pair = f"{p.board.spec}@{p.goal.cell}"
                out.setdefault(e["length"], {}).setdefault(pair, []).append((None, -1, e))
    return out


def _drawn(pick: Pick) -> tuple[Puzzle, tuple[Move, ...]]:
    pool, row, entry = pick
    if pool is not None:
        return pool.puzzle(row), tuple(pool.moves(row))
    assert entry is not None  # a pick without a pool is the bank's entry
    return Puzzle.from_code(entry["code"]), tuple(bank.solution_of(entry))


def _keys(pick: Pick) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """What no two picks of a pack share: the position (one puzzle may be held by
    two sources, each with its own optimal solution) and, on a pair, the solution."""
    p, moves = _drawn(pick)
    return ("position", p.code()), ("solution", p.board.spec, p.goal.cell, moves)


def _turns(pairs: dict[str, list[Pick]], rng: random.Random) -> Iterator[Pick]:
    """The picks of several (board, target) pairs: every pair once (in an order
    drawn from rng), then each pair as often as its share of all the picks, so
    that a pair holding thousands of puzzles is drawn on more than one holding
    three (ten packs with different seeds then repeat few puzzles); each
    pair's picks in an order drawn from rng.  A pair's k-th turn comes at k /
    (its picks), ties in the drawn order."""
    queues = []
    for pair in sorted(pairs):
        order = list(pairs[pair])
        rng.shuffle(order)
        queues.append(order)
    rng.shuffle(queues)
    due = [(0.0, i, 0) for i in range(len(queues))]
    while due:
        _, i, k = heapq.heappop(due)
        yield queues[i][k]
        if k + 1 < len(queues[i]):
            heapq.heappush(due, ((k + 1) / len(queues[i]), i, k + 1))


def plan_for(request: PackRequest, library: Library | None) -> list[Planned]:
    """The plan of a pack request (the fields of POST /v1/packs, defaults filled in)."""
    wanted: dict[str, Any] = {k: v for k, v in request.items() if k in WANTED}  # `plan` sorts them
    return plan(request["count"], request["min_length"], request["max_length"], board=request["board"],
                robots=request["robots"], ricochet=Ricochet(request["ricochet"]), seed=request["seed"], library=library,
                wanted=wanted)


def item(request: PackRequest, planned: Planned, library: Library | None,
         cancel: Cancel | None = None) -> GeneratedJson:
    """A planned item as its plan has it: drawn from a pool or the bank, else
    searched for (its first try)."""
    return planned.generated().to_json() if planned.drawn else \
        searched_item(request, planned.index, planned.length, library, cancel)


def searched_item(request: PackRequest, index: int, length: int, library: Library | None,
                  cancel: Cancel | None = None, attempt: int = 0) -> GeneratedJson:
    """A pack item the pools could not fill: searched for, a pure function of the
    request, the index and the attempt (a retry after a clash with another item)."""
    suffix = f":{attempt}" if attempt else ""
    target = "vortex" if request.get("theme") == "vortex" else "any"  # the one theme a search can aim at
    g = generate(length, board=request["board"], robots=request["robots"],
                 rules=Rules(ricochet=Ricochet(request["ricochet"])), seed=f"pack:{request['seed']}:{index}{suffix}",
                 max_evaluations=5000, pools=library,
                 draw_from_pools=False, cancel=cancel, target=target)
    return g.to_json()


Search = Callable[..., GeneratedJson]


def settle(request: PackRequest, index: int, length: int, library: Library | None,
           claim: Callable[[str, int], bool], cancel: Cancel | None = None,
           search: Search | None = None) -> GeneratedJson | str:
    """Item `index` of a pack, searched for: the item, or why none could be made.
    `claim(variety_key, index)` says whether the item is new to the pack (the
    API's store, or the CLI's dict); a repeat is searched again, up to
    CLASH_RETRIES times.  `search` stands in for searched_item (the same
    arguments), for a caller that already holds a first try."""
    search = search or searched_item
    try:
        for attempt in range(CLASH_RETRIES + 1):
            item = search(request, index, length, library, cancel, attempt)
            if _fits_item(request, item) and claim(variety_key(item), index):
                return item
        if any(k in request for k in WANTED):
            raise NoPuzzleFound(f"the pools hold too few that fit the rating band and theme asked, and "
                                f"{CLASH_RETRIES + 1} searched ones did not fit or repeated another")
        raise NoPuzzleFound(f"every puzzle found repeats another of the pack ({CLASH_RETRIES + 1} tries)")
    except (InvalidInput, NoPuzzleFound) as e:
        return f"no puzzle of {length} moves: {e}"


def _fits_item(request: PackRequest, item: GeneratedJson) -> bool:
    if not any(k in request for k in WANTED):
        return True
    p = Puzzle.from_json({k: item[k] for k in ("board", "robots", "target", "rules")})
    return fits(request, p, moves_from_json(item["solution"]))


def _first_try(job: tuple[PackRequest, int, int]) -> tuple[int, GeneratedJson | str]:
    request, index, length = job
    try:
        return index, searched_item(request, index, length, Library(shipped()))
    except (InvalidInput, NoPuzzleFound) as e:
        return index, f"no puzzle of {length} moves: {e}"


def make(request: PackRequest, *, processes: int = 1,
         progress: Callable[[int], None] | None = None) -> Iterator[tuple[int, GeneratedJson | str]]:
    """A whole pack without a server, from the starter pools: (index, item) in
    index order, or (index, reason) for an item that could not be made.  The
    same items as the API's pack for the same request where no two searches
    clash; where they do, here an item that repeats an earlier one (by index)
    is searched again.  First tries run on `processes` processes; clashes are
    settled in index order, as `settle` does for the API's workers."""
    library = Library(shipped())
    planned = plan_for(request, library)
    drawn = {p.index: p.generated().to_json() for p in planned if p.drawn}
    items: dict[int, GeneratedJson | str] = dict(drawn)
    # As in the API: drawn items claim their keys first, searched ones in index order.
    claimed = {variety_key(item): index for index, item in drawn.items()}
    if progress:
        progress(len(items))
    todo = [(request, p.index, p.length) for p in planned if not p.drawn]
    lengths = {index: length for _, index, length in todo}
    with ProcessPoolExecutor(processes) if processes > 1 and todo else _Inline() as executor:
        for index, tried in executor.map(_first_try, todo):  # in index order, searched ahead in parallel
            items[index] = tried if isinstance(tried, str) else \
                settle(request, index, lengths[index], library, lambda key, i: claimed.setdefault(key, i) == i,
                       search=_then_search(tried))
            if progress:
                progress(1)
    for index in range(request["count"]):
        yield index, items[index]


def _then_search(tried: GeneratedJson) -> Search:
    """searched_item, whose first try is already made."""
    def search(request: PackRequest, index: int, length: int, library: Library | None,
               cancel: Cancel | None, attempt: int) -> GeneratedJson:
        return tried if attempt == 0 else searched_item(request, index, length, library, cancel, attempt)

    return search


class _Inline:
    """An executor that maps in this process."""

    def __enter__(self) -> _Inline:
        return self

    def __exit__(self, *_: Any) -> None:
        return None

    map = staticmethod(map)
