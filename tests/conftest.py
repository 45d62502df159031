"""Shared fixtures: the sample puzzles (the project's own, tests/fixtures/, and
the outside ones in ../shared when that folder is beside the checkout), the
quadrants' test puzzles, a real Redis, a real Celery worker, Chromium."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

# No timed assertions in tests: hypothesis's default deadline (200 ms an example) failed a round trip of
# a puzzle's code once on a loaded 2-core machine (274 ms).  Speed is the benches' business.
settings.register_profile("suite", deadline=None)
# The suite's processes (and the servers, workers and commands they start) keep the pools they parse in
# the checkout's build/, not in the user's ~/.cache: the first to open a pool writes it, the others read it.
os.environ.setdefault("RICOCHET_POOL_CACHE", str(Path(__file__).resolve().parents[1] / "build" / "pool-cache"))
settings.load_profile("suite")

# The daily's tests take "today" where the app takes it per request, in this process and in the servers
# and workers they start: a run across 00:00 UTC would compare two days.  A run that starts this close
# to midnight waits for the new day first (about one run in seventy: the suite takes 10-16 minutes).
MIDNIGHT_MARGIN = 20 * 60  # seconds


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests (marked slow, or touring a page in Chromium) dealt out first to
    each test process: pytest-xdist's worksteal hands process k the k-th of equal
    contiguous parts of this order and the others steal from a part's end, so each part
    starts with its share of the long ones (longest first, as a scheduler evens out a
    makespan).  In file order a 2-minute test met late kept one process busy after the
    others had ended."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    long = [item for item in items if item.get_closest_marker("slow") or "browser" in item.fixturenames]
    short = [item for item in items if not (item.get_closest_marker("slow") or "browser" in item.fixturenames)]
    order, left = [], len(items)
    for k in range(workers):
        size = left // (workers - k)  # as worksteal's first dealing sizes the k-th part
        left -= size
        mine = long[k::workers]
        take = max(0, size - len(mine))
        order += mine + short[:take]
        short = short[take:]
    items[:] = order + short


def pytest_configure(config: pytest.Config) -> None:
    import datetime as dt
    import sys
    import time

    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # the controller waited before it started the test processes
    now = dt.datetime.now(dt.UTC)
    left = (dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC) - now).total_seconds()
    if left < MIDNIGHT_MARGIN:
        print(f"tests: {left:.0f} s to 00:00 UTC, and the daily's tests must not run across it: waiting for the "
              "new day", file=sys.stderr, flush=True)
        time.sleep(left + 2)


ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
# The outside documents and samples: optional.  The checkout stands alone
# without them; when they are there, their samples run too (`samples`).
SHARED = Path(os.environ.get("RICOCHET_SHARED", ROOT.parent / "shared"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def own_samples() -> list[dict]:
    """tests/fixtures/puzzles.jsonl: puzzles with their optimal length, one optimal
    solution, the finisher and whether the round is void (see tests/fixtures/README.md)."""
    return load_jsonl(FIXTURES / "puzzles.jsonl")


def outside_samples() -> list[dict] | None:
    """Every row of ../shared/puzzles/*.jsonl, or None when ../shared is not there."""
    folder = SHARED / "puzzles"
    if not folder.is_dir():
        return None
    return [row for path in sorted(folder.glob("*.jsonl")) for row in load_jsonl(path)]


def outside(path: str) -> Path:
    """A file of ../shared; the test is skipped when the folder is not beside the checkout."""
    found = SHARED / path
    if not found.exists():
        pytest.skip(f"{SHARED} is not beside this checkout (it is optional)")
    return found


def puzzle_key(row: dict) -> str:
    return json.dumps({k: row.get(k) for k in ("board", "robots", "target", "rules")}, sort_keys=True)


@pytest.fixture(scope="session")
def sample_puzzles() -> list[dict]:
    """The project's own sample (tests that need a few rows of known optimum)."""
    return own_samples()


@pytest.fixture(scope="session", params=["own", "outside"])
def samples(request) -> list[dict]:
    """Every sample, in two sets: the project's own, then the outside rows it
    does not hold (skipped when ../shared is not there), so a test over them
    runs each puzzle once."""
    own = own_samples()
    if request.param == "own":
        return own
    rows = outside_samples()
    if rows is None:
        pytest.skip(f"{SHARED} is not beside this checkout: the outside samples are optional")
    held = {puzzle_key(r) for r in own}
    return [r for r in rows if puzzle_key(r) not in held]


@pytest.fixture(scope="session")
def quadrant_test_puzzles() -> list[dict]:
    """The published puzzles of the packaged quadrants file (24 and 25 moves, Potassco's 16)."""
    from solver.model.board import quadrant_data

    return quadrant_data()["test_puzzles"]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A real, private redis-server for this test session (stopped at the end)."""
    from workers.embedded import EmbeddedRedis

    with EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False) as server:
        yield server.url


def start_webhook_worker(url: str, log: Path | None = None, **env: str) -> subprocess.Popen:
    """The webhooks queue's worker, as `ricochet serve` starts it (threads), in a session of its own."""
    from service.cli.worker import webhook_command

    out = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        return subprocess.Popen(webhook_command(f"webhooks-{secrets.token_hex(4)}@%h"),
                                env={**os.environ, "REDIS_URL": url, **env}, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    finally:
        if log is not None:
            out.close()


@pytest.fixture(scope="session")
def celery_worker(redis_url):
    """A real Celery worker process on that Redis (stopped at the end), and one for the webhooks queue."""
    import time

    from service.cli.serve import stop
    from tests.helpers import start_worker
    from workers.app import make_celery

    proc = start_worker(redis_url, "ricochet,packs")
    hooks = start_webhook_worker(redis_url)  # webhook deliveries: a worker of their own, as deployments have
    app = make_celery(redis_url)
    deadline = time.monotonic() + 60
    while len(app.control.ping(timeout=0.5)) < 2:
        if proc.poll() is not None or hooks.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            hooks.kill()
            raise RuntimeError("the Celery workers did not start")
    yield proc
    stop(hooks)
    stop(proc)


@pytest.fixture(autouse=True)
def _no_search_ceiling_left_behind():
    """A server's process-wide search ceiling (workers.memory.cap_searches, set
    as its processes start) is the server's: no test leaves one behind."""
    from solver.search.solve import ceiling

    ceiling.state_bytes = ceiling.NONE
    yield
    ceiling.state_bytes = ceiling.NONE


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium through Playwright, headless (the pages' tests)."""
    if CHROMIUM is None:
        pytest.skip("needs Chromium: `make browser` installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()
