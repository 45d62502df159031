"""Retrograde-analysis benchmark: every 4-robot position of one board and target at once.

    .venv/bin/python bench/exhaustive.py [--case 1999|2013] [--threads 2]

Prints the seconds, the peak memory, the count of positions per optimal length
(plain rule: ricochet none) and the longest positions.  The 1999 case is the
board and target of the published 25-move puzzle (the packaged quadrants file, BoardGameGeek
thread 308557), whose exhaustive computation found 25 to be the maximum: the
analysis must find 25 too, and rate the published position 25.  The 2013 case is
the barrier board and target of this project's longest finds (see the README).
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.model.board import quadrant_data, real_board  # noqa: E402
from solver.model.puzzle import Goal, Puzzle  # noqa: E402
from solver.search.solve import exhaustive  # noqa: E402

COLOURS = ("red", "green", "blue", "yellow")


def case(name: str) -> tuple[str, Goal, list[dict], int | None]:
    """Board spec, goal, probe positions and the published maximum, if any."""
    if name == "2013":
        return "green-B,blue-B,red-B,yellow-D", Goal((8, 10), "yellow", "square"), [], None
    published = next(t for t in quadrant_data()["test_puzzles"] if t["optimal_moves"] == 25)
    p = Puzzle.from_json({**published, "rules": {"ricochet": "none"}})
    return p.board.spec, p.goal, [dict(p.robots)], 25


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=("1999", "2013"), default="1999")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    spec, goal, probes, published = case(args.case)
    board = real_board(spec)
    ex = exhaustive(board, COLOURS, goal, min_length=0, limit=50, probes=probes, threads=args.threads)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"board {spec}, target {goal.colour or 'any'} at {goal.cell}, 4 robots, plain rule")
    print(f"{ex.seconds:.0f} s on {args.threads} threads, peak memory {peak:.0f} MiB")
    print(f"{'length':>6} {'positions':>14}")
    for n, count in enumerate(ex.counts):
        print(f"{n:>6} {count:>14,}")
    print(f"{'none':>6} {ex.unsolvable:>14,}")
    longest = [robots for n, robots, _ in ex.positions if n == ex.longest]
    print(f"longest: {ex.longest} moves, {ex.counts[-1]:,} positions, e.g. {longest[0] if longest else '-'}")
    if published is not None:
        print(f"published maximum {published}: {'agrees' if ex.longest == published else 'DIFFERS'}; "
              f"the published position rates {ex.probes[0]}")


if __name__ == "__main__":
    main()
