"""Pool builds on real workers: the analysis queue, a worker killed mid-build,
the beat noticing the silent heartbeat, and the API drawing on the new pools.

3 robots keep the analysis at 16 MB; the worker code is the same as for 4."""

from __future__ import annotations

import os
import signal
import time

import pytest

from solver.production import pools
from tests.helpers import start_worker
from workers.embedded import EmbeddedRedis
from workers.stores import Stores

BOARD, TARGET = "green-C,red-C,yellow-D,blue-B", "red-circle"


def _chip(board: str) -> str:
    from solver.model.board import real_board

    t = next(t for t in real_board(board).targets if t.colour == "red")
    return f"{t.colour}-{t.symbol}"


@pytest.mark.slow
def test_a_killed_analysis_worker_loses_nothing(tmp_path, monkeypatch):
    from workers import tasks  # noqa: F401 - the tasks, on every app the factory makes
    from workers.app import make_celery
    from workers.messages import GROW_POOLS, POOL_BUILD

    target = _chip(BOARD)
    with EmbeddedRedis(tmp_path / "redis", persist=False) as redis:
        monkeypatch.setenv("REDIS_URL", redis.url)
        stores = Stores.from_url(redis.url)
        celery = make_celery(redis.url, stores=stores)  # the beat's app, given this test's stores
        job = stores.jobs.create("pool", {"board": BOARD, "target": target, "robots": 3, "per_length": 4000})
        stores.pools.set_building(job["id"])
        worker = start_worker(redis.url, "analysis")
        try:
            celery.send(POOL_BUILD.of({"job_id": job["id"]}))
            deadline = time.monotonic() + 120
            while (stores.jobs.get(job["id"])["progress"] or 0) < 0.55:  # proving, past the analysis
                assert time.monotonic() < deadline, stores.jobs.get(job["id"])
                time.sleep(0.05)
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
            assert stores.jobs.get(job["id"])["state"] == "running" and not stores.pools.ids()
            # The beat notices the silent heartbeat (0.5 s here) and queues the build again.
            time.sleep(1)
            assert celery.tasks[GROW_POOLS.name](silence=0.5) == job["id"]
            worker = start_worker(redis.url, "analysis")
            deadline = time.monotonic() + 180
            while stores.jobs.get(job["id"])["state"] != "succeeded":
                assert time.monotonic() < deadline, stores.jobs.get(job["id"])
                time.sleep(0.2)
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
        done = stores.jobs.get(job["id"])
        assert done["restarts"] == 1 and sorted(done["result"]["pools"]) == stores.pools.ids()
        library = pools.Library([stores.pools])
        assert {e.ricochet for e in library.entries()} == {"turn", "none"}
        for entry in library.entries():
            pool = library.load(entry.id)
            assert pool.rows and len(pool.colours) == 3


def test_pools_stored_in_redis_are_seen_beside_the_starter_set(tmp_path):
    """What a worker stores in Redis, every process's library sees, loaded whole."""
    from solver.model.board import real_board
    from solver.model.puzzle import Goal

    board = real_board(BOARD)
    t = next(t for t in board.targets if t.colour == "red")
    built = pools.build(board, Goal(t.cell, t.colour, t.symbol), robots=3, per_length=30, min_length=8, seed="x")
    with EmbeddedRedis(tmp_path / "redis", persist=False) as redis:
        store = Stores.from_url(redis.url).pools
        for pool in built:
            store.write(pool.id, pool.dumps())
        library = pools.Library([pools.packaged(), store])
        assert {p.id for p in built} <= {e.id for e in library.entries()}
        assert library.load(built[0].id).rows == built[0].rows
        assert set(pools.packaged().ids()) <= {e.id for e in library.entries()}
