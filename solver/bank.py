"""The bank: verified long puzzles, too rare to find inside a request.

Lines of `solver/data/bank.jsonl`, each a puzzle code with its proven optimal
length and one optimal solution.  `ricochet bank` grows it: random fair
positions and climbs on one target toward longer optima, every find proven by
the solver before it is written.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .board import Board, Cell, all_boards, real_board
from .geometry import ROBOT_COLOURS
from .puzzle import Goal, Move, Puzzle, Rules, moves_to_json
from .solution import Solution
from .solve import solve, solve_many, upper_bound

BANK = Path(__file__).parent / "data" / "bank.jsonl"
MAX_BANK_LENGTH = 40  # the climb never searches deeper than this


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


PER_GOAL = 3  # at most this many entries share a board and a target


def _goals_in_bank() -> Counter[tuple[str, Cell]]:
    """How many entries share each board and target (at most PER_GOAL)."""
    goals = (Puzzle.from_code(e["code"]) for e in entries())
    return Counter((p.board.spec, p.goal.cell) for p in goals)


def search(min_length: int, robots: int, ricochet: str, seed: str, seconds: float,
           edition: str = "2013", threads: int = 2, climb_steps: int = 40,
           walk: bool = False) -> Iterator[dict[str, Any]]:
    """Yield bank entries (optimal length >= min_length) found within `seconds`.

    Random fair positions, solved in batches over threads: long optima are rare
    (about 1 in 13,000 positions reaches 18 moves) but a position costs about a
    millisecond on average, so sampling finds the first long puzzle of a region.
    From each find it then climbs: one robot moved to another free cell at a
    time, kept when the optimum does not get shorter, so that the neighbourhood
    of a long puzzle yields longer ones.  At most PER_GOAL entries share a board
    and a target, so the bank stays varied.

    With `walk`, it instead asks the generator for puzzles of at least
    min_length moves, which walks away from the bank's own long puzzles: the
    quickest way to the longest lengths once the bank holds a few."""
    rng = random.Random(f"bank:{seed}:{min_length}:{robots}:{ricochet}:{edition}")
    specs = list(all_boards(edition))
    boards: dict[str, tuple[Board, list[Cell]]] = {}
    deadline = time.monotonic() + seconds
    seen: set[str] = {e["code"] for e in entries()}
    per_goal = _goals_in_bank()
    colours = ROBOT_COLOURS[:robots]

    def free_cells(spec: str) -> tuple[Board, list[Cell]]:
        if spec not in boards:
            b = real_board(spec)
            boards[spec] = (b, b.start_cells())
        return boards[spec]

    def bankable(p: Puzzle, answer: Solution) -> dict[str, Any] | None:
        if answer.length is None or answer.length < min_length or answer.round.void or p.code() in seen:
            return None
        if per_goal[(p.board.spec, p.goal.cell)] >= PER_GOAL:
            return None
        seen.add(p.code())
        per_goal[(p.board.spec, p.goal.cell)] += 1
        return _entry(p, answer, robots, ricochet, edition)

    if walk:
        yield from _walks(min_length, robots, ricochet, seed, edition, deadline, bankable)
        return
    while time.monotonic() < deadline:
        batch = []
        for _ in range(2000):
            board, free = free_cells(rng.choice(specs))
            t = rng.choice(board.targets)
            batch.append(Puzzle.create(board, dict(zip(colours, rng.sample(free, robots))),
                                       Goal(t.cell, t.colour), Rules(ricochet)))
        # Positions a finisher can solve alone (or after one helper move) in fewer
        # moves than wanted are certainly too short: no full search for them.
        batch = [p for p in batch if (ub := upper_bound(p)) is None or ub >= min_length]
        finds = []
        for p, answer in zip(batch, solve_many(batch, threads=threads, time_budget=60.0)):
            if (entry := bankable(p, answer)) is not None:
                finds.append((p, answer.length))
                yield entry
        for p, length in finds:
            if time.monotonic() >= deadline:
                return
            yield from _climb(p, length, free_cells(p.board.spec)[1], climb_steps, deadline, rng, bankable)


def _walks(min_length: int, robots: int, ricochet: str, seed: str, edition: str, deadline: float,
           bankable: Callable[[Puzzle, Solution], dict[str, Any] | None]) -> Iterator[dict[str, Any]]:
    from .generate import MAX_LENGTH, NoPuzzleFound, generate

    for i in itertools.count():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        try:
            g = generate(min_length=min_length, max_length=MAX_LENGTH, board=f"random-{edition}", robots=robots,
                         rules=Rules(ricochet), seed=f"bank-walk:{seed}:{i}", time_budget=remaining)
        except NoPuzzleFound:
            return
        if (entry := bankable(g.puzzle, g.solution)) is not None:
            yield entry


def _climb(start: Puzzle, length: int, free: list[Cell], steps: int, deadline: float, rng: random.Random,
           bankable: Callable[[Puzzle, Solution], dict[str, Any] | None]) -> Iterator[dict[str, Any]]:
    """Hill-climb from a long puzzle: move one robot at a time, keep a move that
    does not shorten the optimum, yield every bankable position met."""
    current, best = dict(start.robots), length
    colours = start.colours
    for _ in range(steps):
        if time.monotonic() >= deadline:
            return
        placement = dict(current)
        taken = set(placement.values())
        placement[rng.choice(colours)] = rng.choice([c for c in free if c not in taken])
        p = Puzzle.create(start.board, placement, start.goal, start.rules)
        answer = solve(p, max_depth=MAX_BANK_LENGTH, time_budget=60.0)
        if answer.length is None:
            continue
        if (entry := bankable(p, answer)) is not None:
            yield entry
        if answer.length >= best:
            current, best = placement, answer.length


def _entry(p: Puzzle, answer: Solution, robots: int, ricochet: str, edition: str) -> dict[str, Any]:
    from .generate import difficulty

    return {"code": p.code(), "length": answer.length, "robots": robots, "ricochet": ricochet,
            "edition": edition, "solution": moves_to_json(answer.moves),
            "difficulty": difficulty(p, answer, time_budget=60.0)}


def merge(paths: list[Path]) -> list[dict[str, Any]]:
    """Append the entries of other bank files (from `ricochet bank --output`, run in
    parallel) that are new, fair and replay to their length; at most PER_GOAL per
    board and target.  The bank's existing lines never move.  Returns those added."""
    from .rules import check, round_of

    have = {e["code"] for e in entries()}
    per_goal = _goals_in_bank()
    added = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            e = json.loads(line)
            p = Puzzle.from_code(e["code"])
            goal = (p.board.spec, p.goal.cell)
            if e["code"] in have or per_goal[goal] >= PER_GOAL or round_of(p).void:
                continue
            verdict = check(p, solution_of(e))
            if not (verdict.legal and verdict.solved and verdict.length == e["length"]):
                raise ValueError(f"{path}: {e['code']} does not replay to {e['length']} moves")
            have.add(e["code"])
            per_goal[goal] += 1
            added.append(e)
    with open(BANK, "a", encoding="utf-8") as f:
        for e in added:
            f.write(json.dumps(e) + "\n")
    entries.cache_clear()
    return added
