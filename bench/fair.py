"""Fair shares of the workers (issue 67): how long one client's small pack and
queued solve take alone, and behind another client's big pack and queued solves.

    .venv/bin/python bench/fair.py [--count 200] [--lengths 14-16] [--small 3] [--solves 4] [--whole]

Starts a private Redis, ONE worker process (concurrency 1, queues ricochet and
packs, as the tests' worker) and the API served over HTTP (tests.helpers.served),
with two clients, A and B, each by its own API key.  First B alone: a pack of
--small puzzles and one queued solve (a puzzle too slow for the request's 0.01 s,
searched by a job for at most --job-budget seconds).  Then A asks for a pack of
--count puzzles (searched on a board no pool holds: one chunk a puzzle for these
lengths) and --solves queued solves, and once A's pack is running B asks for the
same kind of work again (new puzzles, so no answer is cached).  Printed: B's
times alone and behind A, how far A's pack was when B's work was done, and what
A's solves were answered (202, or 429 beyond the per-client cap); with --whole,
A's pack is waited for (its time and whether it holds every puzzle), else
cancelled once B is done.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.app import create_app  # noqa: E402
from service.cli.serve import stop  # noqa: E402
from solver.model.board import real_board  # noqa: E402
from solver.model.puzzle import Goal, Puzzle, Rules  # noqa: E402
from tests.helpers import issued_key, served, start_worker, unpooled_board  # noqa: E402
from workers.app import make_celery  # noqa: E402
from workers.embedded import EmbeddedRedis  # noqa: E402

SETTLED = ("succeeded", "failed", "cancelled")


def call(base: str, method: str, path: str, key: dict[str, str], body: Any = None) -> tuple[int, dict, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **key})
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, dict(r.headers), json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.load(e)


def slow_puzzle(base: str, key: dict[str, str], rng: random.Random) -> str:
    """POST /v1/solve with random puzzles until one is queued (202): its job's path."""
    while True:
        status, headers, answer = call(base, "POST", "/v1/solve", key, _slow_body(rng))
        if status == 202:
            return headers["Location"]
        if status != 200:
            raise SystemExit(f"POST /v1/solve answered {status}: {answer}")


def queued(base: str, key: dict[str, str], rng: random.Random) -> int:
    """POST /v1/solve with random puzzles until one is not answered at once: 202, or 429 (the client's cap)."""
    while True:
        status = call(base, "POST", "/v1/solve", key, _slow_body(rng))[0]
        if status != 200:
            return status


def job(base: str, key: dict[str, str], location: str) -> dict:
    return call(base, "GET", location, key)[2]


def pack(base: str, key: dict[str, str], count: int, lo: int, hi: int, seed: str, board: str) -> str:
    status, headers, answer = call(base, "POST", "/v1/packs", key, {"count": count, "min_length": lo,
                                                                    "max_length": hi, "seed": seed, "board": board})
    if status != 202:
        raise SystemExit(f"POST /v1/packs answered {status}: {answer}")
    return headers["Location"]


def b_work(base: str, key: dict[str, str], args: argparse.Namespace, board: str, tag: str,
           rng: random.Random, watch: str | None = None) -> dict[str, Any]:
    """B's small pack and queued solve, each timed from its POST to its job's end;
    with `watch` (A's pack job), A's progress when B's last job ended."""
    started = time.monotonic()
    lo, hi = args.lengths
    waiting = {"pack": pack(base, key, args.small, lo, hi, f"fair-b-{tag}", board),
               "solve": slow_puzzle(base, key, rng)}
    took: dict[str, Any] = {}
    deadline = started + args.timeout
    while waiting and time.monotonic() < deadline:
        for name, location in list(waiting.items()):
            state = job(base, key, location)["state"]
            if state in SETTLED:
                took[name] = (round(time.monotonic() - started, 1), state)
                del waiting[name]
        time.sleep(0.1)
    for name in waiting:
        took[name] = (f"> {args.timeout:g}", "not done")
    if watch is not None:
        took["a_progress"] = job(base, key, watch).get("progress")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=200, help="A's pack (default 200)")
    parser.add_argument("--lengths", type=lambda s: tuple(int(x) for x in s.split("-")), default=(14, 16),
                        help="both packs' lengths, LO-HI (default 14-16)")
    parser.add_argument("--small", type=int, default=3, help="B's pack (default 3)")
    parser.add_argument("--solves", type=int, default=4, help="A's queued solves (default 4)")
    parser.add_argument("--job-budget", type=float, default=3.0, help="a queued solve's seconds (default 3)")
    parser.add_argument("--timeout", type=float, default=600.0, help="longest wait for B's work (default 600 s)")
    parser.add_argument("--whole", action="store_true", help="wait for A's whole pack (else cancel it)")
    parser.add_argument("--seed", type=int, default=67)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # not a line a request
    rng = random.Random(args.seed)
    board = unpooled_board()
    with tempfile.TemporaryDirectory() as folder, EmbeddedRedis(Path(folder) / "redis", persist=False) as redis:
        worker = start_worker(redis.url, "ricochet,packs")
        try:
            celery = make_celery(redis.url)
            deadline = time.monotonic() + 60
            while not celery.control.ping(timeout=0.5):
                if worker.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the worker did not start")
            app = create_app({"REDIS_URL": redis.url, "SOLVE_TIME_BUDGET": 0.01, "JOB_TIME_BUDGET": args.job_budget})
            a, b = issued_key(redis.url), issued_key(redis.url)
            with served(app) as base:
                alone = b_work(base, b, args, board, "alone", rng)
                print(f"B alone: pack of {args.small} {alone['pack'][0]} s ({alone['pack'][1]}), "
                      f"queued solve {alone['solve'][0]} s ({alone['solve'][1]})", flush=True)
                lo, hi = args.lengths
                began = time.monotonic()
                a_pack = pack(base, a, args.count, lo, hi, "fair-a", board)
                while job(base, a, a_pack).get("progress", 0) <= 0:
                    time.sleep(0.1)
                answered = [queued(base, a, rng) for _ in range(args.solves)]
                print(f"A: pack of {args.count} running ({time.monotonic() - began:.1f} s after its POST), "
                      f"{args.solves} queued solves answered {answered}", flush=True)
                behind = b_work(base, b, args, board, "behind", rng, watch=a_pack)
                print(f"B behind A: pack of {args.small} {behind['pack'][0]} s ({behind['pack'][1]}), queued solve "
                      f"{behind['solve'][0]} s ({behind['solve'][1]}); A's pack {behind['a_progress']:.0%} done then",
                      flush=True)
                if args.whole:
                    while (state := job(base, a, a_pack))["state"] not in SETTLED:
                        time.sleep(0.5)
                    made = (state.get("result") or {}).get("made")
                    print(f"A's pack: {state['state']} in {time.monotonic() - began:.1f} s, {made} of "
                          f"{args.count} made", flush=True)
                else:
                    call(base, "DELETE", a_pack, a)
        finally:
            stop(worker)


def _slow_body(rng: random.Random) -> dict:
    """A random 4-robot puzzle on a real board (most are too slow for 0.01 s; a quick one answers 200)."""
    board = real_board("green-A,yellow-B,red-B,blue-B")
    free = [(x, y) for y in range(16) for x in range(16) if (x, y) not in board.blocked]
    target = rng.choice(board.targets)
    return Puzzle.create(board, dict(zip(("red", "green", "blue", "yellow"), rng.sample(free, 4))),
                         Goal(target.cell, target.colour), Rules("none")).to_json()


if __name__ == "__main__":
    main()
