"""Pack benchmark: puzzles per minute per worker process, by optimal-length band,
and the speed-up from one to two worker processes; with --pools, long packs
drawn from pools, measured through a fresh `ricochet serve`.

    .venv/bin/python bench/packs.py [--scale 1.0]
    .venv/bin/python bench/packs.py --pools [--five-robots] [--variety]

Starts a private Redis and real Celery worker processes (concurrency 1 each),
asks the API (in-process test client) for one pack per band and times it from
the POST to the job's success.  The same packs (same seeds) run with one worker,
then with two, so the work compared is identical.  --scale multiplies the pack
sizes (0.5 for a quicker, noisier run).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _stack import wait_ready  # noqa: E402

from service.app import create_app  # noqa: E402
from workers.app import make_celery  # noqa: E402
from workers.embedded import EmbeddedRedis  # noqa: E402

BANDS = [("<= 8", 2, 8, 60), ("9-12", 9, 12, 30), ("13-16", 13, 16, 8), ("17+", 17, 20, 4)]


def start_workers(url: str, n: int) -> list[subprocess.Popen]:
    env = {**os.environ, "REDIS_URL": url}
    procs = [subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "error",
                               "--concurrency", "1", "--without-gossip", "--without-mingle",
                               "--queues", "ricochet,packs", "-n", f"bench{i}@%h"],
                              env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) for i in range(n)]
    celery = make_celery(url)
    deadline = time.monotonic() + 60
    while len(celery.control.ping(timeout=0.5)) < n:
        if time.monotonic() > deadline:
            raise RuntimeError("workers did not start")
    return procs


def stop_workers(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        p.wait(timeout=60)


def run_pack(client, count: int, lo: int, hi: int, seed: str) -> float:
    started = time.perf_counter()
    r = client.post("/v1/packs", json={"count": count, "min_length": lo, "max_length": hi, "seed": seed})
    location = r.headers["Location"]
    while True:
        job = client.get(location).json
        if job["state"] == "succeeded":
            return time.perf_counter() - started
        if job["state"] == "failed":
            raise RuntimeError(job["error"])
        time.sleep(0.1)


FIVE_ROBOT_SEEDS = 6
VARIETY_PACKS = 10  # issue 44: ten packs of 1,000 x 20 moves should hold 9,000 distinct puzzles
POOL_PACKS = [(1000, 20, 20), (1000, 16, 16), (100, 22, 22), (100, 24, 24), (100, 25, 25)]


def _http(method: str, url: str, body: dict | None = None) -> tuple[int, dict, dict]:
    import json
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, dict(r.headers), json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), json.loads(e.read() or b"null")


def pool_packs(five_robots: bool, variety: bool = False) -> None:
    """`ricochet serve` as a fresh install runs it (private Redis, one worker), then
    packs of long puzzles through HTTP, timed from the POST to the last puzzle."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env["RICOCHET_RATE_LIMITS"] = "off"
        serve = subprocess.Popen([str(Path(sys.executable).parent / "ricochet"), "serve", "--port", str(port),
                                  "--instance", tmp], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_ready(base)
            print(f"{'pack':>18} {'seconds':>8} {'made':>5} {'failed':>6} {'pairs':>6} {'distinct':>8}")
            for count, lo, hi in POOL_PACKS:
                _one_pack(base, count, lo, hi)
            if variety:
                seen: set[tuple[str, str]] = set()
                for seed in range(VARIETY_PACKS):
                    seen |= _one_pack(base, 1000, 20, 20, f"variety-{seed}")
                print(f"{VARIETY_PACKS} packs of 1000 x 20 (seeds variety-0..{VARIETY_PACKS - 1}): "
                      f"{len(seen)} distinct puzzles, {len({key for _, key in seen})} with a (board, target, "
                      "solution) of their own", flush=True)
        finally:
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(timeout=60)
    if five_robots:
        _five_robots()


def _one_pack(base: str, count: int, lo: int, hi: int, seed: str = "bench") -> set[tuple[str, str]]:
    """One pack timed and described; the code and variety key of each of its puzzles."""
    from solver.production.packs import variety_key

    started = time.perf_counter()
    status, headers, job = _http("POST", base + "/v1/packs",
                                 {"count": count, "min_length": lo, "max_length": hi, "seed": seed})
    if status != 202:
        print(f"{count} x {lo}-{hi}: {status} {job.get('detail')}")
        return set()
    while job["state"] in ("pending", "running"):
        time.sleep(0.2)
        job = _http("GET", base + headers["Location"])[2]
    took = time.perf_counter() - started
    pack = _http("GET", f"{base}/v1/packs/{job['id']}")[2] if job["state"] == "succeeded" else {}
    puzzles = pack.get("puzzles", [])
    pairs = len({(p["board"]["spec"] if isinstance(p["board"], dict) else p["board"], str(p["target"]))
                 for p in puzzles})
    distinct = len({variety_key(p) for p in puzzles})
    label = f"{count} x {lo}" if lo == hi else f"{count} x {lo}-{hi}"
    print(f"{label:>18} {took:>8.1f} {len(puzzles):>5} {len(pack.get('failed', [])):>6} {pairs:>6} "
          f"{distinct:>8}", flush=True)
    return {(p["code"], variety_key(p)) for p in puzzles}


def _five_robots() -> None:
    from solver.production.generate import generate
    from solver.production.pools import Library, shipped

    library = Library(shipped())
    print(f"\n{'5 robots':>8} {'seconds per puzzle, seeds 0..' + str(FIVE_ROBOT_SEEDS - 1):>32} {'median':>7}")
    for n in range(16, 21):
        times = []
        for seed in range(FIVE_ROBOT_SEEDS):
            t0 = time.perf_counter()
            generate(n, robots=5, seed=seed, pools=library)
            times.append(time.perf_counter() - t0)
        print(f"{n:>8} {' '.join(f'{t:6.1f}' for t in times):>32} {statistics.median(times):>7.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--pools", action="store_true", help="long packs from pools through `ricochet serve`")
    parser.add_argument("--five-robots", action="store_true", help="with --pools: 5-robot puzzles of 16-20 moves")
    parser.add_argument("--variety", action="store_true",
                        help=f"with --pools: {VARIETY_PACKS} packs of 1,000 x 20 moves, and how many distinct puzzles")
    args = parser.parse_args()
    if args.pools:
        pool_packs(args.five_robots, args.variety)
        return
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp), persist=False) as redis:
        client = create_app({"REDIS_URL": redis.url, "RATE_LIMITS_ENABLED": False}).test_client()
        seconds: dict[tuple[str, int], float] = {}
        counts = {}
        for workers in (1, 2):
            procs = start_workers(redis.url, workers)
            try:
                for name, lo, hi, count in BANDS:
                    counts[name] = max(2, round(count * args.scale))
                    seconds[(name, workers)] = run_pack(client, counts[name], lo, hi, f"bench:{name}")
                    print(f"  {workers} worker(s), band {name}: {counts[name]} puzzles in "
                          f"{seconds[(name, workers)]:.1f} s", file=sys.stderr, flush=True)
            finally:
                stop_workers(procs)
        print(f"{'band':>6} {'puzzles':>7} {'1 worker /min':>14} {'2 workers /min':>15} {'per worker':>11} "
              f"{'speed-up':>9}")
        for name, *_ in BANDS:
            one = 60 * counts[name] / seconds[(name, 1)]
            two = 60 * counts[name] / seconds[(name, 2)]
            print(f"{name:>6} {counts[name]:>7} {one:>14.1f} {two:>15.1f} {two / 2:>11.1f} {two / one:>8.2f}x")


if __name__ == "__main__":
    main()
