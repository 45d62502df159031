"""The catalogue of long puzzles: families and their sweeps, what it ships
proven again, and packs that spread over it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from solver.model.board import all_boards, parse_spec, real_board
from solver.model.moves import check
from solver.model.puzzle import Goal, Puzzle
from solver.production.catalogue import (
    LIFT_TWO,
    MIN_LENGTH,
    PER_SEED,
    SEED_FROM,
    _family,
    _lift_colours,
    _screened,
    _turned,
    analysed,
    candidates,
    catalogue,
    catalogue_pool_id,
    claimer,
    family_boards,
    family_of,
    family_pair,
    fill,
    found_json,
    from_json,
    grow,
    lift,
    liftable,
    long_pairs,
    placed,
    pools_of,
    promise,
    prove,
    thin,
    trimmed,
    turned,
)
from solver.production.pools import Library, Pool, packaged, pool_id, shipped, target_named
from solver.search.solve import analyse, solve
from tests.helpers import start_worker

BOARDS = set(all_boards("2013"))


@contextmanager
def _analysis_worker(url: str) -> Iterator[dict[str, str]]:
    """A Celery worker on the analysis queue of the deployment at `url` (yields
    the environment the commands run in), stopped cold at the end: what its last
    task would still prove is not the test's."""
    worker = start_worker(url, "analysis")
    try:
        yield {**os.environ, "REDIS_URL": url}
    finally:
        worker.send_signal(signal.SIGQUIT)
        worker.wait(timeout=30)


def _long_puzzles(count: int) -> list[Puzzle]:
    from solver.production.catalogue import seeds_for

    return [Puzzle.from_code(c) for c in seeds_for(Library(shipped()), count)]


def test_a_family_is_every_board_with_the_targets_section_at_its_quadrant():
    for p in _long_puzzles(30)[::3]:
        family = family_of(p)
        boards = family_boards(family)
        q = [i for i, sid in enumerate(parse_spec(p.board.spec)) if sid == family.split("@")[0]][0]
        assert len(boards) == len(set(boards)) == (384 if q == 0 else 128) and p.board.spec in boards
        assert set(boards) <= BOARDS
        for spec in boards[:20]:
            v = placed(p, spec)
            if v is not None:
                assert dict(v.robots) == dict(p.robots) and v.goal == p.goal and family_of(v) == family
                assert v.board.target_at(v.goal.cell).symbol == p.goal.symbol


def test_turning_a_puzzle_keeps_its_length_and_moves_its_family():
    library = Library([catalogue()])
    pools = [library.load(e.id) for e in library.entries()[::25] if e.ricochet == "turn"]
    assert pools
    for pool in pools[:3]:  # the shortest of a few pairs: the check solves each four times
        p = pool.puzzle(pool.lengths()[min(pool.lengths())][0])
        n = solve(p, time_budget=30).length
        ids = list(parse_spec(p.board.spec))
        for k in range(1, 4):  # the whole board turned: the same puzzle, so the same length
            board = real_board(",".join(ids[-k:] + ids[:-k]))
            robots = {c: _turned(cell, k) for c, cell in p.robots}
            goal = Goal(_turned(p.goal.cell, k), p.goal.colour, p.goal.symbol)
            assert board.target_at(goal.cell).symbol == p.goal.symbol
            assert solve(Puzzle.create(board, robots, goal, p.rules), time_budget=30).length == n
        for t in turned(p):
            assert t.board.spec in BOARDS and family_of(t) != family_of(p)
            assert family_of(t).split("@")[0] == family_of(p).split("@")[0]
            assert t.board.target_at(t.goal.cell).symbol == p.goal.symbol


@pytest.mark.slow
def test_a_sweep_keeps_only_proven_long_puzzles_and_claims_each_board_once():
    p = _long_puzzles(1)[0]
    tried: set[str] = set()
    found = list(grow([p], seed=1, claim=claimer(tried), until=time.monotonic() + 6))
    assert any("|" in key for key in tried)  # boards of the family, claimed
    for g in found:
        assert len(g.solution.moves) >= MIN_LENGTH and check(g.puzzle, g.solution.moves).solved
        assert family_of(g.puzzle) == family_of(p)
    again = list(grow([p], seed=1, claim=claimer(tried), until=time.monotonic() + 2))
    assert not {g.puzzle.code() for g in again} & {g.puzzle.code() for g in found}
    for pool in pools_of(found):
        loaded = Pool.loads(pool.dumps())
        for i in range(len(loaded.rows)):
            g = loaded.generated(i)
            assert check(g.puzzle, g.solution.moves).solved and g.difficulty["optimal_length"] == g.solution.length


def test_a_lift_screens_positions_whose_shortest_three_robot_part_is_seed_from_moves(monkeypatch):
    """On a board without diagonal barriers one 3-robot analysis serves the
    three parts (the helpers are alike): each analysed with its own robots
    agrees that every position screened has its shortest part SEED_FROM moves
    long, then SEED_FROM + 1, robots on distinct start cells."""
    spec = "green-B,yellow-A,blue-C,red-C"  # a lift found 20-move puzzles on its green square
    board, goal = real_board(spec), target_named(spec, "green-square")
    assert not board.diagonals
    monkeypatch.setattr("solver.production.catalogue.LIFT_SAMPLE", 200)  # 3-robot positions per length: enough here
    screened = _screened(board, goal, random.Random(1))
    a, *others = _lift_colours(goal.colour)
    tables = [analyse(board, (a, x, y), goal, threads=1) for x, y in ((others[0], others[1]),
                                                                       (others[0], others[2]), (others[1], others[2]))]
    try:
        starts = set(board.start_cells())
        shortest = []
        for i in sorted(random.Random(2).sample(range(len(screened)), 40)):
            robots = screened[i]
            assert len(robots) == 4 and len(set(robots.values())) == 4 and set(robots.values()) <= starts
            shortest.append(min(t.lengths([{c: robots[c] for c in t.colours}])[0] for t in tables))
        assert set(shortest) <= {SEED_FROM, SEED_FROM + 1} and shortest == sorted(shortest)
    finally:
        for t in tables:
            t.release()


def test_a_lift_finds_a_pair_the_sweeps_missed_long_and_rules_a_short_one_out_at_once():
    rng = random.Random(3)
    long_board = "green-D,yellow-B,red-D,blue-A"  # no sweep found a long puzzle on it
    # Up to the first puzzle of SEED_FROM moves (enough=1), in a budget a loaded machine meets too.
    found = list(lift(real_board(long_board), target_named(long_board, "red-hexagon"), rng, claimer(set()), 180.0,
                      None, enough=1))
    assert any(len(g.solution.moves) == SEED_FROM for g in found)
    for g in found:
        assert len(g.solution.moves) >= MIN_LENGTH and len(g.puzzle.robots) == 4
        assert g.puzzle.rules.ricochet == "turn" and check(g.puzzle, g.solution.moves).solved
        assert {cell for _, cell in g.puzzle.robots} <= set(g.puzzle.board.start_cells())
    short_board = "green-D,red-D,yellow-C,blue-A"
    started = time.monotonic()
    assert not list(lift(real_board(short_board), target_named(short_board, "red-square"), rng, claimer(set()),
                         30.0, None))
    assert time.monotonic() - started < 5  # the 2-robot analysis alone said so
    assert promise(family_of(found[0].puzzle)) >= LIFT_TWO > promise("green-D@0:1-3-red")


DENSE = "green-B,blue-B,red-B,yellow-D@8-10-yellow-4-turn"  # a starter pool holding hundreds at 20 moves


def test_a_fill_finds_more_proven_puzzles_of_exactly_seed_from_moves_beside_a_known_one():
    pool = Pool.loads(packaged().read(DENSE))
    known = [pool.generated(pool.lengths()[SEED_FROM][0])]
    found = list(fill(known, random.Random(1), claimer(set()), time.monotonic() + 90, enough=3))
    assert len(found) == 2 and len({g.puzzle.code() for g in found + known}) == 3
    for g in found:
        p = Puzzle.from_code(g.puzzle.code())
        assert (p.board.spec, p.goal, p.rules.ricochet, len(p.robots)) == (pool.board.spec, pool.goal, "turn", 4)
        assert {cell for _, cell in p.robots} <= set(p.board.start_cells()) and check(p, g.solution.moves).solved
        again = solve(p, time_budget=60)
        assert again.status == "optimal" and again.length == SEED_FROM
    # A pair whose positions nearby are all shorter is given up on, not searched for ever.
    started = time.monotonic()
    short = pool.generated(pool.lengths()[SEED_FROM - 4][0])
    assert not list(fill([short], random.Random(1), claimer(set()), time.monotonic() + 90))
    assert time.monotonic() - started < 5  # nothing at SEED_FROM to start from


def test_the_pairs_to_fill_hold_a_few_puzzles_of_seed_from_moves_and_no_analysis():
    pairs = thin(Library(shipped()))
    assert pairs, "the shipped catalogue holds pairs with few 20-move puzzles"
    starters = {(p.board.spec, p.goal.cell) for i in packaged().ids() if (p := Pool.loads(packaged().read(i)))}
    sizes = [len(items) for items in pairs]
    assert sizes == sorted(sizes) and sizes[0] > 0 and sizes[-1] < PER_SEED
    for items in pairs:
        assert len({(g.puzzle.board.spec, g.puzzle.goal.cell) for g in items}) == 1
        assert (items[0].puzzle.board.spec, items[0].puzzle.goal.cell) not in starters
        assert all(len(g.solution.moves) == SEED_FROM and len(g.puzzle.robots) == 4 for g in items)


LIFTED_FAMILY = "yellow-B@1:14-2-red"  # its longest board by 2 robots holds 20-move puzzles no pool holds


@pytest.mark.slow
def test_workers_fill_and_lift_pairs_from_the_queue_and_they_merge_into_files(redis_url, tmp_path):
    """`ricochet catalogue fill --queue` queues a task per pair holding few 20-move
    puzzles (here into an empty catalogue: the bank's pairs), `lift --queue` one
    per pair holding none; a worker proves more beside the first and new ones
    on the second, and `merge` writes them in."""
    from workers.stores import Stores

    base, _, _ = redis_url.rpartition("/")
    url = f"{base}/8"
    stores = Stores.from_url(url)
    stores.redis.flushdb()
    first = thin(Library([packaged()]))[0]  # the pair it fills first (fewest first): one of the bank's
    pair = catalogue_pool_id(first[0])
    n, spec = min(liftable(LIFTED_FAMILY), key=lambda t: (-t[0], t[1]))  # the one it lifts first
    board, goal = family_pair(LIFTED_FAMILY, spec)
    lifted = pool_id(spec, goal, 4, "turn")
    try:
        with _analysis_worker(url) as env:
            cli = [sys.executable, "-m", "service.cli", "catalogue"]
            # Each task stops at its first new puzzle (the fill at one more than the pair holds, the test
            # at the lift's first), so their budgets are only bounds: on a loaded machine half a minute
            # each found nothing once for the lift and once for the fill (a fill lifts for half its time).
            subprocess.run([*cli, "fill", "--queue", "--pairs", "1", "--enough", str(len(first) + 1), "--minutes",
                            "2", "--out", str(tmp_path)], env=env, check=True, capture_output=True)
            subprocess.run([*cli, "lift", "--queue", "--family", LIFTED_FAMILY, "--pairs", "1", "--minutes", "1",
                            "--out", str(tmp_path)], env=env, check=True, capture_output=True)
            deadline = time.monotonic() + 240
            while stores.queued("analysis") and time.monotonic() < deadline:
                time.sleep(1)
            while not (stores.catalogue.rows(pair) and stores.catalogue.rows(lifted)) and time.monotonic() < deadline:
                time.sleep(1)  # the fill's first and the lift's first found
            subprocess.run([*cli, "merge", "--out", str(tmp_path)], env=env, check=True, capture_output=True)
            assert (tmp_path / f"{pair}.pool.gz").exists(), f"the fill proved nothing on {pair} in its time"
            merged = Pool.loads((tmp_path / f"{pair}.pool.gz").read_bytes())
            known = {g.puzzle.code() for g in first}
            new = [g for i in merged.lengths()[SEED_FROM] if (g := merged.generated(i)).puzzle.code() not in known]
            assert new and len(merged.lengths()[SEED_FROM]) <= PER_SEED and stores.queued("analysis") == 0
            assert (tmp_path / f"{lifted}.pool.gz").exists(), f"the lift proved nothing on {lifted} in its time"
            grown = Pool.loads((tmp_path / f"{lifted}.pool.gz").read_bytes())
            assert n >= LIFT_TWO and grown.board.spec == spec and grown.goal == goal
            new += [grown.generated(i) for i in range(len(grown.rows))]
            for g in new:
                assert len(g.solution.moves) >= MIN_LENGTH and check(g.puzzle, g.solution.moves).solved
    finally:
        stores.redis.flushdb()


def test_a_sample_of_the_shipped_catalogue_is_proven_again():
    source = catalogue()
    ids = source.ids()
    assert ids, "the catalogue ships pools"
    rng = random.Random(5)
    starters = set(packaged().ids())
    rows = []
    for name in rng.sample(ids, min(12, len(ids))):
        assert name not in starters
        pool = Pool.loads(source.read(name))
        rows += [(pool, i) for i in range(len(pool.rows))]
    # Up to 22 moves the solver alone proves a puzzle in seconds; longer rows come from whole-board
    # analyses, exact by construction (tests/test_exhaustive.py checks the analysis against the
    # solver on small boards), where the solver alone may outgrow its default memory budget.
    provable = [(pool, i) for pool, i in rows if pool.rows[i][1] <= 22]
    for pool, i in rng.sample(provable, min(15, len(provable))):
        g = pool.generated(i)
        assert len(g.solution.moves) >= MIN_LENGTH and check(g.puzzle, g.solution.moves).solved
        again = solve(Puzzle.from_code(g.puzzle.code()), time_budget=60, known=g.solution.moves)
        assert again.status == "optimal" and again.length == len(g.solution.moves)


def test_packs_spread_over_the_catalogue():
    from solver.production.packs import plan_for

    request = {"count": 200, "min_length": 20, "max_length": 20, "seed": "spread", "board": "random-2013",
               "robots": 4, "ricochet": "turn"}
    shipped_plan = plan_for(request, Library(shipped()))
    starter_plan = plan_for(request, Library([packaged()]))
    pairs = {p.pool.id for p in shipped_plan if p.pool is not None}
    assert len(pairs) > len({p.pool.id for p in starter_plan if p.pool is not None})


@pytest.mark.slow
def test_workers_grow_the_catalogue_from_the_queue_and_it_merges_into_files(redis_url, tmp_path):
    """`ricochet catalogue build --queue` fans seeds out as tasks on the analysis
    queue; a worker sweeps family boards (each claimed once in Redis), the deployment's
    pools see them at once, and `ricochet catalogue merge` writes them to files."""
    import json

    from workers.stores import Stores

    base, _, _ = redis_url.rpartition("/")
    url = f"{base}/5"  # a database of its own
    stores = Stores.from_url(url)
    stores.redis.flushdb()
    try:
        with _analysis_worker(url) as env:
            build = [sys.executable, "-m", "service.cli", "catalogue", "build", "--queue", "--batches", "1",
                     "--seeds", "1", "--screen", "1", "--minutes", "0.1", "--out", str(tmp_path)]  # a first build
            subprocess.run(build, env=env, check=True, capture_output=True)
            deadline = time.monotonic() + 120
            while not stores.catalogue.pool_ids() and time.monotonic() < deadline:
                time.sleep(1)
            steady, last = 0, -1
            while steady < 3 and time.monotonic() < deadline:  # the queue drained and the last proofs kept
                time.sleep(2)
                now = stores.catalogue.tried()
                steady = steady + 1 if now == last and not stores.queued("analysis") else 0
                last = now
            status = json.loads(subprocess.run([sys.executable, "-m", "service.cli", "catalogue", "status"], env=env,
                                               check=True, capture_output=True, text=True).stdout)
            assert status["pairs"] >= 1 and status["tried"] >= status["puzzles"] >= status["pairs"]
            library = Library([stores.catalogue])
            for entry in library.entries():
                pool = library.load(entry.id)
                g = pool.generated(0)
                assert len(g.solution.moves) >= MIN_LENGTH and check(g.puzzle, g.solution.moves).solved
            subprocess.run([sys.executable, "-m", "service.cli", "catalogue", "merge", "--out", str(tmp_path)], env=env,
                           check=True, capture_output=True)
            written = sorted(p.name.removesuffix(".pool.gz") for p in tmp_path.glob("*.pool.gz"))
            assert set(written) == set(stores.catalogue.pool_ids()) - set(packaged().ids())
            tried = stores.catalogue.tried()
            assert not stores.catalogue.claim(next(iter(stores.redis.smembers("catalogue:tried"))).decode())
            assert stores.catalogue.tried() == tried  # a key is claimed once
    finally:
        stores.redis.flushdb()


def test_proving_agrees_with_the_reference_search_on_small_boards():
    from solver.search.reference import reference_solve
    from tests.helpers import random_custom_puzzle

    rng = random.Random(44)
    kept = 0
    for _ in range(80):
        p = random_custom_puzzle(rng)
        truth = reference_solve(p, max_states=100_000)
        if truth.status not in ("optimal", "unsolvable"):
            continue
        g = prove(p, 10.0, min_length=5)
        assert (g is not None) == (truth.status == "optimal" and truth.length >= 5), p.to_json()
        if g is not None:
            kept += 1
            assert len(g.solution.moves) == truth.length and check(p, g.solution.moves).solved
    assert kept >= 5


def test_a_puzzle_two_sources_hold_is_drawn_once(tmp_path):
    """The bank and a pool may hold the same position, each with its own optimal
    solution: a pack takes it once."""
    from solver.model.geometry import DIRECTIONS
    from solver.production import bank
    from solver.production.packs import plan
    from solver.production.pools import DirectorySource
    from solver.search.solve import every_solution

    for entry in bank.entries():
        if entry["robots"] != 4 or entry["length"] > 18:
            continue
        p = Puzzle.from_code(entry["code"])
        listed = every_solution(p, entry["length"], limit=50, time_budget=20)
        other = next((s for s in listed.listed if s != bank.solution_of(entry)), None) if listed else None
        if other is not None:
            break
    else:
        raise AssertionError("no bank puzzle with a second optimal solution")
    moves = [p.colours.index(m.robot) * 4 + DIRECTIONS.index(m.direction) for m in other]
    row = ([p.board.index(cell) for _, cell in p.robots], entry["length"], moves, 1, 0, None, None, None, 0)
    source = DirectorySource(tmp_path)
    source.write(Pool(p.board, p.goal, p.colours, p.rules.ricochet, [row]))
    planned = plan(50, entry["length"], entry["length"], board=p.board.spec, robots=4, ricochet=p.rules.ricochet,
                   seed=1, library=Library([source]))
    drawn = [x.generated().puzzle.code() for x in planned if x.drawn]
    assert drawn.count(p.code()) == 1


def test_merging_keeps_a_pair_analysed_whole(tmp_path):
    """A pair whose whole-board analysis is in the catalogue keeps its thousands of
    rows when what the workers grew is merged (grown pairs keep three per length)."""
    from dataclasses import replace

    from service.cli.catalogue import merge
    from solver.production.catalogue import PER_LENGTH
    from solver.production.pools import DirectorySource

    lib = Library([catalogue()])
    grown = [lib.load(e.id) for e in lib.entries()[:2]]
    rows = [r for r in grown[0].rows for _ in range(2)][: PER_LENGTH + 3]
    analysed = replace(grown[0], rows=rows, built={"analysis_seconds": 1.0}, _by_length=None)
    out = DirectorySource(tmp_path)
    merged = merge(out, [analysed, grown[1]], [])
    assert [p.id for p in merged] == [grown[1].id, analysed.id] and out.ids() == [grown[1].id]
    g = analysed.generated(0)
    merged = merge(out, merged, [(g.puzzle.code(), found_json(g))])  # a build merges again and again
    assert analysed in merged and out.ids() == [grown[1].id]
    short = trimmed(analysed)
    assert short.built["kept"] and len(short.rows) <= len(analysed.rows)


def test_a_pair_the_workers_analysed_whole_merges_into_the_files_trimmed(redis_url, tmp_path):
    """`ricochet catalogue deepen --queue` leaves its analyses in the deployment's
    pools; `ricochet catalogue merge` writes the long ones, trimmed, beside the rest."""
    from workers.stores import Stores

    base, _, _ = redis_url.rpartition("/")
    url = f"{base}/6"
    stores = Stores.from_url(url)
    stores.redis.flushdb()
    source = catalogue()
    deep = next(p for i in source.ids() if "analysis_seconds" in (p := Pool.loads(source.read(i))).built)
    try:
        stores.pools.write(deep.id, deep.dumps())
        subprocess.run([sys.executable, "-m", "service.cli", "catalogue", "merge", "--out", str(tmp_path)],
                       env={**os.environ, "REDIS_URL": url}, check=True, capture_output=True)
        written = Pool.loads((tmp_path / f"{deep.id}.pool.gz").read_bytes())
        assert written == trimmed(deep) and written.built["kept"]
    finally:
        stores.redis.flushdb()


def _family_of(board: str, chip: str) -> str:
    goal = target_named(board, chip)
    return _family(board, goal.cell, goal.colour)


def test_candidates_are_the_other_boards_of_long_families_likeliest_first():
    source = catalogue()
    pools = [Pool.loads(source.read(i)) for i in source.ids()]
    known = {(p.board.spec, p.goal.cell): max(p.lengths(), default=0) for p in pools
             if len(p.colours) == 4 and p.ricochet == "turn"}
    whole = {(p.board.spec, p.goal.cell) for p in pools if analysed(p)}
    long = [(board, chip) for board, chip, _ in long_pairs(pools)]
    rich = {_family_of(b, c) for b, c in long}
    rows = candidates(pools)
    assert len(rows) > 500
    for board, chip, longest in rows:
        goal = target_named(board, chip)
        assert _family_of(board, chip) in rich
        assert (board, goal.cell) not in whole and longest == known.get((board, goal.cell), 0) < SEED_FROM
    assert [n for *_, n in rows] == sorted((n for *_, n in rows), reverse=True)
    assert len({(b, c) for b, c, _ in rows}) == len(rows)
    every = {(spec, target_named(b, c).cell) for b, c in long
             for spec in family_boards(_family_of(b, c))}
    assert {(b, target_named(b, c).cell) for b, c, _ in rows} == every - whole - set(
        (b, target_named(b, c).cell) for b, c in long)


@pytest.mark.parametrize("new", [False, True], ids=["longest", "candidates"])
def test_deepen_queues_the_longest_pairs_as_pool_jobs(redis_url, new):
    import json

    from service.cli.catalogue import _out, _to_deepen
    from workers.stores import Stores

    base, _, _ = redis_url.rpartition("/")
    url = f"{base}/7"  # no worker listens here: the jobs stay queued
    stores = Stores.from_url(url)
    stores.redis.flushdb()
    try:
        out = subprocess.run([sys.executable, "-m", "service.cli", "catalogue", "deepen", "--queue", "--pairs", "2",
                              *(["--candidates"] if new else [])],
                             env={**os.environ, "REDIS_URL": url}, check=True, capture_output=True, text=True).stdout
        assert stores.queued("analysis") == 2
        _, have = _out(None)
        wanted = [(board, chip) for board, chip, _ in _to_deepen(have, 2, set(), new)]
        assert (set(wanted) & {(b, c) for b, c, _ in long_pairs(have)} == set()) == new
        queued = [json.loads(line) for line in out.splitlines()]
        assert [(q["board"], q["target"]) for q in queued] == wanted
        for q in queued:
            request = stores.jobs.get(q["job"])["request"]
            assert (request["board"], request["target"], request["per_length"], request["min_length"]) == \
                (q["board"], q["target"], 3000, MIN_LENGTH)
    finally:
        stores.redis.flushdb()


def test_a_local_build_goes_on_with_the_shares_it_did_not_finish(tmp_path):

    from service.cli.catalogue import GROWN, _families, _grow, _shares
    from solver.production.catalogue import seeds_for

    # A share done before the deadline is named (a build writes it down); one cut short is not.
    short = "green-D@0:1-3-red"  # its boards are ruled out by their 2-robot analysis
    assert _grow((f"{short} 0/8", [], (0, 8), time.time() + 120, 0, [short])) == (f"{short} 0/8", [])
    assert _grow(("blue-B@3:3-9-blue 0/1", [], (0, 1), time.time() + 1, 0, ["blue-B@3:3-9-blue"]))[0] is None
    # A build whose shares are all written down has nothing left to do.
    families = _families(seeds_for(Library([packaged()]), 1, SEED_FROM))
    names = [f"{family} {k}/{n}" for family, _, (k, n), _ in _shares(families, 0, 1)]
    (tmp_path / GROWN).write_text("\n".join(names) + "\n")
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "service.cli", "catalogue", "build", "--seeds", "1", "--screen", "0",
                    "--batches", "1", "--processes", "1", "--minutes", "5", "--out", str(tmp_path)],
                   check=True, capture_output=True)
    assert time.monotonic() - started < 120 and not list(tmp_path.glob("*.pool.gz"))


def test_a_local_fill_skips_the_pairs_whose_fill_finished_with_nothing_new(tmp_path):
    from service.cli.catalogue import FILLED, _fill, _fill_name, _known

    _known([])
    pairs = [[(g.puzzle.code(), found_json(g)) for g in items] for items in thin(Library([packaged()]), 2)]
    first = pairs[0]
    # A fill that finished before the deadline is named with what its pair held; one cut short is not.
    assert _fill((first, time.time() + 120, len(first))) == (_fill_name(first), [])
    assert _fill_name(first) == f"{catalogue_pool_id(from_json(*first[0]))}|{len(first)}"
    assert _fill((first, time.time() - 1, len(first) + 1))[0] is None
    # A fill whose pairs are all written down with what they hold has nothing left to do.
    (tmp_path / FILLED).write_text("\n".join(_fill_name(items) for items in pairs) + "\n")
    cli = [sys.executable, "-m", "service.cli", "catalogue", "fill", "--processes", "1", "--out", str(tmp_path)]
    started = time.monotonic()
    done = subprocess.run([*cli, "--enough", "2", "--minutes", "5"], check=True, capture_output=True, text=True)
    assert time.monotonic() - started < 120 and not list(tmp_path.glob("*.pool.gz"))
    assert f"filling 0 pairs ({len(pairs)} more hold fewer than 2" in done.stderr
    wrong = subprocess.run([*cli, "--enough", str(PER_SEED + 1)], capture_output=True, text=True)
    assert wrong.returncode != 0 and f"--enough must be from 1 to {PER_SEED}" in wrong.stderr


def test_a_queued_task_longer_than_the_visibility_timeout_is_refused(redis_url, monkeypatch, capsys):
    """A queued catalogue task is acknowledged when it ends: one longer than the broker's
    visibility timeout would be handed to a second worker while it runs.  Refused, with
    what to do, before anything is looked at or queued; a longer timeout admits it."""
    from service.cli import catalogue as command
    from service.cli import main
    from service.cli.common import InputError
    from workers.stores import Stores

    base, _, _ = redis_url.rpartition("/")
    url = f"{base}/9"
    stores = Stores.from_url(url)
    stores.redis.flushdb()
    monkeypatch.setenv("REDIS_URL", url)
    monkeypatch.setenv("RICOCHET_VISIBILITY_TIMEOUT", "1800")
    for kind in (["build", "--seeds", "1"], ["fill", "--pairs", "1"], ["lift", "--family", LIFTED_FAMILY]):
        assert main(["catalogue", *kind, "--queue", "--minutes", "30"]) == 2
        assert "RICOCHET_VISIBILITY_TIMEOUT (1800 s)" in capsys.readouterr().err
    assert not stores.queued("analysis")
    command._within_visibility(29)
    with pytest.raises(InputError, match="at most 29 minutes"):
        command._within_visibility(29.5)
    monkeypatch.setenv("RICOCHET_VISIBILITY_TIMEOUT", "2000")
    command._within_visibility(30)
