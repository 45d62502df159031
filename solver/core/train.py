"""The workload a profile-guided build of the core learns from (setup.py).

    python solver/core/train.py PATH/_core.so

Loads the core built at PATH (instrumented: it counts its branches as it runs)
as `solver._core`, then solves a fixed, seeded mix of puzzles through the
package's Python API, as a service sees them: real boards with and without
diagonal barriers, 4 and 5 robots, both ricochet options, small custom boards
with openings and the vortex, and a board without barriers where the solver
meets its peers (bench/peers.py; other seeds than the bench's), some on two
threads.  Each solve stops within a tenth of a second: a few seconds in all.
The answers are not kept; only the counts the core writes as it exits.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_core(path: str) -> None:
    """The core at `path`, in place of the installed one, before `solver` is imported."""
    loader = importlib.machinery.ExtensionFileLoader("solver._core", path)
    spec = importlib.util.spec_from_file_location("solver._core", path, loader=loader)
    if spec is None:
        raise SystemExit(f"cannot load {path}")
    core = importlib.util.module_from_spec(spec)
    loader.exec_module(core)
    sys.modules["solver._core"] = core


def main() -> None:
    load_core(sys.argv[1])
    sys.path.insert(0, str(ROOT))
    from solver.model.board import Board, random_board_spec, real_board
    from solver.model.geometry import ROBOT_COLOURS
    from solver.model.puzzle import Goal, Puzzle, Ricochet, Rules
    from solver.search.solve import solve

    rng = random.Random(20261125)

    def real(robots: int, board: Board | None = None, ricochet: str | None = None) -> Puzzle:
        board = board or real_board(random_board_spec(rng, barriers=rng.random() < 0.5))
        colours = ROBOT_COLOURS[:robots]
        target = rng.choice([t for t in board.targets if t.colour is not None or ricochet is None])
        return Puzzle.create(board, dict(zip(colours, rng.sample(board.start_cells(), robots))),
                             Goal(target.cell, target.colour),
                             Rules(Ricochet(ricochet or rng.choice(["none", "turn"])),
                                   vortex_sightline=rng.random() < 0.25))

    def custom() -> Puzzle:
        w, h = rng.randint(4, 8), rng.randint(4, 8)
        cells = rng.sample([(x, y) for y in range(h) for x in range(w)], w * h)
        diagonals = [{"cell": list(c), "colour": rng.choice(ROBOT_COLOURS), "orientation": rng.choice("/\\")}
                     for c in cells[1:rng.randint(1, 4)]]
        walls = [[rng.randrange(w), rng.randrange(h), rng.choice("NESW")] for _ in range(w * h // 4)]
        openings = [[rng.randrange(w), 0, "N"]] if rng.random() < 0.3 else []
        board = Board.custom(w, h, walls, [], [{"cell": list(cells[0]), "colour": None, "symbol": "vortex"}],
                             diagonals, openings)
        robots = rng.randint(2, 5)
        spots = cells[len(diagonals) + 1:]
        return Puzzle.create(board, dict(zip(rng.sample(ROBOT_COLOURS, robots), rng.sample(spots, robots))),
                             Goal(cells[0], None),
                             Rules(Ricochet(rng.choice(["none", "turn"])), vortex_sightline=rng.random() < 0.3))

    peers_board = real_board("red-A,green-B,blue-A,yellow-A")
    work = ([real(4) for _ in range(400)] + [real(5) for _ in range(150)] + [custom() for _ in range(300)] +
            [real(4, peers_board, "none") for _ in range(400)])
    for i, puzzle in enumerate(work):
        solve(puzzle, time_budget=0.1, threads=2 if i % 8 == 0 else 1, crew_from=256)


if __name__ == "__main__":
    main()
