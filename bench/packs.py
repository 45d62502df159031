"""Pack benchmark: puzzles per minute per worker process, by optimal-length band,
and the speed-up from one to two worker processes.

    .venv/bin/python bench/packs.py [--scale 1.0]

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.app import create_app  # noqa: E402
from workers.app import make_celery  # noqa: E402
from workers.embedded import EmbeddedRedis  # noqa: E402

BANDS = [("<= 8", 2, 8, 60), ("9-12", 9, 12, 30), ("13-16", 13, 16, 8), ("17+", 17, 20, 4)]


def start_workers(url: str, n: int) -> list[subprocess.Popen]:
    env = {**os.environ, "REDIS_URL": url}
    procs = [subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "error",
                               "--concurrency", "1", "--without-gossip", "--without-mingle", "-n", f"bench{i}@%h"],
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
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
