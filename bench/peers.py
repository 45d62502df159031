"""Our solver beside public ones, on the same puzzles in the same run.

    .venv/bin/python bench/peers.py [--count 200] [--seed 0] [--board SPEC]
                                    [--fogleman PATH/_ricochet.so] [--no-hardest]

A fixed seeded set of random 4-robot puzzles on one board (a coloured target,
ricochet rule off: the public solvers implement neither the rule nor the
vortex), then the 24- and 25-move hardest known puzzles (solver/data/quadrants.json).  We
are timed through the Python API (`solver.search.solve.solve`, the board's bounds
already cached), so any call overhead counts against us.

With --fogleman, fogleman/Ricochet's C search is timed on each puzzle too,
loaded with ctypes from a shared library built outside this repository (no
peer code or build script is kept here), for example:

    gcc -std=c99 -O3 -shared -fPIC -o /tmp/peer/_ricochet.so ricochet.c

Its answer must have our optimal length, or the run stops.  Prints, per
optimal-length band: puzzles, our median / max ms, the peer's, and the ratio
of medians (peer / ours: above 1 means we are faster).  --no-hardest leaves out
the 24- and 25-move puzzles (fogleman's search takes minutes on them).
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.model.board import Board, quadrant_data, real_board  # noqa: E402
from solver.model.puzzle import Goal, Puzzle, Rules  # noqa: E402
from solver.search.solve import solve  # noqa: E402

BANDS = [(1, 3), (4, 6), (7, 9), (10, 12), (13, 99)]
REPEATS = 3  # each solver's time for a puzzle is its best of this many runs


class _Game(ctypes.Structure):
    """fogleman/Ricochet's `Game`: walls and robots per cell (16 x 16), the active
    robot first, the target cell."""

    _fields_ = [("grid", ctypes.c_uint * 256), ("moves", ctypes.c_uint * 256), ("robots", ctypes.c_uint * 4),
                ("token", ctypes.c_uint), ("last", ctypes.c_uint)]


class Fogleman:
    """fogleman/Ricochet's C search through its own entry point, `search`."""

    name = "fogleman C"
    WALL = (1, 2, 4, 8)  # N E S W, as its grid has them
    ROBOT = 0x10

    def __init__(self, path: str) -> None:
        self.lib = ctypes.CDLL(path)
        self.lib.search.restype = ctypes.c_uint
        self.lib.search.argtypes = [ctypes.POINTER(_Game), ctypes.c_char_p, ctypes.c_void_p]

    def prepare(self, p: Puzzle) -> Callable[[], int]:
        b = p.board
        if (b.width, b.height) != (16, 16) or b.barriers or p.goal.colour is None or p.rules.ricochet != "none":
            raise ValueError("the peer plays 16 x 16 boards without barriers, a coloured target, no ricochet rule")
        grid = [sum(bit for d, bit in enumerate(self.WALL) if b.steps[d][i] < 0) for i in range(256)]
        robots = dict(p.robots)
        order = [p.goal.colour] + [c for c in p.colours if c != p.goal.colour]
        cells = [b.index(robots[c]) for c in order]
        target = b.index(p.goal.cell)
        template = _Game()
        for i, walls in enumerate(grid):
            template.grid[i] = walls
        for r, cell in enumerate(cells):
            template.robots[r] = cell
            template.grid[cell] |= self.ROBOT
        template.token, template.last = target, 0
        path = ctypes.create_string_buffer(256)
        game = _Game()
        size = ctypes.sizeof(_Game)

        def run() -> int:  # a fresh game each time (a search writes into it), copied in a microsecond
            ctypes.memmove(ctypes.byref(game), ctypes.byref(template), size)
            return self.lib.search(ctypes.byref(game), path, None)

        return run


def best_time(run: Callable[[], object]) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(REPEATS):
        started = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - started)
    return best, out


def random_puzzles(board: Board, count: int, seed: int) -> list[Puzzle]:
    rng = random.Random(f"peers:{seed}:{board.spec}")
    free = [c for c in board.start_cells()]
    targets = [t for t in board.targets if t.colour is not None]
    out = []
    while len(out) < count:
        t = rng.choice(targets)
        cells = rng.sample(free, 4)
        p = Puzzle.create(board, dict(zip(("red", "green", "blue", "yellow"), cells)), Goal(t.cell, t.colour),
                          Rules("none"))
        if dict(p.robots)[t.colour] != t.cell:  # a robot already home is no puzzle
            out.append(p)
    return out


def hardest() -> list[Puzzle]:
    tests = quadrant_data()["test_puzzles"]
    return [Puzzle.from_json({**t, "rules": {"ricochet": "none"}}) for t in tests if t["optimal_moves"] >= 24]


def band(length: int) -> str:
    lo, hi = next((lo, hi) for lo, hi in BANDS if lo <= length <= hi)
    return f"{lo}-{hi}" if hi < 99 else f"{lo}+"


def measure(puzzles: list[Puzzle], peers: list[Fogleman]) -> list[dict[str, object]]:
    rows = []
    for p in puzzles:
        solve(p)  # the board's bounds, once
        ours, answer = best_time(functools.partial(solve, p))
        row: dict[str, object] = {"puzzle": p, "length": answer.length, "ours": ours}
        for peer in peers:
            seconds, length = best_time(peer.prepare(p))
            if length != answer.length:
                raise SystemExit(f"{peer.name} gives {length} moves for {p.code()}, we give {answer.length}")
            row[peer.name] = seconds
        rows.append(row)
    return rows


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.3f} / {max(values) * 1e3:.3f}"


def report(rows: list[dict[str, object]], peers: list[Fogleman]) -> None:
    head = "| optimal length | puzzles | ours median / max ms |" + "".join(
        f" {p.name} median / max | {p.name} / ours |" for p in peers)
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for lo, _ in BANDS:
        name = band(lo)
        group = [r for r in rows if r["length"] is not None and band(r["length"]) == name]
        if not group:
            continue
        ours = [r["ours"] for r in group]
        line = f"| {name} | {len(group)} | {ms(ours)} |"
        for peer in peers:
            theirs = [r[peer.name] for r in group]
            line += f" {ms(theirs)} | {statistics.median(theirs) / statistics.median(ours):.2f}x |"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200, help="random puzzles (default 200)")
    ap.add_argument("--seed", type=int, default=0, help="the set's seed (default 0)")
    ap.add_argument("--board", default="green-A,yellow-B,red-B,blue-B", help="a board without barriers")
    ap.add_argument("--fogleman", help="path to fogleman/Ricochet's ricochet.c built as a shared library")
    ap.add_argument("--no-hardest", action="store_true", help="only the random puzzles, by band")
    args = ap.parse_args()
    peers = [Fogleman(args.fogleman)] if args.fogleman else []
    board = real_board(args.board)
    print(f"{args.count} random 4-robot puzzles on {args.board}, ricochet rule off, seed {args.seed}; "
          f"best of {REPEATS} runs each\n")
    report(measure(random_puzzles(board, args.count, args.seed), peers), peers)
    if args.no_hardest:
        return
    print("\nThe 24- and 25-move hardest known puzzles (solver/data/quadrants.json), one thread:\n")
    for row in measure(hardest(), peers):
        times = ", ".join(f"{peer.name} {row[peer.name]:.2f} s" for peer in peers)
        print(f"- {row['length']} moves: ours {row['ours']:.2f} s" + (f"; {times}" if times else ""))


if __name__ == "__main__":
    main()
