"""GET /v1/puzzles/random?length=L for L = 2..26: the time per request.

    .venv/bin/python bench/random_puzzles.py [--per-length 10] [--lengths 2-26]

A private Redis; the app in this process, with the shipped pools and catalogue
read once before timing (as a running server has them).  Every request has a
seed of its own, so each draws a puzzle not served before (nothing is answered
from what an earlier request worked out): printed per length, the median,
95th percentile and slowest, and the statuses (the pools hold 8 to 26 moves;
shorter ones are searched).  Issue 68 measured 2.0-3.2 s a request for L = 20..26.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.app import create_app  # noqa: E402
from workers.embedded import EmbeddedRedis  # noqa: E402


def lengths(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def percentile(sorted_times: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted times."""
    return sorted_times[max(0, min(len(sorted_times) - 1, round(share * len(sorted_times)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-length", type=int, default=10, help="requests per length")
    parser.add_argument("--lengths", type=lengths, default=lengths("2-26"), help="a length or a range, as 2-26")
    args = parser.parse_args()
    with EmbeddedRedis(Path(tempfile.mkdtemp()), persist=False) as server:
        app = create_app({"REDIS_URL": server.url, "RATE_LIMITS_ENABLED": False})
        client = app.test_client()
        start = time.perf_counter()
        for warm in (10, 20):  # the pools and the catalogue, once
            client.get(f"/v1/puzzles/random?length={warm}&seed=warm")
        print(f"warm-up (the pools read): {time.perf_counter() - start:.1f} s")
        print(f"{'length':>6} {'p50 ms':>9} {'p95 ms':>9} {'max ms':>9}  answered")
        for n in args.lengths:
            took, codes = [], {}
            for _ in range(args.per_length):
                t = time.perf_counter()
                r = client.get(f"/v1/puzzles/random?length={n}&seed=bench-{uuid.uuid4().hex}")
                took.append(time.perf_counter() - t)
                codes[r.status_code] = codes.get(r.status_code, 0) + 1
            took.sort()
            answered = " ".join(f"{k}x{v}" for k, v in sorted(codes.items()))
            print(f"{n:>6} {statistics.median(took) * 1000:>9.1f} {percentile(took, 0.95) * 1000:>9.1f} "
                  f"{took[-1] * 1000:>9.1f}  {answered}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
