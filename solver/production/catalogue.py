"""The catalogue of long puzzles over a whole edition: proven puzzles of 16 moves
and more on as many (board, target) pairs as can be reached, shipped beside the
starter pools in the pools' own format, so packs, random puzzles and the next
puzzle for a player draw on it as on any pool.

How it grows (docs/production.md measures it): a long puzzle's hardness lies
mostly in its target's section and where its robots stand, so the other boards
of its **family** are often long too.  A family is a section with one of its
chips as the target, at one quadrant: its boards are every board of the
edition with that section there (128 of them, 384 when it is the green one at
the top-left), all with the target on the same cell.  The growth takes each
family's boards in turn.  It **sweeps** a board of a family with long puzzles
known: it tries the robot placements of the family's longest, one after
another, each proven by the solver, until one is `SEED_FROM` moves or more,
and from the board's longest walks towards exactly `SEED_FROM` moves (see
`_nearby`).  It **lifts** every board still short (see `lift`): the 2-robot
analysis tells in milliseconds whether it can be long, and the 3-robot ones
(a second or two) which 4-robot positions are likely `SEED_FROM` moves long,
each then proven by the solver.  Everything of `MIN_LENGTH`
moves and more is kept.  It **fills** a pair holding few puzzles of
`SEED_FROM` moves with more beside them (see `fill`): every pack of that
length takes one from every pair.  Growing chains of variants from single puzzles
(its robots only) was measured and given up: it ran dry at about 250 pairs.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import cast

from solver.errors import InvalidInput
from solver.model.board import Board, all_boards, parse_spec, real_board
from solver.model.geometry import DIRECTIONS, ROBOT_COLOURS
from solver.model.puzzle import Goal, Puzzle, Ricochet, Rules
from solver.play.grades import DifficultyReport
from solver.production.difficulty import difficulty
from solver.production.generated import Generated
from solver.production.pools import CATALOGUE, DirectorySource, Library, Pool, pool_id
from solver.search.solve import solve, upper_bound

MIN_LENGTH = 16  # the catalogue keeps puzzles of this many moves and more
SEED_FROM = 20   # sweeps a board until one of this many moves or more, and walks towards exactly this many
PER_LENGTH = 3   # puzzles kept per pair and length
PER_SEED = 48    # and at exactly SEED_FROM moves (ten packs of that length draw on every pair: see `fill`)
PLACEMENTS = 16  # robot placements of a family's long puzzles tried on each of its boards


def catalogue() -> DirectorySource:
    """The catalogue shipped with the package (read-only), as a pool source."""
    return DirectorySource(CATALOGUE)


def _quadrant(cell: tuple[int, int]) -> int:
    x, y = cell
    return (0 if x < 8 else 1) if y < 8 else (2 if x >= 8 else 3)  # NW NE SE SW, as specs list them


def family_of(p: Puzzle) -> str:
    """A puzzle's family: its target's section, quadrant and chip (see the module's docstring)."""
    return _family(p.board.spec or "", p.goal.cell, p.goal.colour)


def _family(spec: str, cell: tuple[int, int], colour: str | None) -> str:
    q = _quadrant(cell)
    return f"{parse_spec(spec)[q]}@{q}:{cell[0]}-{cell[1]}-{colour or 'any'}"


def all_families(edition: str = "2013") -> list[str]:
    """Every family of the edition (each chip of each section at each quadrant it
    can sit at), in a fixed order."""
    seen: dict[str, None] = {}
    firsts: dict[tuple[str, int], str] = {}
    for spec in all_boards(edition):
        for q, sid in enumerate(parse_spec(spec)):
            firsts.setdefault((sid, q), spec)
    for (_, q), spec in sorted(firsts.items()):
        for t in real_board(spec).targets:
            if _quadrant(t.cell) == q:
                seen.setdefault(_family(spec, t.cell, t.colour), None)
    return list(seen)


def family_boards(family: str, edition: str = "2013") -> list[str]:
    """The boards of a family, in the edition's order."""
    section, _, rest = family.partition("@")
    q = int(rest.split(":")[0])
    return [spec for spec in all_boards(edition) if parse_spec(spec)[q] == section]


def placed(p: Puzzle, spec: str) -> Puzzle | None:
    """A puzzle's robots and target on another board of its family (None when
    a robot would stand on a target or a diagonal barrier there)."""
    try:
        return Puzzle.create(real_board(spec), dict(p.robots), p.goal, p.rules)
    except InvalidInput:
        return None


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


def families(seeds: Iterable[Puzzle], moved: bool = False) -> dict[str, list[Puzzle]]:
    """The seeds by family, at most PLACEMENTS distinct placements each, in the
    order given; with `moved`, also each seed turned into the families of its
    section at the other quadrants (see `turned`), after the seeds' own."""
    out: dict[str, list[Puzzle]] = defaultdict(list)
    items = list(seeds)
    for p in items + ([t for seed in items for t in turned(seed)] if moved else []):
        placements = out[family_of(p)]
        if len(placements) < PLACEMENTS and all(dict(p.robots) != dict(o.robots) for o in placements):
            placements.append(p)
    return dict(out)


def turned(p: Puzzle) -> list[Puzzle]:
    """A puzzle's robots and target in the families of its target's section at
    the other quadrants (a section is alike at every quadrant: its outer walls
    at the board's edges): the whole puzzle turned so that the section sits
    there, then the green section swapped back to the top-left with the section
    there, robots staying where they are (the board's name puts green there).
    Unproven: placements to try.  A green target's section has no other quadrant."""
    ids = list(parse_spec(p.board.spec))
    q = _quadrant(p.goal.cell)
    out = []
    for k in range(1, 4):
        if q == 0 or (q + k) % 4 == 0:
            continue
        order = ids[-k:] + ids[:-k]
        order[0], order[k] = order[k], order[0]
        try:
            board = real_board(",".join(order))
            robots = {c: _turned(cell, k) for c, cell in p.robots}
            out.append(Puzzle.create(board, robots, Goal(_turned(p.goal.cell, k), p.goal.colour, p.goal.symbol),
                                     p.rules))
        except InvalidInput:
            continue
    return out


def _turned(cell: tuple[int, int], turns: int) -> tuple[int, int]:
    """A cell of the board turned `turns` quarter turns clockwise."""
    x, y = cell
    for _ in range(turns):
        x, y = 15 - y, x
    return x, y


def grow(seeds: Iterable[Puzzle], *, time_budget: float = 10.0, seed: int | str = 0,
         claim: Callable[[str], bool] | None = None, until: float | None = None,
         part: tuple[int, int] = (0, 1), discover: Iterable[str] = ()) -> Iterator[Generated]:
    """Proven long puzzles on new pairs: the families of `seeds`, then those
    named in `discover`, board by board in an order drawn from `seed`.  A board
    of a seeded family is swept with the placements of its seeds in the order
    given (longest first, at most PLACEMENTS; see `_sweep`); every board not
    SEED_FROM moves long by then is lifted (see `lift`).  `part` (k, n) takes
    every n-th board from the k-th, so that n tasks share a family.
    `claim(key)` says whether a board's sweep or lift (or a position) is this
    caller's (a set of those done, by default; the workers share theirs in
    Redis), so none is done twice.  It stops at `until` (time.monotonic()), if
    given."""
    claim = claim or claimer(set())
    rng = random.Random(seed)
    todo = [(family, placements) for family, placements in families(seeds).items()]
    todo += [(family, []) for family in discover]
    for family, placements in todo:
        boards = family_boards(family)
        rng.shuffle(boards)
        for spec in boards[part[0]::part[1]]:
            if until is not None and time.monotonic() > until:
                return
            longest = 0
            if placements and claim(f"{family}|{spec}"):
                for g in _sweep(spec, placements, rng, claim, time_budget, until):
                    longest = max(longest, len(g.solution.moves))
                    yield g
            if longest < SEED_FROM and claim(f"lift|{family}|{spec}"):
                yield from lift(*family_pair(family, spec), rng, claim, LIFT_BUDGET, until)


def family_cell(family: str) -> tuple[int, int]:
    """The cell of a family's target: the same on every board of the family."""
    x, y = (int(v) for v in family.split(":")[1].split("-")[:2])
    return x, y


def family_pair(family: str, spec: str) -> tuple[Board, Goal]:
    """A board of a family and the family's target on it."""
    board = real_board(spec)
    chip = board.target_at(family_cell(family))
    assert chip is not None
    return board, Goal(chip.cell, chip.colour, chip.symbol)


def _longest(board: Board, goal: Goal, robots: int) -> int:
    """The longest position of the first `robots` robots of a lift (see `_lift_colours`)."""
    from solver.search.solve import exhaustive

    names = _lift_colours(goal.colour)[:robots]
    return exhaustive(board, names, goal, min_length=99, limit=1, threads=1).longest or 0


def _sweep(spec: str, placements: list[Puzzle], rng: random.Random, claim: Callable[[str], bool],
           time_budget: float, until: float | None) -> Iterator[Generated]:
    """One board of a family: placements tried until one is SEED_FROM moves or
    more; the walk from the longest found."""
    best = None
    for p in placements:
        v = placed(p, spec)
        if v is None or not claim(v.code()) or (until is not None and time.monotonic() > until):
            continue
        g = prove(v, time_budget if until is None else max(0.1, min(time_budget, until - time.monotonic())))
        if g is None:
            continue
        yield g
        if best is None or len(g.solution.moves) > len(best.solution.moves):
            best = g
        if len(g.solution.moves) >= SEED_FROM:
            break
    if best is not None:
        yield from _nearby(best, rng, claim, time_budget, until)


LIFT_TWO = 22        # a pair is lifted when its longest 2-robot position is this long (measured: every one of
                     # the 269 pairs found holding a 20-move puzzle has a 2-robot position of 22 moves or more;
                     # 1,474 pairs lifted with 20 or 21 gave none)
LIFT_SAMPLE = 2000   # 3-robot positions (on start cells) per length from SEED_FROM a fourth robot is added to
LIFT_ENOUGH = 12     # a lift stops once it found this many puzzles of exactly SEED_FROM moves (`fill` adds more)
LIFT_HOPE = 24       # or after this many proofs in a row found none
LIFT_BUDGET = 40.0   # or after this many seconds


def promise(family: str, boards: int = 4) -> int:
    """How long a family may be, cheaply: the longest 2-robot position over a
    few of its boards (milliseconds each; see `lift`)."""
    return max(_longest(*family_pair(family, spec), 2)
               for spec in random.Random(family).sample(family_boards(family), boards))


def _lift_colours(colour: str | None) -> list[str]:
    """The robots of a lift: the target's colour first (red for the vortex), the fourth added last."""
    first = colour or ROBOT_COLOURS[0]
    return [first] + [c for c in ROBOT_COLOURS[:4] if c != first]


def lift(board: Board, goal: Goal, rng: random.Random, claim: Callable[[str], bool], time_budget: float,
         until: float | None, enough: int = LIFT_ENOUGH) -> Iterator[Generated]:
    """Puzzles of SEED_FROM moves (and whatever else of MIN_LENGTH and more
    its proofs meet) on one pair, from its 3-robot analyses.  With fewer
    robots a target is further, so the 2-robot analysis (milliseconds) rules
    most pairs out at once.  On the others, a 4-robot position is about as
    long as the shortest of its three 3-robot parts (the target's robot and
    two of the three others): over 300 positions of each length from 16 to 24
    on three pairs analysed whole, that shortest part was exactly as long in
    71-95 of every 100 and one move off in most of the rest.  So every
    position of the target's robot and two others that is SEED_FROM moves or
    more with three robots, with the fourth on each free start cell, is looked
    up in the analyses (see `_screened`), and those whose shortest part is
    SEED_FROM moves, then SEED_FROM + 1, are proven by the solver under the
    ricochet rule in a random order until `enough` are exactly SEED_FROM
    (measured: about half are, on the pairs that have such positions), or
    LIFT_HOPE proofs in a row found none, or LIFT_BUDGET seconds passed."""
    deadline = time.monotonic() + time_budget if until is None else min(until, time.monotonic() + time_budget)
    if enough < 1 or time.monotonic() > deadline or _longest(board, goal, 2) < LIFT_TWO:
        return
    at_seed = barren = 0
    for robots in _screened(board, goal, rng, deadline):
        if time.monotonic() > deadline or barren >= LIFT_HOPE:
            return
        p = Puzzle.create(board, robots, goal, Rules(ricochet=Ricochet.TURN))
        bound = upper_bound(p)
        if (bound is not None and bound < SEED_FROM) or not claim(p.code()):
            continue
        barren += 1
        if g := prove(p, max(0.1, deadline - time.monotonic())):
            yield g
            if len(g.solution.moves) == SEED_FROM:
                at_seed, barren = at_seed + 1, 0
                if at_seed >= enough:
                    return


def liftable(family: str) -> list[tuple[int, str]]:
    """(longest 2-robot position, board) of each board of a family that a lift
    does not rule out at once (milliseconds a board)."""
    return [(n, spec) for spec in family_boards(family) if (n := _longest(*family_pair(family, spec), 2)) >= LIFT_TWO]


def lift_pair(family: str, spec: str, claim: Callable[[str], bool], seconds: float) -> Iterator[Generated]:
    """`lift` on one board of a family for at most `seconds` and LIFT_BUDGET,
    in an order drawn from the pair (a local lift's job and a worker's task);
    nothing when the pair was claimed already."""
    if not claim(f"screen|{family}|{spec}"):
        return iter(())
    until = time.monotonic() + max(0.0, min(seconds, LIFT_BUDGET))
    return lift(*family_pair(family, spec), random.Random(f"{family}|{spec}"), claim, LIFT_BUDGET, until)


def _screened(board: Board, goal: Goal, rng: random.Random,
              until: float | None = None) -> list[dict[str, tuple[int, int]]]:
    """A lift's candidates (see `lift`): 4-robot positions on start cells whose
    shortest 3-robot part is SEED_FROM moves, then those where it is one more,
    each group in an order drawn from `rng`; those found by `until`
    (time.monotonic()), if given.  One analysis serves the three parts when no
    diagonal barrier tells the helpers apart (about 1 s; 16 MiB each)."""
    from solver.search.solve import analyse

    a, *helpers = _lift_colours(goal.colour)
    parts = [(helpers[0], helpers[1]), (helpers[0], helpers[2]), (helpers[1], helpers[2])]
    tables = ([analyse(board, (a, *part), goal, threads=1) for part in parts] if board.diagonals
              else [analyse(board, (a, *parts[0]), goal, threads=1)] * 3)
    found: dict[int, list[tuple[int, ...]]] = {SEED_FROM: [], SEED_FROM + 1: []}
    try:
        free = [board.index(c) for c in board.start_cells()]
        _, rows = tables[0].sample(LIFT_SAMPLE, min_length=SEED_FROM, seed=rng.randrange(2**32))
        for n, three, _ in rows:
            if until is not None and time.monotonic() > until:
                break
            ia, ix, iy = (board.index(three[c]) for c in (a, helpers[0], helpers[1]))
            fourth = [z for z in free if z not in (ia, ix, iy)]
            # The parts with the fourth robot, in each table's robot order (a shared one takes it
            # in the second helper's place: no barrier tells them apart).
            with_x = tables[1].lengths_at([(ia, ix, z) for z in fourth])
            with_y = tables[2].lengths_at([(ia, iy, z) for z in fourth])
            for z, mx, my in zip(fourth, with_x, with_y):
                shortest = min(n, 99 if mx is None else mx, 99 if my is None else my)
                if shortest in found:
                    found[shortest].append((ia, ix, iy, z))
    finally:
        for table in {id(t): t for t in tables}.values():
            table.release()
    out = []
    for group in found.values():
        rng.shuffle(group)
        out += [{c: board.cell(i) for c, i in zip((a, *helpers), cells)} for cells in group]
    return out


WALK_STEPS = 10  # positions walked on a new pair of WALK_FROM moves or more
WALK_FROM = 17
WALK_ENOUGH = 2  # a walk stops once it found this many puzzles of SEED_FROM moves


def _nearby(g: Generated, rng: random.Random, claim: Callable[[str], bool], time_budget: float,
            until: float | None) -> Iterator[Generated]:
    """More puzzles on a new pair, aiming at SEED_FROM moves: the walk
    (solver/production/walk.py) from its puzzle, one robot at a time.  From a
    longer puzzle it walks down, moving on from positions of SEED_FROM moves
    and more but not longer (a robot moved shortens a puzzle more often than
    not); from a shorter one it climbs.  Everything of MIN_LENGTH moves and
    more it meets is kept.  (Measured: a 20-move seed's robots are 20 moves or
    more on one board in eight of its family, and rarely exactly 20, so this
    is how most pairs get their 20.)"""
    from solver.production.walk import walk

    n = len(g.solution.moves)
    if n < WALK_FROM:
        return
    deadline = time.monotonic() + time_budget
    if until is not None:
        deadline = min(deadline, until)
    down = n >= SEED_FROM
    at_seed = int(n == SEED_FROM)
    for p, answer in walk(g.puzzle, rng, steps=WALK_STEPS, floor=SEED_FROM if down else n, depth=30,
                          ceiling=n if down else 10_000, climb=not down, deadline=deadline):
        if answer is None or answer.status != "optimal" or len(answer.moves) < MIN_LENGTH or not claim(p.code()):
            continue
        yield Generated(p, answer, difficulty(p, answer, time_budget=0.2))
        at_seed += len(answer.moves) == SEED_FROM
        if at_seed >= WALK_ENOUGH:
            return


FILL_NEAR = 2    # a fill moves one robot at most this far (rows plus columns)
FILL_HOPE = 40   # proofs in a row without a new one after which a fill gives up on its pair
FILL_SECONDS = 120.0  # a pair's fill takes at most this long


def fill(known: list[Generated], rng: random.Random, claim: Callable[[str], bool], until: float,
         enough: int = PER_SEED) -> Iterator[Generated]:
    """More puzzles of exactly SEED_FROM moves on a pair that holds a few
    (`known`), until it holds `enough`: one robot of a known one (or of one
    found so far) moved to a free start cell at most FILL_NEAR away, in an
    order drawn from `rng`, kept when the solver proves it SEED_FROM moves.
    Every pack of that length takes a puzzle from every pair, so ten packs
    repeat a pair holding three about seven times; a long position's
    neighbours are long far more often than random positions (measured on ten pairs holding one to five: 48 new ones
    of 350 proofs, 36 of them with a solution of their own, where moving a
    robot anywhere gave 21 of 600).  Gives up when every such position is
    tried, or after FILL_HOPE proofs in a row that find nothing."""
    bases = [g for g in known if len(g.solution.moves) == SEED_FROM]
    if not bases:
        return
    free = sorted(bases[0].puzzle.board.start_cells())
    seen = {g.puzzle.code() for g in bases}
    frontier = [q for g in bases for q in _neighbours(g.puzzle, free)]
    count, barren = len(bases), 0
    while frontier and count < enough and barren < FILL_HOPE and time.monotonic() < until:
        i = rng.randrange(len(frontier))
        frontier[i], frontier[-1] = frontier[-1], frontier[i]
        q = frontier.pop()
        if q.code() in seen:
            continue
        seen.add(q.code())
        bound = upper_bound(q)
        if (bound is not None and bound < SEED_FROM) or not claim(q.code()):
            continue
        barren += 1
        g = prove(q, max(0.1, until - time.monotonic()), min_length=SEED_FROM)
        if g is not None and len(g.solution.moves) == SEED_FROM:
            frontier += _neighbours(q, free)
            count, barren = count + 1, 0
            yield g


def fill_pair(items: list[tuple[str, dict[str, object]]], claim: Callable[[str], bool],
              seconds: float, enough: int = PER_SEED) -> Iterator[Generated]:
    """More puzzles of SEED_FROM moves on one pair given as its known puzzles'
    codes and found JSON (what `thin` gives, as a task carries it), until it
    holds `enough`, for at most `seconds` and FILL_SECONDS, in an order drawn
    from the pair's first code:
    a `lift` first, for half the time at most (about half of its proofs are
    SEED_FROM moves on a pair it lifts well, against one in seven beside known
    ones), then `fill`."""
    known = [from_json(code, item) for code, item in items]
    seconds = max(0.0, min(seconds, FILL_SECONDS))
    until = time.monotonic() + seconds
    rng, first = random.Random(items[0][0]), known[0].puzzle
    wanted = enough - sum(len(g.solution.moves) == SEED_FROM for g in known)
    for g in lift(first.board, first.goal, rng, claim, seconds / 2, until, enough=wanted):
        known.append(g)
        yield g
    yield from fill(known, rng, claim, until, enough)


def _neighbours(p: Puzzle, free: list[tuple[int, int]]) -> list[Puzzle]:
    """The positions with one robot of `p` moved to a free start cell at most FILL_NEAR away."""
    robots = dict(p.robots)
    taken = set(robots.values())
    return [Puzzle.create(p.board, {**robots, colour: c}, p.goal, p.rules)
            for colour, (x, y) in sorted(robots.items())
            for c in free if c not in taken and 0 < abs(c[0] - x) + abs(c[1] - y) <= FILL_NEAR]


def thin(library: Library, enough: int = PER_SEED) -> list[list[Generated]]:
    """The pairs to `fill`: the 20-move puzzles (4 robots, ricochet rule) of
    each pair holding fewer than `enough`, in the bank and in the catalogue's
    pools that are not analyses (a pair a starter pool or an analysis holds
    has hundreds), fewest first."""
    from solver.production import bank

    rows: dict[tuple[str, tuple[int, int]], list[Callable[[], Generated]]] = defaultdict(list)
    full = set()
    for entry in library.entries():
        pool = library.load(entry.id)
        if pool is None or len(pool.colours) != 4 or pool.ricochet != Ricochet.TURN or not pool.board.spec:
            continue
        pair = (pool.board.spec, pool.goal.cell)
        if pool.built.get("source") != "catalogue":
            full.add(pair)
        else:
            rows[pair] += [partial(pool.generated, i) for i in pool.lengths().get(SEED_FROM, [])]
    for e in bank.entries():
        if e["length"] == SEED_FROM and e["robots"] == 4 and e["ricochet"] == Ricochet.TURN and e["edition"] == "2013":
            p = Puzzle.from_code(e["code"])
            rows[p.board.spec or "", p.goal.cell].append(partial(bank.generated, e))
    by_pair = {pair: [make() for make in makers] for pair, makers in rows.items()
               if pair not in full and len(makers) < enough}
    return sorted((items for items in by_pair.values() if items),
                  key=lambda items: (len(items), items[0].puzzle.code()))


def pools_of(found: Iterable[Generated], per_length: int = PER_LENGTH) -> list[Pool]:
    """Proven puzzles as pools (one per board, target, robots and rule), at most
    `per_length` per length (PER_SEED at SEED_FROM moves), in the pools' row format (the counts a pool build
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
        rows = []
        per: defaultdict[int, int] = defaultdict(int)
        seen = set()
        for g in sorted(items, key=lambda g: (len(g.solution.moves), g.puzzle.code())):
            n = len(g.solution.moves)
            if per[n] >= (max(per_length, PER_SEED) if n == SEED_FROM else per_length) or g.puzzle.code() in seen:
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
    """Codes of `count` long puzzles to grow from, of `min_length` moves and more,
    longest first, under the ricochet rule (packs' default): the bank's, then
    the pools' rows (PER_LENGTH of each length from each pool, the pools taking
    turns), at most PLACEMENTS per family, so that the seeds cover as many
    families as they can."""
    from solver.production import bank

    rows = [[e["code"] for e in sorted(bank.entries(), key=lambda e: (-e["length"], e["code"]))
             if e["length"] >= min_length and e["robots"] == 4 and e["edition"] == "2013"
             and e["ricochet"] == Ricochet.TURN]]
    for entry in library.entries():
        pool = library.load(entry.id)
        if (pool is None or len(pool.colours) != 4 or pool.ricochet != Ricochet.TURN
                or "-" not in (pool.board.spec or "")):
            continue
        longest = sorted((n for n in pool.lengths() if n >= min_length), reverse=True)
        rows.append([pool.puzzle(i).code() for n in longest for i in pool.lengths()[n][:PER_LENGTH]])
    codes: list[str] = []
    per_family: dict[str, int] = defaultdict(int)
    while rows and len(codes) < count:
        for r in rows:
            if r:
                code = r.pop(0)
                family = family_of(Puzzle.from_code(code))
                if per_family[family] < PLACEMENTS:
                    per_family[family] += 1
                    codes.append(code)
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
    kept = found["moves"]
    assert isinstance(kept, list)  # found_json's list of moves
    moves = [Move.from_json(m) for m in kept]
    return Generated(p, Solution("optimal", moves, len(moves), round_of(p), {"lone_bound": found["lone"]}),
                     cast(DifficultyReport, {}))  # none yet: the pool's to make


def catalogue_pool_id(g: Generated) -> str:
    p = g.puzzle
    return pool_id(p.board.spec, p.goal, len(p.robots), p.rules.ricochet)


# -- deepening: a long pair analysed whole ----------------------------------------------------

DEEP_SEED = "catalogue"  # the seed of the catalogue's analyses (their pool jobs' too: merge knows them by it)
DEEP_PER_LENGTH = 3000  # positions an analysis draws per length, from MIN_LENGTH on
# Kept per option: at SEED_FROM moves, at other lengths.
DEEP_KEEP = {Ricochet.TURN: (3000, 400), Ricochet.NONE: (150, 150)}


def long_pairs(pools: Iterable[Pool], min_length: int = SEED_FROM) -> list[tuple[str, str | None, int]]:
    """(board, chip name, longest) of each pair the catalogue holds a puzzle of
    `min_length` moves or more on (4 robots, ricochet rule), longest first,
    then by board: the pairs worth analysing whole."""
    out = []
    for pool in pools:
        longest = max(pool.lengths(), default=0)
        if len(pool.colours) == 4 and pool.ricochet == Ricochet.TURN and longest >= min_length and pool.board.spec:
            chip = f"{pool.goal.colour}-{pool.goal.symbol}" if pool.goal.colour else pool.goal.symbol
            out.append((pool.board.spec, chip, longest))
    return sorted(out, key=lambda t: (-t[2], t[0], t[1]))


def candidates(pools: Iterable[Pool]) -> list[tuple[str, str | None, int]]:
    """(board, chip name, longest known or 0) of the pairs likeliest to hold a
    SEED_FROM-move puzzle the sweeps missed, for a whole analysis: every board
    of each family that holds one on some board, where none is known yet and
    that is not analysed whole; longest known first, then the families with
    the most boards holding one, then by board.  (Measured: a board of family
    blue-B@3 on which the sweeps found nothing of 16 moves, and a 240 s climb
    nothing over 19, holds 1,376 positions of 20 moves by its analysis: a
    board's longest positions are needles the walks miss.)"""
    items = [p for p in pools if len(p.colours) == 4 and p.ricochet == Ricochet.TURN and p.board.spec]
    longest = {(p.board.spec, p.goal.cell): max(p.lengths(), default=0) for p in items}
    done = {(p.board.spec, p.goal.cell) for p in items if analysed(p)}
    rich: dict[str, int] = defaultdict(int)
    for p in items:
        if longest[p.board.spec, p.goal.cell] >= SEED_FROM:
            rich[_family(p.board.spec or "", p.goal.cell, p.goal.colour)] += 1
    out = []
    for family, count in rich.items():
        for spec in family_boards(family):
            goal = family_pair(family, spec)[1]
            known = longest.get((spec, goal.cell), 0)
            if known < SEED_FROM and (spec, goal.cell) not in done:
                out.append((-known, -count, spec, f"{goal.colour}-{goal.symbol}" if goal.colour else goal.symbol))
    return [(spec, chip, -known) for known, _, spec, chip in sorted(out)]


def analysed(pool: Pool) -> bool:
    return "analysis_seconds" in pool.built


def trimmed(pool: Pool) -> Pool:
    """What ships of a pair analysed whole: its puzzles of MIN_LENGTH moves and
    more, at most DEEP_KEEP of each length, drawn by the pool's id; `built.kept`
    says so."""
    at_seed, other = DEEP_KEEP[pool.ricochet]
    rng = random.Random(pool.id)
    keep = sorted(i for n, rows in pool.lengths().items() if n >= MIN_LENGTH
                  for i in rng.sample(rows, min(len(rows), at_seed if n == SEED_FROM else other)))
    built = dict(pool.built, kept=f"{at_seed} at {SEED_FROM} moves, {other} at other lengths"
                 if at_seed != other else f"{other} per length")
    return Pool(pool.board, pool.goal, pool.colours, pool.ricochet, [pool.rows[i] for i in keep],
                dict(pool.fair_positions), built)
