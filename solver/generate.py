"""The generator: puzzles of an exact optimal length, and their difficulty report.

Short lengths come from random placements (every target of a placement is
rated at once); longer ones from hill-climbing over robot placements toward
longer optima, with restarts.  Every returned puzzle's length is proven by the
solver; the same seed and arguments give the same puzzle on every machine.
"""

from __future__ import annotations

import functools
import json
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .board import Board, random_board_spec, real_board
from .errors import InvalidInput
from .geometry import ROBOT_COLOURS
from .puzzle import Goal, Puzzle, Rules
from .rules import round_of
from .solution import Solution
from .solve import solution_facts, solve, upper_bound

MAX_LENGTH = 30
LONG = 12  # from this length on, climb on one target at a time
BANK_FROM = 21  # from this length on, serve from the bank when it holds a match
GRADES = ("beginner", "easy", "medium", "hard", "expert", "extreme")
GRADE_FLOORS = (0, 30, 50, 75, 100, 130)  # score at which each grade starts


class NoPuzzleFound(Exception):
    """The search gave up: the request is valid but no fitting puzzle was found in time."""


@dataclass
class Generated:
    puzzle: Puzzle
    solution: Solution
    difficulty: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """A FORMATS.md puzzle with its solution and difficulty report beside it."""
        return {**self.puzzle.to_json(), "code": self.puzzle.code(), "optimal_length": self.solution.length,
                "solution": [m.to_json() for m in self.solution.moves], "difficulty": self.difficulty}


def difficulty(puzzle: Puzzle, solution: Solution, *, time_budget: float | None = 5.0) -> dict[str, Any]:
    """The difficulty report, its score and grade.

    score = 10 x optimal length + 6 x (fewest robots moved - 1) + 3 x fewest robot
    switches + 4 x (optimal length - lone-robot bound) - 2 x log2(optimal solutions);
    grades start at scores 0 / 30 / 50 / 75 / 100 / 130."""
    length = solution.length or 0
    facts = solution_facts(puzzle, length, cap=100_000, time_budget=time_budget) if length else None
    active = puzzle.goal.colour
    helper_moves = sum(1 for m in solution.moves if m.robot != (active or solution.finisher))
    lone = solution.stats.get("lone_bound")
    report: dict[str, Any] = {
        "optimal_length": length,
        "fewest_robots_moved": facts["fewest_robots"] if facts else len(solution.robots_moved),
        "helper_moves": helper_moves,
        "robot_switches": facts["fewest_switches"] if facts else None,
        "optimal_solutions": facts["solutions"] if facts else None,
        "optimal_solutions_capped": facts["capped"] if facts else None,
        "lone_robot_bound": lone,
        "bound_gap": length - lone if lone is not None else None,
        "straight_route": solution.round.void,
    }
    solutions = facts["solutions"] if facts else 1
    score = (10 * length + 6 * (report["fewest_robots_moved"] - 1) + 3 * (report["robot_switches"] or 0)
             + 4 * (report["bound_gap"] or 0) - 2 * math.log2(max(solutions, 1)))
    report["score"] = round(score, 1)
    report["percentile"] = percentile(length, len(puzzle.robots), puzzle.rules.ricochet)
    report["grade"] = next(g for g, floor in reversed(list(zip(GRADES, GRADE_FLOORS))) if score >= floor) \
        if score >= 0 else GRADES[0]
    return report


@functools.cache
def _distribution() -> dict[str, dict[str, int]]:
    path = Path(__file__).parent / "data" / "distribution.json"
    return json.loads(path.read_text())["lengths"] if path.exists() else {}


def percentile(length: int, robots: int, ricochet: str) -> float | None:
    """The share (%) of random fair positions, with as many robots and the same
    ricochet rule, whose optimal length is shorter (docs/distribution.md)."""
    counts = _distribution().get(f"{robots}-{ricochet}")
    if not counts:
        return None
    total = sum(counts.values())
    shorter = sum(n for k, n in counts.items() if int(k) < length)
    return round(100 * shorter / total, 2)


def generate(
    length: int | None = None,
    *,
    min_length: int | None = None,
    max_length: int | None = None,
    board: str | Board = "random-2013",
    robots: int = 4,
    target: str = "any",
    rules: Rules | None = None,
    seed: int | str = 0,
    min_robots_moved: int = 0,
    max_evaluations: int = 20_000,
    time_budget: float | None = None,
    bank_seeds: bool = True,
) -> Generated:
    """A puzzle whose optimal length is `length` (or within min..max), proven by the solver.

    From LONG moves on, the search starts from verified long puzzles of the bank
    (when it holds some near the wanted length) and walks away from them one robot
    at a time: a neighbour of a 16-move puzzle is 15 or 16 moves long far more
    often than a random position is.  The walk depends on the bank shipped with
    the package; `bank_seeds=False` searches from random positions only.

    Raises NoPuzzleFound when `max_evaluations` placements or `time_budget`
    seconds pass without a fitting puzzle."""
    lo, hi = _length_range(length, min_length, max_length)
    if robots not in (4, 5):
        raise InvalidInput("robots", "must be 4 or 5")
    rules = rules or Rules()
    rng = random.Random(f"ricochet-generate:{seed}:{lo}:{hi}:{board if isinstance(board, str) else id(board)}:"
                        f"{robots}:{target}:{rules.ricochet}:{rules.vortex_sightline}:{min_robots_moved}")
    banked = _from_bank(lo, hi, board, robots, target, rules, min_robots_moved, rng)
    if banked is not None:
        return banked
    if lo >= BANK_FROM and board in ("random-2013", "random-1999") and target == "any":
        from . import bank

        known = bank.matching(1, MAX_LENGTH, robots, rules.ricochet, _edition(board))
        longest = max((e["length"] for e in known), default=None)
        raise NoPuzzleFound(f"no puzzle of {lo}..{hi} moves is known for {robots} robots on {board} boards "
                            f"(the longest banked is {longest}); from {BANK_FROM} moves on they come only from "
                            "the bank, which `ricochet bank` grows")
    colours = ROBOT_COLOURS[:robots]
    restart_every = 60 + 20 * hi
    evaluations = 0
    deadline = time.monotonic() + time_budget if time_budget else math.inf
    if lo >= LONG and bank_seeds:
        found, evaluations = _walk_from_bank(lo, hi, board, robots, target, rules, min_robots_moved, rng,
                                             max_evaluations, deadline)
        if found is not None:
            return found
    while evaluations < max_evaluations and time.monotonic() < deadline:
        b = _pick_board(board, rng)
        free = b.start_cells()
        goals = _goals(b, target, robots)
        placement = dict(zip(colours, rng.sample(free, robots)))
        if lo >= LONG:
            # Long optima are rare: climb on one target, keeping robot moves that
            # do not shorten its optimum.
            goal = rng.choice(goals)
            best = -1
            for _ in range(restart_every):
                if time.monotonic() >= deadline:
                    break
                evaluations += 1
                p = Puzzle.create(b, placement, goal, rules)
                if best >= 0 and (ub := upper_bound(p)) is not None and ub < min(best, lo):
                    n = -1  # certainly shorter than the wanted length and the best so far
                else:
                    answer = solve(p, max_depth=hi, time_budget=60.0)
                    n = answer.length if answer.length is not None else \
                        (hi + 1 if answer.status == "depth_limit" else -1)
                    found = _fits(p, answer, lo, hi, rules, min_robots_moved)
                    if found is not None:
                        return found
                if best <= n <= hi:
                    best, current = n, dict(placement)
                else:
                    placement = dict(current) if best >= 0 else placement
                _mutate(placement, free, colours, rng)
            continue
        best_score = -1
        for _ in range(restart_every):
            if time.monotonic() >= deadline:
                break
            evaluations += 1
            found, score = _evaluate(b, placement, goals, rules, lo, hi, min_robots_moved, rng)
            if found is not None:
                return found
            # Hill-climb toward longer optima: keep a move unless it made things worse.
            if score >= best_score or rng.random() < 0.05:
                best_score, current = score, dict(placement)
            else:
                placement = dict(current)
            _mutate(placement, free, colours, rng)
    raise NoPuzzleFound(f"no puzzle of optimal length {lo}..{hi} found within {evaluations} placements"
                        + (f" and {time_budget:g} s" if time_budget else "")
                        + "; long lengths are served from the bank, or ask for a pack (POST /v1/packs)")


def _from_bank(lo: int, hi: int, board: str | Board, robots: int, target: str, rules: Rules,
               min_robots_moved: int, rng: random.Random) -> Generated | None:
    """A verified long puzzle from the bank, chosen by the seed, when one fits."""
    from . import bank

    if lo < BANK_FROM or board not in ("random-2013", "random-1999") or target != "any" or min_robots_moved:
        return None
    if rules.vortex_sightline:
        return None
    found = bank.matching(lo, hi, robots, rules.ricochet, _edition(board))
    if not found:
        return None
    return from_bank_entry(rng.choice(sorted(found, key=lambda e: e["code"])))


SEED_SLACK = 2  # bank puzzles up to this many moves longer than wanted seed the walk
WALK_STEPS = 12  # steps from one bank puzzle before the walk starts from another


def _walk_from_bank(lo: int, hi: int, board: str | Board, robots: int, target: str, rules: Rules,
                    min_robots_moved: int, rng: random.Random, max_evaluations: int,
                    deadline: float) -> tuple[Generated | None, int]:
    """Walk from long bank puzzles, one robot moved to another free cell per step,
    staying among positions at least `lo` moves long; the first fair position of
    length lo..hi that is not itself in the bank is the answer."""
    from . import bank

    if board not in ("random-2013", "random-1999") or target != "any" or rules.vortex_sightline:
        return None, 0
    def near(n: int) -> list[dict[str, Any]]:
        """Bank entries for n robots from lo to SEED_SLACK moves beyond hi."""
        return sorted(bank.matching(lo, hi + SEED_SLACK, n, rules.ricochet, _edition(board)), key=lambda e: e["code"])

    seeds = [Puzzle.from_code(e["code"]) for e in near(robots)]
    if robots == 5:
        seeds += [p for p, _ in bank.with_fifth_robot(near(4), rng)]
    if not seeds:
        return None, 0
    banked = {e["code"] for e in bank.entries()}
    evaluations = 0
    while evaluations < max_evaluations and time.monotonic() < deadline:
        start = rng.choice(seeds)
        free = start.board.start_cells()
        current = dict(start.robots)
        for _ in range(WALK_STEPS):
            if evaluations >= max_evaluations or time.monotonic() >= deadline:
                break
            evaluations += 1
            placement = dict(current)
            _mutate(placement, free, start.colours, rng)
            p = Puzzle.create(start.board, placement, start.goal, rules)
            if (ub := upper_bound(p)) is not None and ub < lo:
                continue  # certainly too short, and the walk stays among long positions
            # Solved no deeper than wanted: a longer position only needs proving longer.
            answer = solve(p, max_depth=hi, time_budget=60.0)
            if p.code() not in banked and (found := _fits(p, answer, lo, hi, rules, min_robots_moved)):
                return found, evaluations
            if answer.status == "depth_limit" or (answer.length is not None and answer.length >= lo):
                current = placement
    return None, evaluations


def from_bank_entry(entry: dict[str, Any]) -> Generated:
    """A bank entry as a generated puzzle (its optimum was proven when it was banked)."""
    from . import bank

    p = Puzzle.from_code(entry["code"])
    solution = Solution("optimal", bank.solution_of(entry), entry["length"], round_of(p), {"source": "bank"})
    return Generated(p, solution, entry["difficulty"])


def _mutate(placement: dict, free: list, colours: tuple[str, ...], rng: random.Random) -> None:
    """Move one robot to a random free cell."""
    taken = set(placement.values())
    placement[rng.choice(colours)] = rng.choice([f for f in free if f not in taken])


def _length_range(length: int | None, min_length: int | None, max_length: int | None) -> tuple[int, int]:
    if length is not None:
        if min_length is not None or max_length is not None:
            raise InvalidInput("length", "give either length or min_length/max_length, not both")
        min_length = max_length = length
    if min_length is None or max_length is None:
        raise InvalidInput("length", "a length (or min_length and max_length) is required")
    for name, v in (("min_length", min_length), ("max_length", max_length)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= MAX_LENGTH:
            raise InvalidInput(name, f"must be an integer from 1 to {MAX_LENGTH}")
    if min_length > max_length:
        raise InvalidInput("min_length", "must not exceed max_length")
    return min_length, max_length


def _edition(board: str | Board) -> str:
    """The edition of a random-board request (random-beginner boards are 2013 ones)."""
    return "1999" if board == "random-1999" else "2013"


def _pick_board(board: str | Board, rng: random.Random) -> Board:
    if isinstance(board, Board):
        return board
    if board in ("random-2013", "random-1999", "random-beginner"):
        return real_board(random_board_spec(rng, _edition(board), barriers=board != "random-beginner"))
    return real_board(board)


def _goals(board: Board, target: str, robots: int) -> list[Goal]:
    if target == "any":
        picked = list(board.targets)
    elif target == "vortex":
        picked = [t for t in board.targets if t.is_vortex]
    elif target in ROBOT_COLOURS:
        picked = [t for t in board.targets if t.colour == target]
    else:
        raise InvalidInput("target", "must be a colour, 'vortex' or 'any'")
    if not picked:
        raise InvalidInput("target", f"the board has no {target} target")
    return [Goal(t.cell, t.colour) for t in picked]


def _evaluate(board: Board, placement: dict, goals: list[Goal], rules: Rules, lo: int, hi: int,
              min_robots_moved: int, rng: random.Random) -> tuple[Generated | None, int]:
    """Solve every goal for this placement; a fitting, fair one is returned.
    The score (longest optimum, capped at hi + 1) guides the climb."""
    order = list(goals)
    rng.shuffle(order)
    score = 0
    for goal in order:
        p = Puzzle.create(board, placement, goal, rules)
        answer = solve(p, max_depth=hi, time_budget=60.0)
        if answer.status == "depth_limit":
            score = max(score, hi + 1)
            continue
        if answer.status != "optimal":
            continue
        score = max(score, answer.length)
        found = _fits(p, answer, lo, hi, rules, min_robots_moved)
        if found is not None:
            return found, score
    return None, score


def _fits(p: Puzzle, answer: Solution, lo: int, hi: int, rules: Rules, min_robots_moved: int) -> Generated | None:
    """The generated puzzle, if its proven optimum is in range and the round is fair."""
    if answer.length is None or not lo <= answer.length <= hi or answer.round.void:
        return None
    if rules.ricochet == "none" and round_of(p).void:
        return None
    report = difficulty(p, answer)
    if report["fewest_robots_moved"] < min_robots_moved:
        return None
    return Generated(p, answer, report)
