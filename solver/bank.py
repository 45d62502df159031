"""The bank: verified long puzzles, too rare to find inside a request.

Lines of `solver/data/bank.jsonl`, each a puzzle code with its proven optimal
length and one optimal solution.  `ricochet bank` grows it: random fair
positions and climbs on one target toward longer optima, every find proven by
the solver before it is written.
"""

from __future__ import annotations

import functools
import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .board import all_boards, real_board
from .geometry import ROBOT_COLOURS
from .puzzle import Goal, Move, Puzzle, Rules, moves_to_json
from .solve import solve_many

BANK = Path(__file__).parent / "data" / "bank.jsonl"


@functools.cache
def entries() -> tuple[dict[str, Any], ...]:
    """The bank's entries, read on first use."""
    if not BANK.exists():
        return ()
    with open(BANK, encoding="utf-8") as f:
        return tuple(json.loads(line) for line in f if line.strip())


def matching(lo: int, hi: int, robots: int, ricochet: str, edition: str = "2013") -> list[dict[str, Any]]:
    return [e for e in entries() if lo <= e["length"] <= hi and e["robots"] == robots
            and e["ricochet"] == ricochet and e["edition"] == edition]


def solution_of(entry: dict[str, Any]) -> list[Move]:
    return [Move.from_json(m) for m in entry["solution"]]


def search(min_length: int, robots: int, ricochet: str, seed: str, seconds: float,
           edition: str = "2013", threads: int = 2) -> Iterator[dict[str, Any]]:
    """Yield bank entries (optimal length >= min_length) found within `seconds`.

    Random fair positions, solved in batches over threads: long optima are rare
    (about 1 in 13,000 positions reaches 18 moves) but a position costs well
    under a millisecond, so sampling outpaces climbing."""
    from .generate import difficulty

    rng = random.Random(f"bank:{seed}:{min_length}:{robots}:{ricochet}:{edition}")
    specs = list(all_boards(edition))
    boards = {}
    deadline = time.monotonic() + seconds
    seen: set[str] = {e["code"] for e in entries()}
    while time.monotonic() < deadline:
        batch = []
        for _ in range(2000):
            spec = rng.choice(specs)
            if spec not in boards:
                b = real_board(spec)
                boards[spec] = (b, [(x, y) for y in range(16) for x in range(16) if (x, y) not in b.blocked
                                    and b.diagonal_at((x, y)) is None and b.target_at((x, y)) is None])
            board, free = boards[spec]
            t = rng.choice(board.targets)
            batch.append(Puzzle.create(board, dict(zip(ROBOT_COLOURS[:robots], rng.sample(free, robots))),
                                       Goal(t.cell, t.colour), Rules(ricochet)))
        for p, answer in zip(batch, solve_many(batch, threads=threads, time_budget=60.0)):
            if answer.length is None or answer.length < min_length or answer.round.void or p.code() in seen:
                continue
            seen.add(p.code())
            yield {"code": p.code(), "length": answer.length, "robots": robots, "ricochet": ricochet,
                   "edition": edition, "solution": moves_to_json(answer.moves),
                   "difficulty": difficulty(p, answer, time_budget=60.0)}
