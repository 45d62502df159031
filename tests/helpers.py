"""Small builders for hand-made boards and puzzles in tests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from werkzeug.serving import make_server

from solver.model.board import Board
from solver.model.moves import IllegalMove, State
from solver.model.puzzle import Goal, Move, Puzzle, Rules


def start_worker(url: str, queues: str, log: Path | None = None, **env: str) -> subprocess.Popen:
    """A real Celery worker process (concurrency 1) on `queues` of the Redis at
    `url`, with `env` added to its environment, in a session of its own (a
    test may kill its whole group); what it prints goes to `log`, if given."""
    out = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        return subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel",
                                 "warning", "--concurrency", "1", "--without-gossip", "--without-mingle",
                                 "--queues", queues], env={**os.environ, "REDIS_URL": url, **env},
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        if log is not None:
            out.close()  # the worker holds its own copy


def custom(width: int = 6, height: int = 6, **parts: Any) -> Board:
    return Board.custom(width, height, **parts)


def puzzle(board: Board, robots: dict[str, tuple[int, int]], target: tuple[int, int],
           colour: str | None = "red", ricochet: str = "turn", sightline: bool = False) -> Puzzle:
    return Puzzle.create(board, robots, Goal(target, colour), Rules(ricochet, vortex_sightline=sightline))


def moves(text: str) -> list[Move]:
    """'red E, blue N' -> moves."""
    return [Move(*m.split()) for m in text.split(",") if m.strip()]


def after(p: Puzzle, text: str) -> dict[str, tuple[int, int]]:
    """Robot cells after playing `text` from the start."""
    state = State.start(p)
    for m in moves(text):
        state = state.apply(m)
    return state.robots()


def illegal(p: Puzzle, text: str) -> str:
    state = State.start(p)
    ms = moves(text)
    for m in ms[:-1]:
        state = state.apply(m)
    try:
        state.apply(ms[-1])
    except IllegalMove as e:
        return e.reason
    raise AssertionError(f"{ms[-1]} was allowed")


# -- random puzzles for differential tests ------------------------------------------------

import random  # noqa: E402

from solver.model.board import all_boards, real_board  # noqa: E402
from solver.model.geometry import ROBOT_COLOURS  # noqa: E402

_SPECS = {e: list(all_boards(e)) for e in ("1999", "2013")}
_BARRIER_SPECS = [s for s in _SPECS["2013"] if "D" in s]


def random_rules(rng: random.Random, odds: float) -> Rules:
    """Rules drawn at random, every option of Rules (so the differential tests
    cross-check a new one at once): an enum's values alike, a bool true at `odds`."""
    return Rules(**{name: rng.choice(list(kind)) if kind is not bool else rng.random() < odds
                    for name, kind in Rules.options().items()})


def random_real_puzzle(rng: random.Random, robots: int = 4, edition: str = "2013",
                       barriers: bool | None = None) -> Puzzle:
    specs = _BARRIER_SPECS if barriers else _SPECS[edition]
    board = real_board(rng.choice(specs))
    free = [(x, y) for y in range(16) for x in range(16)
            if (x, y) not in board.blocked and board.diagonal_at((x, y)) is None]
    colours = list(ROBOT_COLOURS[:robots])
    cells = rng.sample(free, robots)
    t = rng.choice(board.targets)
    return Puzzle.create(board, dict(zip(colours, cells)), Goal(t.cell, t.colour), random_rules(rng, 0.25))


def random_custom_puzzle(rng: random.Random) -> Puzzle:
    """A small board with every feature: walls, blocked cells, barriers, openings, a vortex."""
    w, h = rng.randint(4, 8), rng.randint(4, 8)
    cells = [(x, y) for y in range(h) for x in range(w)]
    rng.shuffle(cells)
    blocked = cells[:rng.randint(0, 2)]
    rest = cells[len(blocked):]
    diagonals = [{"cell": list(c), "colour": rng.choice(ROBOT_COLOURS), "orientation": rng.choice("/\\")}
                 for c in rest[:rng.choice([0, 0, 1, 2, 3, 4])]]
    rest = rest[len(diagonals):]
    walls = [[rng.randrange(w), rng.randrange(h), rng.choice("NESW")] for _ in range(rng.randint(0, w * h // 3))]
    openings = []
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        side = rng.choice("NESW")
        if side in "NS":
            openings.append([rng.randrange(w), 0 if side == "N" else h - 1, side])
        else:
            openings.append([0 if side == "W" else w - 1, rng.randrange(h), side])
    vortex = rest[0]
    board = Board.custom(w, h, walls, [list(c) for c in blocked],
                         [{"cell": list(vortex), "colour": None, "symbol": "vortex"}], diagonals, openings)
    n = rng.randint(1, min(5, len(rest) - 1))
    colours = rng.sample(ROBOT_COLOURS, n)
    robots = dict(zip(colours, rng.sample(rest[1:], n) if rng.random() < 0.8 else rng.sample(rest, n)))
    if rng.random() < 0.4:
        goal = Goal(vortex, None)
    else:
        goal = Goal(rng.choice(rest), rng.choice(colours + [None]))
    return Puzzle.create(board, robots, goal, random_rules(rng, 0.3))


def wait_for_job(client: Any, location: str, timeout: float = 180) -> dict:
    """Poll a job (GET location) until it succeeded, failed or was cancelled, or the timeout passed."""
    deadline = time.monotonic() + timeout
    while True:
        job = client.get(location).json
        if job["state"] in ("succeeded", "failed", "cancelled") or time.monotonic() > deadline:
            return job
        time.sleep(0.1)


def made_pack(client: Any, asked: dict, timeout: float = 180) -> tuple[dict, dict]:
    """A pack asked for (POST /v1/packs), waited for until it succeeded, and read: its job and the pack."""
    job = wait_for_job(client, client.post("/v1/packs", json=asked).headers["Location"], timeout)
    assert job["state"] == "succeeded", job
    return job, client.get(f"/v1/packs/{job['pack_id']}").json


def unpooled_board() -> str:
    """A real board no shipped pool is of: packs on it are searched for, not drawn."""
    from solver.production.pools import Entry, packaged

    held = {Entry.parse(i).board for i in packaged().ids()}
    return next(s for s in all_boards("1999") if s not in held)


def pack_request(body: dict) -> dict:
    """A pack request as POST /v1/packs loads it (defaults filled in): what the job records."""
    from workers.schemas import PackRequest, load

    return load(PackRequest(), body)


def issued_key(redis_url: str, quotas: dict | None = None) -> dict:
    """An X-API-Key header with a key issued in this Redis (a fresh name each call)."""
    import uuid

    from workers.stores import Stores

    key, _ = Stores.from_url(redis_url).keys.create(f"test-{uuid.uuid4().hex[:12]}", quotas)
    return {"X-API-Key": key}


@contextmanager
def served(app: Any) -> Iterator[str]:
    """`app` served over HTTP on a free port (a thread per request): its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def get_json(url: str, timeout: float = 120, body: Any = None) -> Any:
    """GET a URL of a served app (POST `body` as JSON when given): its JSON."""
    import json
    import urllib.request

    request = urllib.request.Request(url) if body is None else urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as r:
        return json.load(r)


def serve_ready(serve: Any, url: str, said: Callable[[], str], seconds: float = 90) -> None:
    """Wait until a `ricochet serve` started as `serve` (a Popen) answers 200 at
    `url`; it exiting first, or `seconds` passing, fails with what it `said`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        assert serve.poll() is None, said()
        assert time.monotonic() < deadline, f"ricochet serve did not answer {url} within {seconds:g} s: {said()}"
        time.sleep(0.5)
