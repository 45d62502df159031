"""Shared fixtures: the public puzzle samples and the quadrant test puzzles from ../shared."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("RICOCHET_SHARED", ROOT.parent / "shared"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="session")
def sample_puzzles() -> list[dict]:
    return load_jsonl(SHARED / "puzzles" / "sample_public.jsonl")


@pytest.fixture(scope="session")
def quadrant_test_puzzles() -> list[dict]:
    with open(SHARED / "boards" / "quadrants.json", encoding="utf-8") as f:
        return json.load(f)["test_puzzles"]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory):
    """A real, private redis-server for this test session (stopped at the end)."""
    from workers.embedded import EmbeddedRedis

    with EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False) as server:
        yield server.url


@pytest.fixture(scope="session")
def celery_worker(redis_url):
    """A real Celery worker process on that Redis (stopped at the end)."""
    import subprocess
    import time

    from tests.helpers import start_worker
    from workers.app import make_celery

    proc = start_worker(redis_url, "ricochet,packs")
    app = make_celery(redis_url)
    deadline = time.monotonic() + 60
    while not app.control.ping(timeout=0.5):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("the Celery worker did not start")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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
