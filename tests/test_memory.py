"""Memory bounded by bytes, not by count: the per-process caches (compiled
boards, PNG pictures) stay within their budgets whatever clients send, here a
flood of distinct 32x32 custom boards, each solved once (a board's tables grow
with its searches, so a cache counting boards grew to gigabytes)."""

from __future__ import annotations

from pathlib import Path

from solver import _core
from solver.model.puzzle import Puzzle
from solver.search.solve import compiled, solve


def _custom(i: int) -> Puzzle:
    walls = [[i % 32, (i // 32) % 32, "E"], [(i * 7) % 32, 5, "S"], [3, (i * 3) % 32, "E"]]
    return Puzzle.from_json({
        "board": {"width": 32, "height": 32, "walls": walls, "blocked": [],
                  "targets": [{"cell": [20, 20], "colour": "red", "symbol": "circle"}], "diagonals": []},
        "robots": {"red": [1, 1], "green": [30, 2], "blue": [2, 30], "yellow": [29, 28]},
        "target": {"colour": "red", "symbol": "circle"}})


def test_compiled_boards_stay_within_their_byte_budget(monkeypatch):
    budget = 4 << 20
    monkeypatch.setattr(compiled, "budget", budget)
    largest = 0
    for i in range(40):
        p = _custom(i)
        solve(p, time_budget=0.05)
        largest = max(largest, _core.layout_bytes(compiled(p.board)))
    assert largest > 256 << 10  # a 32x32 board with one target's tables: the growth the budget must count
    assert compiled.bytes <= budget
    held = sum(_core.layout_bytes(layout) for layout, _ in compiled._boards.values())
    assert held <= budget + largest  # counted late by at most the board searched last
    assert 1 < len(compiled) < 40


def test_pictures_stay_within_their_byte_budget():
    from service.pictures import Pictures
    from solver.formats.svg import puzzle_svg

    pictures = Pictures(300 << 10)
    sizes = []
    for i in range(12):
        p = Puzzle.from_json({"board": "green-A,yellow-B,red-B,blue-B", "target": {"colour": "red", "symbol": "circle"},
                              "robots": {"red": [i, 0], "green": [0, 15], "blue": [15, 15], "yellow": [15, 0]}})
        data = pictures(puzzle_svg(p))
        assert data.startswith(b"\x89PNG")
        sizes.append(len(data))
    assert pictures.bytes <= 300 << 10 and sum(sizes) > 300 << 10


def test_the_budgets_are_settings(monkeypatch):
    from service.app import create_app
    from service.pictures import png
    from workers.settings import Settings

    monkeypatch.setattr(compiled, "budget", compiled.budget)
    monkeypatch.setattr(png, "budget", png.budget)
    settings = Settings.from_env({"RICOCHET_BOARD_CACHE_MB": "5", "RICOCHET_PICTURE_CACHE_MB": "3"})
    create_app({"TESTING": True}, settings)
    assert compiled.budget == 5 << 20 and png.budget == 3 << 20


def test_packed_pool_rows_read_as_the_rows_they_hold():
    """Loaded pools keep their rows packed (solver.production.pools.PackedRows: a
    forked web process reads them without copying shared pages); they read back
    as the tuples they were, by index, slice and in order."""
    from solver.model.puzzle import Goal, Ricochet
    from solver.production.pools import PackedRows, Pool, real_board

    rows = [((i, 2 * i, 3, 4), 8 + i % 3, tuple(range(i % 5)), 1, 0, 2, None if i % 2 else 5, False, 7)
            for i in range(300)]
    packed = PackedRows(rows)
    assert len(packed) == 300 and list(packed) == rows and packed == rows and rows == packed
    assert packed[-1] == rows[-1] and packed[10:13] == rows[10:13] and packed[5] is not packed[5]
    pool = Pool(real_board("green-A,yellow-B,red-B,blue-B"), Goal((5, 5), "red", "circle"),
                ("red", "green", "blue", "yellow"), Ricochet.TURN, rows)
    again = Pool.loads(pool.dumps())
    assert isinstance(again.rows, PackedRows) and again.rows == rows
    assert {n: list(ix) for n, ix in again.lengths().items()} == {n: list(ix) for n, ix in pool.lengths().items()}


def test_the_budget_table_in_the_docs_is_the_one_the_soak_judges_by():
    """docs/operations.md's "The default deployment's budget" shows workers/memory.py's
    BUDGETS_MIB (bench/soak.py --check and tests/test_bench.py judge by it)."""
    from workers.memory import BUDGETS_MIB, STACK_BUDGET_MIB

    text = (Path(__file__).resolve().parents[1] / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text[text.index("### The default deployment's budget"):]
    shown = {}
    for line in section.splitlines()[1:]:
        if line.startswith("### "):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) >= 5 and cells[4].replace("*", "").endswith("MiB"):
            budget = int(cells[4].replace("*", "").removesuffix("MiB").replace(",", ""))
            shown[cells[0].replace("*", "").split(" (")[0]] = budget
    assert shown == {**BUDGETS_MIB, "stack": STACK_BUDGET_MIB}


def _private_dirty_kib() -> int:
    for line in Path("/proc/self/smaps_rollup").read_text(encoding="ascii").splitlines():
        if line.startswith("Private_Dirty:"):
            return int(line.split()[1])
    raise AssertionError("no Private_Dirty in smaps_rollup")


def test_a_forked_process_reads_the_pools_without_copying_them():
    """gunicorn's master loads the pools before it forks its web processes; reading
    rows at random there (random puzzles, packs, the next puzzle, exports) must not
    make the pages they share each process's own.  As lists of tuples, 100,000 random
    reads took 125 MiB of a web process's own (reference counts written into them)."""
    import gc
    import os
    import random

    from solver.production.pools import Library, shipped

    library = Library(shipped())
    held = [pool for pool in (library.load(e.id) for e in library.entries()) if pool.rows]
    rows = sum(len(pool.rows) for pool in held)
    assert rows > 100_000
    gc.collect()
    gc.freeze()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            before, rng = _private_dirty_kib(), random.Random(5)
            for _ in range(100_000):
                pool = rng.choice(held)
                lengths = pool.lengths()
                i = rng.choice(lengths[rng.choice(list(lengths))])
                pool.rows[i][0]
                pool.moves(i)
            os.write(write, str(_private_dirty_kib() - before).encode())
        finally:
            os._exit(0)
    os.close(write)
    grown_kib = int(os.read(read, 64) or b"-1")
    os.waitpid(child, 0)
    gc.unfreeze()
    assert 0 <= grown_kib < 24 << 10, f"{grown_kib} KiB of the pools' pages copied by reading {rows} rows' pools"


def test_made_up_methods_add_no_metric_series(redis_url):
    """The requests counter's method label is one of HTTP's, or "other": a client
    sending made-up methods cannot grow every web process's metrics."""
    from service.app import create_app
    from service.metrics import REQUESTS

    client = create_app({"REDIS_URL": redis_url}).test_client()

    def methods() -> set[str]:
        return {s.labels["method"] for metric in REQUESTS.collect() for s in metric.samples}

    for k in range(20):
        assert client.open("/v1/daily", method=f"MADEUP{k}").status_code == 405
    assert not {m for m in methods() if m.startswith("MADEUP")} and "other" in methods()
