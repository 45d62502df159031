"""Generator benchmark: seconds to generate one puzzle per optimal length (4 robots, 2013 boards).

    .venv/bin/python bench/generate.py [--min-length 2] [--max-length N] [--samples 9] [--budget 90]

Prints, per length, the median and p90 seconds of `generate(L, seed=...)` over
several seeds (fewer for the long lengths), then puzzles per minute for the
bands <= 8, 9-12, 13-16, 17-20.  A search that finds nothing within the time
budget is reported as such (from 21 moves the bank answers, when it holds one).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.production import bank  # noqa: E402
from solver.production.generate import NoPuzzleFound, generate  # noqa: E402


def longest_banked() -> int:
    """The longest length in the bank for 4 robots on 2013 boards (the maximum found), at least 25."""
    return max([25] + [e["length"] for e in bank.matching(0, 99, 4, "turn")])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-length", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=longest_banked(),
                        help="the longest length to time (default: the bank's longest for 4 robots, at least 25)")
    parser.add_argument("--samples", type=int, default=9, help="seeds per length up to 16 (3 for 17-20)")
    parser.add_argument("--budget", type=float, default=90.0, help="seconds per puzzle before giving up")
    args = parser.parse_args()
    per_length: dict[int, list[float]] = {}
    print(f"{'length':>6} {'n':>3} {'median s':>9} {'p90 s':>8}")
    for length in range(args.min_length, args.max_length + 1):
        samples = args.samples if length <= 16 else 3 if length <= 20 else 1
        times = []
        for seed in range(samples):
            started = time.perf_counter()
            try:
                generate(length, seed=f"bench:{seed}", max_evaluations=100_000, time_budget=args.budget)
            except NoPuzzleFound as e:
                print(f"{length:>6}  none after {time.perf_counter() - started:.1f} s (seed {seed}): "
                      f"{str(e).split(';')[0]}", flush=True)
                continue
            times.append(time.perf_counter() - started)
        if times:
            per_length[length] = times
            p90 = sorted(times)[min(len(times) - 1, int(0.9 * len(times)))]
            print(f"{length:>6} {len(times):>3} {statistics.median(times):>9.3f} {p90:>8.3f}", flush=True)
    for lo, hi in ((2, 8), (9, 12), (13, 16), (17, 20)):
        times = [t for n, ts in per_length.items() if lo <= n <= hi for t in ts]
        if times:
            print(f"band {lo}-{hi}: {60 / statistics.mean(times):.0f} puzzles per minute")


if __name__ == "__main__":
    main()
