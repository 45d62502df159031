"""Solver benchmark: fixed seeded sets, timings per optimal-length band, through the Python API.

    .venv/bin/python bench/solver.py [--quick]

Prints, per set and length band: count, median / p90 / p99 / max milliseconds,
states per second; then peak memory (RSS) of the process, and the speed-up over
the reference breadth-first search on the puzzles it can finish (same run).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.model.board import quadrant_data  # noqa: E402
from solver.model.puzzle import Puzzle  # noqa: E402
from solver.production import bank  # noqa: E402
from solver.search.reference import reference_solve  # noqa: E402
from solver.search.solve import solve  # noqa: E402
from tests.helpers import random_real_puzzle  # noqa: E402

BANDS = [(0, 4), (5, 8), (9, 12), (13, 16), (17, 99)]


def band_of(length: int | None) -> str:
    if length is None:
        return "none"
    for lo, hi in BANDS:
        if lo <= length <= hi:
            return f"{lo}-{hi}" if hi < 99 else f"{lo}+"
    return "?"


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def run_set(name: str, puzzles: list[Puzzle]) -> list[tuple[Puzzle, float, int | None]]:
    rows, cold = [], []
    for p in puzzles:
        started = time.perf_counter()
        solve(p)  # first solve of this (board, target): fills the lower-bound cache
        cold.append(time.perf_counter() - started)
        started = time.perf_counter()
        answer = solve(p)
        elapsed = time.perf_counter() - started
        rows.append((p, elapsed, answer.length, answer.stats["states"], answer.stats["nodes"]))
    print(f"\n{name}: {len(rows)} puzzles (first solve of each, lower bounds cold: "
          f"median {statistics.median(cold) * 1e3:.3f} ms; below: bounds cached)")
    print(f"  {'band':>6} {'n':>5} {'median ms':>10} {'p90 ms':>9} {'p99 ms':>9} {'max ms':>9} "
          f"{'Mstates/s':>9}  (states = moves generated)")
    groups: dict[str, list] = {}
    for r in rows:
        groups.setdefault(band_of(r[2]), []).append(r)
    for band in [band_of(lo) for lo, _ in BANDS] + ["none"]:
        g = groups.get(band)
        if not g:
            continue
        times = [r[1] * 1e3 for r in g]
        rate = sum(r[4] for r in g) / max(sum(r[1] for r in g), 1e-9) / 1e6
        print(f"  {band:>6} {len(g):>5} {statistics.median(times):>10.3f} {pct(times, .9):>9.3f} "
              f"{pct(times, .99):>9.3f} {max(times):>9.3f} {rate:>9.1f}")
    times = [r[1] * 1e3 for r in rows]
    print(f"  {'all':>6} {len(rows):>5} {statistics.median(times):>10.3f} {pct(times, .9):>9.3f} "
          f"{pct(times, .99):>9.3f} {max(times):>9.3f}")
    return rows


def hardest() -> list[Puzzle]:
    """The hardest known puzzles (24 and 25 moves), under both ricochet options."""
    tests = quadrant_data()["test_puzzles"]
    return [Puzzle.from_json({**t, "rules": {"ricochet": r}}) for t in tests if t["optimal_moves"] >= 24
            for r in ("none", "turn")]


def threads_side_by_side(puzzles: list[Puzzle], busy: int = 0) -> None:
    """Each deep puzzle solved on one thread and on two (A*'s crew), in turn, so
    that both see the same machine; with `busy` other processes spinning (one
    per core: every core busy), the crew must not cost more than it gives."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        _threads_side_by_side(puzzles, busy)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def _threads_side_by_side(puzzles: list[Puzzle], busy: int) -> None:
    where = f"with {busy} other busy process(es)" if busy else "with the cores free"
    print(f"\none thread against two (solve(..., threads=2)) {where}, seconds, same run:")
    print(f"  {'puzzle':>24} {'moves':>5} {'1 thread':>9} {'2 threads':>9} {'ratio':>6}")
    for p in puzzles:
        times = {}
        for threads in (1, 2):
            started = time.perf_counter()
            answer = solve(p, threads=threads)
            times[threads] = time.perf_counter() - started
        label = f"{p.code()[:16]}/{p.rules.ricochet}"
        print(f"  {label:>24} {answer.length:>5} {times[1]:>9.2f} {times[2]:>9.2f} {times[1] / times[2]:>6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sets, no hard set")
    parser.add_argument("--threads-only", action="store_true",
                        help="only one thread against two on the 24- and 25-move puzzles, with the cores free and "
                             "with every core busy with another process")
    args = parser.parse_args()
    if args.threads_only:
        for busy in range((os.cpu_count() or 1) + 1):
            threads_side_by_side(hardest(), busy=busy)
        return
    scale = 5 if args.quick else 1
    rng = random.Random(2026)
    four = [random_real_puzzle(rng, 4, rng.choice(["1999", "2013"])) for _ in range(1000 // scale)]
    five = [random_real_puzzle(rng, 5, rng.choice(["1999", "2013"])) for _ in range(200 // scale)]
    barrier = [random_real_puzzle(rng, 4, barriers=True) for _ in range(200 // scale)]
    # Boards are compiled once per process (a service sees the same boards again
    # and again); compile them out of the measurement and report the cost apart.
    from solver.search.solve import compiled

    gc.freeze()  # as a long-running worker would: the boards are permanent, keep the collector off them
    boards = {p.board for p in four + five + barrier}
    started = time.perf_counter()
    for b in boards:
        compiled(b)
    print(f"compiled {len(boards)} boards in {(time.perf_counter() - started) * 1e3:.0f} ms "
          f"({(time.perf_counter() - started) / len(boards) * 1e6:.0f} us each)")
    rows4 = run_set("random 4-robot puzzles, real boards", four)
    run_set("random 5-robot puzzles, real boards", five)
    run_set("random 4-robot puzzles, barrier boards", barrier)
    if not args.quick:
        tests = quadrant_data()["test_puzzles"]
        hard = [Puzzle.from_json({**t, "rules": {"ricochet": r}}) for t in tests
                if t["optimal_moves"] >= 20 for r in ("none", "turn")]
        run_set("hard set (test puzzles of 20+ moves, both ricochet options)", hard)
        five_long = max(bank.matching(1, 99, 5, "turn"), key=lambda e: (e["length"], e["code"]), default=None)
        if five_long:
            run_set(f"the longest 5-robot puzzle in the bank ({five_long['length']} moves)",
                    [Puzzle.from_code(five_long["code"])])
        threads_side_by_side(hard + ([Puzzle.from_code(five_long["code"])] if five_long else []))
        threads_side_by_side(hardest(), busy=os.cpu_count() or 1)

    # Same-run baseline: the reference BFS on the short random puzzles it finishes quickly.
    short = [r for r in rows4 if r[2] is not None and r[2] <= 5][:100]
    ref_time = fast_time = 0.0
    for p, elapsed, length, *_ in short:
        started = time.perf_counter()
        ref = reference_solve(p)
        ref_time += time.perf_counter() - started
        fast_time += elapsed
        assert ref.length == length
    print(f"\nspeed-up over the reference BFS on {len(short)} puzzles of <= 5 moves: "
          f"{ref_time / max(fast_time, 1e-9):.0f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (RSS): {peak:.0f} MiB")


if __name__ == "__main__":
    main()
