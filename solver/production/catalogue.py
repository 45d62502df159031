"""The catalogue of long puzzles over a whole edition: proven puzzles of 16 moves
and more on as many (board, target) pairs as can be reached, shipped beside the
starter pools in the pools' own format, so packs, random puzzles and the next
puzzle for a player draw on it as on any pool.

How it grows (docs/production.md measures it): a long puzzle's hardness lies
mostly in its target's quadrant and where its robots stand, so its **board
variants** are often long too.  A variant keeps the robots and the target and
changes one quadrant the target is not in: that quadrant's section replaced by
another of its colour, or two such sections swapped (green stays at the
top-left: each board is named once).  Each variant is a new (board, target)
pair, proven by the solver; those of 16 moves and more are kept, and the long
ones (`SEED_FROM` moves and more) are grown again.  Screening pairs with the
3-robot analysis instead, and adding a fourth robot, was measured and fails:
3 robots reach 10 to 15 moves, and a fourth robot did not lengthen one of 700
tries beyond that.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

from solver.errors import InvalidInput
from solver.model.board import parse_spec, real_board, sections
from solver.model.geometry import DIRECTIONS
from solver.model.puzzle import Puzzle
from solver.production.difficulty import difficulty
from solver.production.generated import Generated
from solver.production.pools import CATALOGUE, DirectorySource, Library, Pool, pool_id
from solver.search.solve import solve

MIN_LENGTH = 16  # the catalogue keeps puzzles of this many moves and more
SEED_FROM = 20   # and grows variants from those of this many and more
PER_LENGTH = 3   # puzzles kept per pair and length


def catalogue() -> DirectorySource:
    """The catalogue shipped with the package (read-only), as a pool source."""
    return DirectorySource(CATALOGUE)


def _quadrant(cell: tuple[int, int]) -> int:
    x, y = cell
    return (0 if x < 8 else 1) if y < 8 else (2 if x >= 8 else 3)  # NW NE SE SW, as specs list them


def variant_specs(spec: str, target_quadrant: int, edition: str = "2013") -> list[str]:
    """The board specs one change away from `spec` that keep the target's quadrant
    (see the module's docstring), in a fixed order."""
    quads = list(parse_spec(spec))
    sides = "AB" if edition == "1999" else "ABCD"
    by_colour: dict[str, list[str]] = defaultdict(list)
    for sid, q in sections().items():
        if sid[-1] in sides:
            by_colour[q["colour_marking"]].append(sid)
    out = []
    for q in range(4):
        if q == target_quadrant:
            continue
        for alternative in by_colour[sections()[quads[q]]["colour_marking"]]:
            if alternative != quads[q]:
                out.append(",".join(quads[:q] + [alternative] + quads[q + 1:]))
    for a in range(1, 4):
        for b in range(a + 1, 4):
            if target_quadrant not in (a, b):
                swapped = quads.copy()
                swapped[a], swapped[b] = swapped[b], swapped[a]
                out.append(",".join(swapped))
    return out


def variants(p: Puzzle, edition: str = "2013") -> list[Puzzle]:
    """The puzzle on each variant board (robots and target where they were); a
    variant where a robot would stand on a diagonal barrier is left out."""
    out = []
    for spec in variant_specs(p.board.spec, _quadrant(p.goal.cell), edition):
        try:
            out.append(Puzzle.create(real_board(spec), dict(p.robots), p.goal, p.rules))
        except InvalidInput:
            continue
    return out


def variant_key(p: Puzzle) -> str:
    """A variant is tried once per position (its code): a pair tried short with
    one seed's robots may be long with another's.  (Once per pair was measured:
    the growth ran dry at 230 pairs.)"""
    return p.code()


def prove(p: Puzzle, time_budget: float, min_length: int = MIN_LENGTH) -> Generated | None:
    """The puzzle with its optimal solution, when it takes `min_length` moves or
    more and the solver proves it within the budget."""
    answer = solve(p, time_budget=time_budget)
    if answer.status != "optimal" or len(answer.moves) < min_length:
        return None
    return Generated(p, answer, difficulty(p, answer, time_budget=0.2))


def claimer(tried: set[str]) -> Callable[[str], bool]:
    """A claim on a set of keys tried: True the first time a key is asked for."""
    def claim(key: str) -> bool:
        fresh = key not in tried
        tried.add(key)
        return fresh

    return claim


def grow(seeds: Iterable[Puzzle], *, time_budget: float = 10.0, seed: int | str = 0,
         claim: Callable[[str], bool] | None = None, until: float | None = None) -> Iterator[Generated]:
    """Proven long puzzles on new pairs, breadth first from `seeds`: each seed's
    variants, then those of the long variants found.  `claim(key)` says whether a
    variant is this caller's to prove (a set of those tried, by default; the
    workers share theirs in Redis), so none is proven twice.  It stops at
    `until` (time.monotonic()), if given."""
    claim = claim or claimer(set())
    rng = random.Random(seed)
    queue = list(seeds)
    while queue:
        p = queue.pop(0)
        found = []
        for v in variants(p):
            if until is not None and time.monotonic() > until:
                return
            if not claim(variant_key(v)):
                continue
            g = prove(v, time_budget)
            if g is not None:
                found.append(g)
                yield g
                yield from _nearby(g, rng, claim, time_budget, until)
        rng.shuffle(found)
        queue.extend(g.puzzle for g in found if len(g.solution.moves) >= SEED_FROM)


WALK_STEPS = 6  # positions walked on a new pair whose puzzle is near WALK_NEAR moves
WALK_NEAR = range(17, 24)


def _nearby(g: Generated, rng: random.Random, claim: Callable[[str], bool], time_budget: float,
            until: float | None) -> Iterator[Generated]:
    """A few more puzzles on a new pair: the walk (solver/production/walk.py)
    from its puzzle, one robot at a time, keeping what is long enough; most
    pairs' lengths near 20 reach 20 itself this way."""
    from solver.production.walk import walk

    if len(g.solution.moves) not in WALK_NEAR:
        return
    deadline = time.monotonic() + time_budget
    if until is not None:
        deadline = min(deadline, until)
    for p, answer in walk(g.puzzle, rng, steps=WALK_STEPS, floor=MIN_LENGTH, depth=30, deadline=deadline):
        if answer is not None and answer.status == "optimal" and len(answer.moves) >= MIN_LENGTH and claim(p.code()):
            yield Generated(p, answer, difficulty(p, answer, time_budget=0.2))


def pools_of(found: Iterable[Generated], per_length: int = PER_LENGTH) -> list[Pool]:
    """Proven puzzles as pools (one per board, target, robots and rule), at most
    `per_length` per length, in the pools' row format (the counts a pool build
    takes from its analysis are left empty: fewest robots and helper moves come
    from the one solution)."""
    grouped: dict[str, list[Generated]] = defaultdict(list)
    for g in found:
        p = g.puzzle
        grouped[pool_id(p.board.spec, p.goal, len(p.robots), p.rules.ricochet)].append(g)
    out = []
    for items in grouped.values():
        first = items[0].puzzle
        colours = first.colours
        rows, per = [], defaultdict(int)
        seen = set()
        for g in sorted(items, key=lambda g: (len(g.solution.moves), g.puzzle.code())):
            n = len(g.solution.moves)
            if per[n] >= per_length or g.puzzle.code() in seen:
                continue
            per[n] += 1
            seen.add(g.puzzle.code())
            cells = [g.puzzle.board.index(cell) for _, cell in g.puzzle.robots]
            moves = [colours.index(m.robot) * 4 + DIRECTIONS.index(m.direction) for m in g.solution.moves]
            finisher = g.solution.moves[-1].robot
            rows.append((cells, n, moves, len(g.solution.robots_moved),
                         sum(m.robot != finisher for m in g.solution.moves), None, None, None,
                         g.solution.stats.get("lone_bound", 0)))
        out.append(Pool(first.board, first.goal, colours, first.rules.ricochet, rows,
                        built={"source": "catalogue", "rows": len(rows)}))
    return out


def seeds_for(library: Library, count: int, min_length: int = SEED_FROM) -> list[str]:
    """Codes of `count` long puzzles to grow from, of `min_length` moves and more:
    one from each pair the bank holds, then the pools' rows, the pools taking turns,
    longest first (the bank's hundreds lie on a few pairs, whose variants are the
    same boards)."""
    from solver.production import bank

    codes, pairs = [], set()
    for e in bank.entries():
        p = Puzzle.from_code(e["code"])
        pair = pool_id(p.board.spec, p.goal, len(p.robots), p.rules.ricochet)
        if e["length"] >= min_length and e["robots"] == 4 and e["edition"] == "2013" and pair not in pairs:
            pairs.add(pair)
            codes.append(e["code"])
    rows = []
    for entry in library.entries():
        pool = library.load(entry.id)
        if pool is None or len(pool.colours) != 4 or pool.board.spec is None or "-" not in pool.board.spec:
            continue
        longest = sorted((n for n in pool.lengths() if n >= min_length), reverse=True)
        rows.append([pool.puzzle(i).code() for n in longest for i in pool.lengths()[n][:PER_LENGTH]])
    while rows and len(codes) < count:
        for r in rows:
            if r:
                codes.append(r.pop(0))
        rows = [r for r in rows if r]
    return codes[:count]


def found_json(g: Generated) -> dict[str, object]:
    """What the catalogue keeps of a proven puzzle besides its code."""
    return {"moves": [m.to_json() for m in g.solution.moves], "lone": g.solution.stats.get("lone_bound", 0)}


def from_json(code: str, found: dict[str, object]) -> Generated:
    """A kept puzzle as a Generated again (its report is the pool's to make)."""
    from solver.model.moves import round_of
    from solver.model.puzzle import Move
    from solver.search.solution import Solution

    p = Puzzle.from_code(code)
    moves = [Move.from_json(m) for m in found["moves"]]  # type: ignore[union-attr]
    return Generated(p, Solution("optimal", moves, len(moves), round_of(p), {"lone_bound": found["lone"]}), {})


def catalogue_pool_id(g: Generated) -> str:
    p = g.puzzle
    return pool_id(p.board.spec, p.goal, len(p.robots), p.rules.ricochet)
