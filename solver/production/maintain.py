"""Maintainers' tools: growing the bank and looking for records.  Never on the run-time path.

`ricochet bank` runs these for hours in a checkout and writes the bank file
given to it; the service only reads the bank (`solver.production.bank`).
Random fair positions and climbs toward longer optima, walks from the bank's
own puzzles, and the retrograde analysis of one board and target; every find
is proven by the solver before it is written.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from solver.model.board import Board, Cell, all_boards, real_board
from solver.model.geometry import ROBOT_COLOURS
from solver.model.moves import check, round_of
from solver.model.puzzle import Goal, Move, Puzzle, Ricochet, Rules, moves_to_json
from solver.production import bank
from solver.production.difficulty import difficulty
from solver.production.walk import walk
from solver.search.solution import Solution
from solver.search.solve import exhaustive, solve_many, upper_bound

MAX_BANK_LENGTH = 40  # the climb never searches deeper than this
BANK_STATE_BUDGET = 3 << 30  # bytes: deep 5-robot positions outgrow the solver's default 1 GiB
WALK_STEPS = 12  # steps from one bank puzzle before the walk starts from another


PER_GOAL = 3  # below CLUSTER_FROM moves, at most this many entries share a board and a target
CLUSTER_FROM = 19  # from this length on, long puzzles cluster: no cap per board and target
Spot = tuple[str | None, Cell, int]  # a board's spec (None: a custom board), a target's cell, the robots


class Variety:
    """Which new entries the bank takes: a new position whose optimal solution no
    entry on the same board and target (with as many robots) shares, and, below
    CLUSTER_FROM moves, at most PER_GOAL entries per board, target and robot
    count.  Puzzles of 19 moves and more are so rare that they come in clusters
    (most lie one or two robot moves from another), so there each distinct
    solution counts, unless `spread` caps the entries per board, target and
    robot count at every length (a run that looks for new boards and targets
    rather than more of the same)."""

    def __init__(self, existing: Iterable[dict[str, Any]] = (), spread: int | None = None) -> None:
        self.codes: set[str] = set()
        self.per_goal: Counter[Spot] = Counter()
        self.any_length: Counter[Spot] = Counter()
        self.solutions: set[tuple[str | None, Cell, int, str]] = set()
        self.spread = spread
        for e in existing:
            self.add(Puzzle.from_code(e["code"]), e["length"], e["solution"])

    @staticmethod
    def _goal(p: Puzzle) -> Spot:
        return p.board.spec, p.goal.cell, len(p.robots)

    @classmethod
    def _keys(cls, p: Puzzle, solution: list[dict[str, str]]
              ) -> tuple[Spot, tuple[str | None, Cell, int, str]]:
        goal = cls._goal(p)
        return goal, (*goal, json.dumps(solution))

    def admits(self, p: Puzzle, length: int, solution: list[dict[str, str]]) -> bool:
        goal, route = self._keys(p, solution)
        if p.code() in self.codes or route in self.solutions or self.full(p):
            return False
        return length >= CLUSTER_FROM or self.per_goal[goal] < PER_GOAL

    def full(self, p: Puzzle) -> bool:
        """Whether p's board, target and robot count hold all that `spread` allows."""
        return self.spread is not None and self.any_length[self._goal(p)] >= self.spread

    def add(self, p: Puzzle, length: int, solution: list[dict[str, str]]) -> None:
        goal, route = self._keys(p, solution)
        self.codes.add(p.code())
        self.solutions.add(route)
        self.any_length[goal] += 1
        if length < CLUSTER_FROM:
            self.per_goal[goal] += 1


def _banker(min_length: int, robots: int, ricochet: Ricochet, edition: str, variety: Variety
            ) -> Callable[..., dict[str, Any] | None]:
    """The bank's gate for one search: a proven position at least `floor` moves long
    that the Variety rule admits becomes an entry (and counts for the next ones)."""

    def bankable(p: Puzzle, answer: Solution, floor: int = min_length) -> dict[str, Any] | None:
        if answer.length is None or answer.length < floor or answer.round.void:
            return None
        solution = moves_to_json(answer.moves)
        if not variety.admits(p, answer.length, solution):
            return None
        variety.add(p, answer.length, solution)
        return _entry(p, answer, robots, ricochet, edition)

    return bankable


def search(min_length: int, robots: int, ricochet: Ricochet, seed: str, seconds: float,
           edition: str = "2013", threads: int = 2, climb_steps: int = 150,
           walk: bool = False, spread: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield bank entries (optimal length >= min_length) found within `seconds`.

    Random fair positions, solved in batches over threads: long optima are rare
    (about 1 in 13,000 positions reaches 18 moves) but a position costs about a
    millisecond on average, so sampling finds the first long puzzle of a region.
    From each find it then climbs: one robot moved to another free cell at a
    time, kept when the optimum does not get shorter, so that the neighbourhood
    of a long puzzle yields longer ones.  The Variety rule keeps the bank varied;
    with `spread`, a climb leaves a board and target once it holds that many
    entries, and no batch position on a full one is climbed from.

    With `walk`, it instead walks away from the bank's own puzzles of at least
    min_length moves: the quickest way to the longest lengths once the bank
    holds a few."""
    rng = random.Random(f"bank:{seed}:{min_length}:{robots}:{ricochet}:{edition}")
    specs = list(all_boards(edition))
    boards: dict[str, tuple[Board, list[Cell]]] = {}
    deadline = time.monotonic() + seconds
    variety = Variety(bank.entries(), spread)
    bankable = _banker(min_length, robots, ricochet, edition, variety)
    colours = ROBOT_COLOURS[:robots]

    def free_cells(spec: str) -> tuple[Board, list[Cell]]:
        if spec not in boards:
            b = real_board(spec)
            boards[spec] = (b, b.start_cells())
        return boards[spec]

    if walk:
        yield from _walks(min_length, robots, ricochet, edition, deadline, rng, bankable)
        return
    while time.monotonic() < deadline:
        batch = []
        for _ in range(2000):
            board, free = free_cells(rng.choice(specs))
            t = rng.choice(board.targets)
            batch.append(Puzzle.create(board, dict(zip(colours, rng.sample(free, robots))),
                                       Goal(t.cell, t.colour), Rules(ricochet=ricochet)))
        # Positions a finisher can solve alone (or after one helper move) in fewer
        # moves than a climb starts from are certainly too short: no full search.
        batch = [p for p in batch if (ub := upper_bound(p)) is None or ub >= min_length - CLIMB_FROM_BELOW]
        finds = []
        for p, answer in zip(batch, solve_many(batch, threads=threads, time_budget=60.0)):
            if (entry := bankable(p, answer)) is not None:
                yield entry
            if answer.length is not None and answer.length >= min_length - CLIMB_FROM_BELOW \
                    and not variety.full(p):
                finds.append((p, answer.length))
        # Climb from the batch's longest positions, the finds first: long puzzles
        # lie near other long ones.
        finds.sort(key=lambda f: -f[1])
        for p, length in finds[:CLIMBS_PER_BATCH]:
            if time.monotonic() >= deadline:
                return
            yield from _climb(p, length, climb_steps, deadline, rng, bankable, variety)


CLIMB_FROM_BELOW = 3  # climbs start from positions up to this many moves short of min_length
CLIMBS_PER_BATCH = 4
WALK_KEEPS_FROM = 18  # a walk banks the positions it solves from this length on, even below min_length


def _walks(min_length: int, robots: int, ricochet: Ricochet, edition: str, deadline: float, rng: random.Random,
           bankable: Callable[..., dict[str, Any] | None]) -> Iterator[dict[str, Any]]:
    """Walk from the bank's puzzles of at least min_length moves, staying among
    positions at least that long; every bankable position met joins the
    starting points.  Longer starting points are picked more often (twice as
    often per extra move)."""
    frontier = [(Puzzle.from_code(e["code"]), e["length"])
                for e in bank.matching(min_length, MAX_BANK_LENGTH, robots, ricochet, edition)]
    if robots == 5:
        fours = sorted(bank.matching(min_length, min_length + 2, 4, ricochet, edition), key=lambda e: e["code"])
        frontier += [(bank.with_fifth_robot(Puzzle.from_code(e["code"]), rng), e["length"]) for e in fours]
    while frontier and time.monotonic() < deadline:
        start, _ = rng.choices(frontier, weights=[2.0 ** (n - min_length) for _, n in frontier])[0]
        for p, answer in walk(start, rng, steps=WALK_STEPS, floor=min_length, depth=MAX_BANK_LENGTH,
                              deadline=deadline, state_budget=BANK_STATE_BUDGET):
            # Solved anyway: a shorter position is banked too when long enough.
            if answer is not None and (entry := bankable(p, answer, min(min_length, WALK_KEEPS_FROM))):
                yield entry
                if answer.length is not None and answer.length >= min_length:  # banked: it has one
                    frontier.append((p, answer.length))


def _climb(start: Puzzle, length: int, steps: int, deadline: float, rng: random.Random,
           bankable: Callable[[Puzzle, Solution], dict[str, Any] | None], variety: Variety
           ) -> Iterator[dict[str, Any]]:
    """Hill-climb from a long puzzle: move one robot at a time, keep a move that
    does not shorten the optimum, yield every bankable position met, until the
    board and target hold all the Variety rule allows."""
    for p, answer in walk(start, rng, steps=steps, floor=length, climb=True, depth=MAX_BANK_LENGTH,
                          deadline=deadline, state_budget=BANK_STATE_BUDGET):
        if answer is not None and answer.length is not None and (entry := bankable(p, answer)) is not None:
            yield entry
        if variety.full(start):
            return


# Positions the retrograde analysis hands back: whole lengths, longest first, so
# that the 23-move layer of the README's board (1.7 million) fits: about 4 kB of
# Python objects each at that length, beside the 4 GiB table (9 GiB at the peak).
EXHAUSTIVE_LIMIT = 2_000_000


def exhaustive_search(board: Board, goal: Goal, min_length: int, ricochet: Ricochet, seed: str, seconds: float,
                      edition: str = "2013", threads: int = 2, per_length: int = 20) -> Iterator[dict[str, Any]]:
    """Yield bank entries for one board and goal from its retrograde analysis: the
    optimal length of every position at once (solver.search.solve.exhaustive, under the
    plain rule, a lower bound under the ricochet rule).  Fair positions of at least
    `min_length` moves are proven by the solver under the rules in force, longest
    first and one per plain-rule solution (positions that differ only where a robot
    stands idle share one), in an order drawn from `seed`.  At most `per_length`
    entries per length for this board and goal, counting those banked before."""
    rng = random.Random(f"bank-exhaustive:{seed}:{board.spec}:{goal}:{min_length}:{ricochet}")
    deadline = time.monotonic() + seconds
    bankable = _banker(min_length, 4, ricochet, edition, Variety(bank.entries()))
    colours = ROBOT_COLOURS[:4]
    analysis = exhaustive(board, colours, goal, min_length=min_length, limit=EXHAUSTIVE_LIMIT, threads=threads)
    starts = set(board.start_cells())
    groups: dict[int, dict[tuple[Move, ...], dict[str, Cell]]] = {}
    for n, robots, path in analysis.positions:
        if all(cell in starts for cell in robots.values()):
            groups.setdefault(n, {}).setdefault(tuple(path), robots)
    banked = Counter(e["length"] for e in bank.matching(min_length, MAX_BANK_LENGTH, 4, ricochet, edition)
                     if (p := Puzzle.from_code(e["code"])).board == board and p.goal.cell == goal.cell)
    for n in sorted(groups, reverse=True):
        todo = list(groups[n].values())
        rng.shuffle(todo)
        while todo and time.monotonic() < deadline and banked[n] < per_length:
            batch = [Puzzle.create(board, robots, goal, Rules(ricochet=ricochet)) for robots in todo[:threads]]
            del todo[:threads]
            for p, answer in zip(batch, solve_many(batch, threads=threads, max_depth=MAX_BANK_LENGTH,
                                                   time_budget=300.0, state_budget=BANK_STATE_BUDGET)):
                # Under the ricochet rule a position may prove longer than its plain length.
                if banked[answer.length or 0] < per_length and (entry := bankable(p, answer)) is not None:
                    banked[answer.length] += 1
                    yield entry


def _entry(p: Puzzle, answer: Solution, robots: int, ricochet: Ricochet, edition: str) -> dict[str, Any]:
    return {"code": p.code(), "length": answer.length, "robots": robots, "ricochet": ricochet,
            "edition": edition, "solution": moves_to_json(answer.moves),
            "difficulty": difficulty(p, answer, time_budget=60.0)}


def merge(paths: list[Path], into: Path) -> list[dict[str, Any]]:
    """Append to the bank file `into` (in a checkout: solver/production/data/bank.jsonl)
    the entries of other bank files (from `ricochet bank --output`, run in
    parallel) that are new, fair, replay to their length and pass the Variety
    rule.  The bank's existing lines never move.  Returns those added."""
    existing = [json.loads(line) for line in Path(into).read_text(encoding="utf-8").splitlines() if line.strip()]
    variety = Variety(existing)
    added = []
    for path in paths:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            e = json.loads(line)
            p = Puzzle.from_code(e["code"])
            if not variety.admits(p, e["length"], e["solution"]) or round_of(p).void:
                continue
            verdict = check(p, bank.solution_of(e))
            if not (verdict.legal and verdict.solved and verdict.length == e["length"]):
                raise ValueError(f"{path}: {e['code']} does not replay to {e['length']} moves")
            variety.add(p, e["length"], e["solution"])
            added.append(e)
    with open(into, "a", encoding="utf-8") as f:
        for e in added:
            f.write(json.dumps(e) + "\n")
    bank.entries.cache_clear()
    return added
