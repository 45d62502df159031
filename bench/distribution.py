"""The distribution of optimal lengths over random fair positions, measured by our solver.

    .venv/bin/python bench/distribution.py [--positions 100000]

For 4 and 5 robots, with and without the ricochet rule: random 2013 boards,
robots on random cells without targets, a random target, void rounds skipped.
Writes solver/data/distribution.json (the rating's percentiles use it),
docs/distribution.md (the table) and docs/distribution.png (if matplotlib is
installed).  Seeded: the same command writes the same files.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.model.board import all_boards, real_board  # noqa: E402
from solver.model.geometry import ROBOT_COLOURS  # noqa: E402
from solver.model.puzzle import Goal, Puzzle, Rules  # noqa: E402
from solver.search.solve import solve_many  # noqa: E402

CONFIGS = [(4, "turn"), (4, "none"), (5, "turn"), (5, "none")]


def positions(rng: random.Random, robots: int, ricochet: str, n: int) -> list[Puzzle]:
    specs = list(all_boards("2013"))
    out = []
    while len(out) < n:
        board = real_board(rng.choice(specs))
        free = board.start_cells()
        t = rng.choice(board.targets)
        out.append(Puzzle.create(board, dict(zip(ROBOT_COLOURS[:robots], rng.sample(free, robots))),
                                 Goal(t.cell, t.colour), Rules(ricochet)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--positions", type=int, default=100_000)
    parser.add_argument("--output", type=Path, default=ROOT,
                        help="the checkout to write into (default this one: the difficulty report's table, "
                             "docs/distribution.md and .png)")
    args = parser.parse_args()
    table = args.output / "solver" / "production" / "data" / "distribution.json"
    docs = args.output / "docs"
    table.parent.mkdir(parents=True, exist_ok=True)
    docs.mkdir(parents=True, exist_ok=True)
    result = {}
    for robots, ricochet in CONFIGS:
        rng = random.Random(f"distribution:{robots}:{ricochet}")
        started = time.perf_counter()
        counts: Counter = Counter()
        done = 0
        while done < args.positions:
            batch = positions(rng, robots, ricochet, min(2000, args.positions - done))
            for answer in solve_many(batch, threads=2, time_budget=120):
                if answer.round.void or answer.length is None:
                    continue  # the generator never serves void rounds
                counts[answer.length] += 1
                done += 1
        key = f"{robots}-{ricochet}"
        result[key] = {str(k): counts[k] for k in sorted(counts)}
        print(f"{key}: {done} positions in {time.perf_counter() - started:.0f} s; "
              f"longest {max(counts)}", flush=True)
    data = {"positions_per_config": args.positions, "boards": "random 2013 boards", "lengths": result}
    table.write_text(json.dumps(data, indent=1) + "\n")
    lengths = sorted({int(k) for v in result.values() for k in v})
    lines = ["# Optimal lengths of random fair positions", "",
             f"{args.positions:,} positions per column: random 2013 boards, robots on random cells without "
             "targets, a random target, void rounds skipped; measured by our solver "
             "(`bench/distribution.py`). Percent of positions.", "",
             "| length | " + " | ".join(f"{r} robots, ricochet {c}" for r, c in CONFIGS) + " |",
             "|---|" + "---|" * len(CONFIGS)]
    for n in lengths:
        cells = [f"{100 * result[f'{r}-{c}'].get(str(n), 0) / args.positions:.3f}" for r, c in CONFIGS]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    (docs / "distribution.md").write_text("\n".join(lines) + "\n")
    plot(result, lengths, args.positions, docs / "distribution.png")


def plot(result: dict[str, dict[str, int]], lengths: list[int], positions: int, into: Path) -> None:
    """The table as a bar chart (log scale), when matplotlib is installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no PNG")
        return
    fig, ax = plt.subplots(figsize=(9, 5))
    width = 0.2
    for i, (r, c) in enumerate(CONFIGS):
        ys = [100 * result[f"{r}-{c}"].get(str(n), 0) / positions for n in lengths]
        ax.bar([n + (i - 1.5) * width for n in lengths], ys, width, label=f"{r} robots, ricochet {c}")
    ax.set_xlabel("optimal length (moves)")
    ax.set_ylabel("% of random fair positions")
    ax.set_yscale("log")
    ax.set_title(f"Optimal lengths of {positions:,} random positions per configuration")
    ax.legend()
    fig.tight_layout()
    fig.savefig(into, dpi=110)


if __name__ == "__main__":
    main()
