"""Pools: the analysis as the solver's bound, proofs, reports, storage, the starter set, packs' plans.

4-robot analyses need 4 GiB and minutes, so the tests analyse small boards or
3 robots; the shipped starter set (4 robots) is checked row by row against the
solver without the table."""

from __future__ import annotations

import random

import pytest

from solver.model.board import Board, real_board
from solver.model.geometry import ROBOT_COLOURS
from solver.model.moves import check, round_of
from solver.model.puzzle import Goal, Puzzle, Rules
from solver.production import pools
from solver.production.difficulty import difficulty
from solver.production.packs import plan, variety_key
from solver.search.reference import reference_solve
from solver.search.solve import analyse, solution_facts, solve

BARRIER_BOARD = "green-C,red-C,yellow-D,blue-B"


def _goal(board: Board, colour: str | None) -> Goal:
    t = next(t for t in board.targets if t.colour == colour)
    return Goal(t.cell, t.colour, t.symbol)


@pytest.mark.parametrize("spec,colour,robots", [
    (BARRIER_BOARD, "red", ("red", "green", "blue")),
    ("green-A,red-B,blue-A,yellow-B", None, ("red", "green", "yellow")),  # the vortex: any robot finishes
    ("green-D,blue-D,yellow-B,red-C", "yellow", ("red", "green", "yellow")),
    ("green-A,red-B,blue-A,yellow-B", "red", ("red", "green", "blue")),  # two interchangeable helpers
])
def test_the_analysis_as_bound_gives_the_same_optima_and_facts(spec, colour, robots):
    """Under both rules: the same optimal length as the search with the lone-robot
    bound, a solution that replays, and the same facts over every optimal solution."""
    board = real_board(spec)
    goal = _goal(board, colour)
    with analyse(board, robots, goal) as table:
        counts, drawn = table.sample(12, min_length=1, seed=3)
        assert counts and drawn
        for length, cells, path in drawn:
            assert check(Puzzle.create(board, cells, goal, Rules("none")), path).length == length
            for option in ("none", "turn"):
                p = Puzzle.create(board, cells, goal, Rules(option))
                plain, fast = solve(p), solve(p, exact=table)
                assert fast.length == plain.length, (p.code(), option)
                if option == "none":
                    assert fast.length == length
                verdict = check(p, fast.moves)
                assert verdict.legal and verdict.solved and verdict.length == fast.length
                assert solution_facts(p, plain.length, exact=table) == solution_facts(p, plain.length)


@pytest.mark.parametrize("spec,colour", [("green-A,red-B,blue-A,yellow-B", "red"), (BARRIER_BOARD, "blue")])
def test_an_analysis_that_stores_interchangeable_helpers_once_counts_every_position(spec, colour):
    """Helpers no barrier tells apart are stored once per set of cells; the
    counts per length are still those of every position (the bank's analysis
    stores every order)."""
    from solver.search.solve import exhaustive

    board = real_board(spec)
    goal = _goal(board, colour)
    robots = ("red", "green", "blue")
    with analyse(board, robots, goal) as table:
        assert table.counts == exhaustive(board, robots, goal, limit=0).counts
        rng = random.Random(2)
        free = board.start_cells()
        positions = [dict(zip(robots, rng.sample(free, 3))) for _ in range(200)]
        swapped = [{"red": p["red"], "green": p["blue"], "blue": p["green"]} for p in positions]
        assert table.lengths(positions) == exhaustive(board, robots, goal, limit=0, probes=positions).probes
        if colour == "red" and not board.has_barriers:
            assert table.lengths(swapped) == table.lengths(positions)


def _small_board(rng: random.Random) -> Board:
    """A small board with walls, a blocked cell and diagonal barriers (no openings:
    the analysis does not take them)."""
    w, h = rng.randint(4, 6), rng.randint(4, 6)
    cells = [(x, y) for y in range(h) for x in range(w)]
    rng.shuffle(cells)
    diagonals = [{"cell": list(c), "colour": rng.choice(ROBOT_COLOURS[:3]), "orientation": rng.choice("/\\")}
                 for c in cells[1:1 + rng.randint(0, 3)]]
    walls = [[rng.randrange(w), rng.randrange(h), rng.choice("NESW")] for _ in range(rng.randint(2, w * h // 3))]
    return Board.custom(w, h, walls, [list(cells[0])], [], diagonals)


def test_the_analysis_agrees_with_the_reference_search_on_small_boards():
    """Every plain-rule length the table gives, and every solve that follows it
    under either rule, equals the plain breadth-first search's."""
    rng = random.Random(11)
    checked = 0
    for _ in range(8):
        board = _small_board(rng)
        free = [c for c in (board.cell(i) for i in range(board.cells))
                if c not in board.blocked and board.diagonal_at(c) is None]
        colours = ROBOT_COLOURS[:rng.choice([2, 3, 4])]
        goal = Goal(rng.choice(free), rng.choice([*colours, None]))
        with analyse(board, colours, goal) as table:
            positions = [dict(zip(colours, rng.sample(free, len(colours)))) for _ in range(25)]
            for cells, plain_length in zip(positions, table.lengths(positions)):
                for option in ("none", "turn"):
                    p = Puzzle.create(board, cells, goal, Rules(option))
                    ref = reference_solve(p)
                    if option == "none":
                        assert plain_length == ref.length, (p.code(), plain_length, ref.length)
                    assert solve(p, exact=table).length == ref.length, (p.code(), option)
                    checked += 1
    assert checked == 8 * 25 * 2


@pytest.fixture(scope="module")
def built() -> list[pools.Pool]:
    board = real_board(BARRIER_BOARD)
    return pools.build(board, _goal(board, "red"), robots=3, per_length=40, min_length=4, seed="t")


def test_pool_positions_are_fair_proven_and_rated_as_without_the_table(built):
    assert [p.ricochet for p in built] == ["turn", "none"]
    for pool in built:
        assert pool.rows and min(pool.lengths()) >= 4
        starts = set(pool.board.start_cells())
        solutions = set()
        for i in range(len(pool.rows)):
            g = pool.generated(i)
            p = g.puzzle
            assert all(cell in starts for _, cell in p.robots)  # robots on cells without a chip
            assert not round_of(p).void and not g.solution.round.void
            verdict = check(p, g.solution.moves)
            assert verdict.legal and verdict.solved and verdict.length == g.solution.length
            assert solve(p).length == g.solution.length  # proven again without the table
            assert difficulty(p, g.solution, time_budget=None) == g.difficulty
            solutions.add(tuple(g.solution.moves))
        assert len(solutions) == len(pool.rows)  # one position per optimal solution


def test_pool_storage_round_trips_and_refuses_other_versions(built, tmp_path):
    source = pools.DirectorySource(tmp_path)
    for pool in built:
        source.write(pool)
    assert source.ids() == sorted(p.id for p in built)
    for pool in built:
        again = pools.Pool.loads(source.read(pool.id))
        assert again.rows == pool.rows and again.id == pool.id and again.fair_positions == pool.fair_positions
        assert pools.Entry.parse(pool.id).fits("random-2013", 3, pool.ricochet)
    import gzip
    import json

    doc = json.loads(gzip.decompress(built[0].dumps()))
    with pytest.raises(ValueError, match="version 2 is not known"):
        pools.Pool.loads(gzip.compress(json.dumps({**doc, "version": 2}).encode()))
    with pytest.raises(ValueError, match="not a pool"):
        pools.Pool.loads(b"nonsense")


def test_entries_fit_the_board_kinds():
    def fits(spec: str, board: str) -> bool:
        return pools.Entry.parse(pools.pool_id(spec, Goal((1, 2), "red"), 4, "turn")).fits(board, 4, "turn")

    assert fits("green-A,red-B,blue-A,yellow-B", "random-1999")
    assert fits("green-A,red-B,blue-A,yellow-B", "random-beginner")
    assert not fits("green-C,red-B,blue-A,yellow-B", "random-1999")
    assert fits("green-C,red-B,blue-A,yellow-B", "random-beginner")
    assert not fits(BARRIER_BOARD, "random-beginner") and fits(BARRIER_BOARD, "random-2013")
    assert fits(BARRIER_BOARD, BARRIER_BOARD) and not fits(BARRIER_BOARD, "green-A,red-B,blue-A,yellow-B")


# -- the starter set ---------------------------------------------------------------------


def _starter() -> pools.Library:
    return pools.Library([pools.packaged()])


def test_the_starter_set_covers_every_board_kind_and_both_rules():
    library = _starter()
    for kind in ("random-2013", "random-beginner", "random-1999"):
        for option in ("turn", "none"):
            assert library.fitting(kind, 4, option), (kind, option)
    longest = max(max(p.lengths()) for p in library.pools("random-2013", 4, "turn"))
    assert longest >= 24


@pytest.mark.slow
def test_starter_pool_rows_are_proven_without_the_table():
    """A sample of the starter set, a row from each of 24 pools drawn at random:
    the row replays, the solver without the table proves the same optimum, and
    (up to 16 moves, where counting every solution without the table is quick)
    the report is the same.  Plus the longest row of the whole set."""
    library = _starter()
    rng = random.Random(5)
    picks = []
    for entry in rng.sample(library.entries(), 24):
        pool = library.load(entry.id)
        short = [i for n, rows in pool.lengths().items() if n <= 16 for i in rows]
        picks.append((pool, rng.choice(short)))
    pools_held = [library.load(e.id) for e in library.entries()]
    longest = max(pools_held, key=lambda p: max(p.lengths()))
    picks.append((longest, longest.lengths()[max(longest.lengths())][0]))
    for pool, i in picks:
        g = pool.generated(i)
        verdict = check(g.puzzle, g.solution.moves)
        assert verdict.legal and verdict.solved and verdict.length == g.solution.length
        assert solve(g.puzzle, state_budget=3 << 30).length == g.solution.length, (pool.id, i)
        if g.solution.length <= 16:
            assert difficulty(g.puzzle, g.solution, time_budget=None) == g.difficulty, (pool.id, i)


def test_a_pack_plan_is_deterministic_varied_and_spread():
    library = _starter()
    first = plan(300, 12, 16, board="random-2013", robots=4, ricochet="turn", seed="p", library=library)
    again = plan(300, 12, 16, board="random-2013", robots=4, ricochet="turn", seed="p", library=library)
    assert [(p.index, p.length, p.pool and p.pool.id, p.row, p.entry) for p in first] == \
        [(p.index, p.length, p.pool and p.pool.id, p.row, p.entry) for p in again]
    made = [p.generated().to_json() for p in first if p.drawn]
    assert len(made) == 300  # the starter set holds plenty of 12-16 moves
    assert len({variety_key(item) for item in made}) == len(made)
    assert sorted({p.length for p in first}) == [12, 13, 14, 15, 16]
    pairs = {(item["board"], str(item["target"])) for item in made}
    pooled = {(p.pool.board.spec, p.pool.goal.cell) for p in first if p.pool is not None}
    holding = [p for p in library.pools("random-2013", 4, "turn") if set(p.lengths()) & set(range(12, 17))]
    assert len(pooled) == len(holding)  # every pool holding such lengths takes a turn
    assert len(pairs) > len(pooled)  # and the bank's 16-move puzzles too
    other = plan(300, 12, 16, board="random-2013", robots=4, ricochet="turn", seed="q", library=library)
    assert [p.row for p in other] != [p.row for p in first]


def test_generate_draws_from_pools_and_proves_what_it_draws():
    from solver.production.generate import generate

    library = _starter()
    g = generate(22, seed=4, pools=library)
    assert g.solution.stats["source"] == "pool" and g.solution.length == 22
    assert g == generate(22, seed=4, pools=library)
    five = generate(16, robots=5, seed=4, pools=library, time_budget=120)
    assert five.solution.length == 16 and len(five.puzzle.robots) == 5
    assert solve(five.puzzle).length == 16


def _the_same(a: pools.Pool, b: pools.Pool) -> None:
    assert (a.id, a.board.spec, a.goal, a.colours, a.ricochet) == (b.id, b.board.spec, b.goal, b.colours, b.ricochet)
    assert (a.fair_positions, a.built) == (b.fair_positions, b.built)
    assert list(a.rows) == list(b.rows) and a.lengths() == b.lengths()
    assert [a.generated(i).puzzle.code() for i in range(0, len(a.rows), 97)] == \
        [b.generated(i).puzzle.code() for i in range(0, len(b.rows), 97)]


def test_a_pool_kept_packed_on_disk_is_the_pool_its_file_gives(tmp_path, monkeypatch):
    """RICOCHET_POOL_CACHE: the first process to open a pool keeps it packed (and removes the
    pool's files of other names: made from another file, by other code); the next reads it
    (the pool's file is not parsed again) and gets the same pool; a packed file that is
    cut short or of another kind is parsed from the pool's file again."""
    source = pools.packaged()
    pool_id = source.ids()[0]
    data = source.read(pool_id)
    assert data is not None
    parsed = pools.Pool.loads(data)
    monkeypatch.setattr(pools, "_PARSED", pools.OrderedDict())
    monkeypatch.setattr(pools, "_CACHE", pools.PackedCache())
    pools.keep_packed_in(tmp_path / "cache")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"{pool_id}.0123-older-code.packed").write_bytes(b"stale")
    (tmp_path / "cache" / f"{pool_id}X.0123-another-pool.packed").write_bytes(b"another pool's")

    _the_same(pools.Library([source]).load(pool_id), parsed)  # parsed, and kept
    kept = [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(f"{pool_id}.")]
    assert len(kept) == 1 and kept[0].name.endswith(".packed") and kept[0].read_bytes() != b"stale"
    assert (tmp_path / "cache" / f"{pool_id}X.0123-another-pool.packed").exists()

    def not_parsed(_: bytes) -> pools.Pool:
        raise AssertionError("the pool's file was parsed again")

    pools._PARSED.clear()  # a new process
    with monkeypatch.context() as m:
        m.setattr(pools.Pool, "loads", not_parsed)
        _the_same(pools.Library([source]).load(pool_id), parsed)

    for spoilt in (kept[0].read_bytes()[:1000], b"not a packed pool"):
        kept[0].write_bytes(spoilt)
        pools._PARSED.clear()
        _the_same(pools.Library([source]).load(pool_id), parsed)
        assert kept[0].read_bytes() != spoilt  # written anew
