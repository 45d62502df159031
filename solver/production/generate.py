"""The generator: puzzles of an exact optimal length, and where they come from.

In order: a pool (proven, rated puzzles from a whole-board analysis) when the
caller hands over a pool library and one fits; the bank (from BANK_FROM moves
on); then search.  Short lengths are searched from random placements (every
target of a placement is rated at once); longer ones by walks from long
puzzles of the pools and the bank, then by climbs over robot placements
toward longer optima, with restarts.  Every returned puzzle's length is
proven by the solver; the same seed and arguments (and pool set) give the
same puzzle on every machine.
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solver.errors import InvalidInput
from solver.model.board import Board, BoardKind, Cell, random_board_spec, real_board
from solver.model.geometry import ROBOT_COLOURS
from solver.model.moves import check, round_of
from solver.model.puzzle import Goal, Move, Puzzle, Ricochet, Rules
from solver.production import bank
from solver.production.difficulty import difficulty
from solver.production.generated import Generated, NoPuzzleFound
from solver.production.pools import MIN_LENGTH as POOL_MIN_LENGTH
from solver.production.pools import Library, draw
from solver.production.walk import mutate, walk
from solver.search.solution import Solution
from solver.search.solve import Cancel, solve

MAX_LENGTH = 30
LONG = 12  # from this length on, climb on one target at a time
BANK_FROM = 21  # from this length on, serve from the bank when it holds a match

__all__ = ["BANK_FROM", "Generated", "MAX_LENGTH", "NoPuzzleFound", "generate"]


def generate(
    length: int | None = None,
    *,
    min_length: int | None = None,
    max_length: int | None = None,
    board: str | Board = BoardKind.RANDOM_2013,
    robots: int = 4,
    target: str = "any",
    rules: Rules | None = None,
    seed: int | str = 0,
    min_robots_moved: int = 0,
    max_evaluations: int = 20_000,
    time_budget: float | None = None,
    bank_seeds: bool = True,
    pools: Library | None = None,
    draw_from_pools: bool = True,
    cancel: Cancel | None = None,
) -> Generated:
    """A puzzle whose optimal length is `length` (or within min..max), proven by the solver.

    With `pools` (and `draw_from_pools`), a fitting pool puzzle is drawn first
    (4 robots, any target, standard vortex rule); a pack passes False, using
    pools only to start walks.  From LONG moves on, the search walks from
    verified long puzzles (the bank's and the pools'; for 5 robots, 4-robot ones
    with a fifth robot added) one robot at a time; `bank_seeds=False` searches
    from random positions only (the daily puzzle does: a release changes no day).
    Raises NoPuzzleFound when `max_evaluations` placements or `time_budget`
    seconds pass without a fitting puzzle, or `cancel` is set; `time_budget`
    bounds every solve."""
    lo, hi = _length_range(length, min_length, max_length)
    if hi < 2:
        raise NoPuzzleFound("no fair puzzle has 1 move: a round solved in one move is void")
    if robots not in (4, 5):
        raise InvalidInput("robots", "must be 4 or 5")
    rules = rules or Rules()
    rng = random.Random(f"ricochet-generate:{seed}:{lo}:{hi}:{board if isinstance(board, str) else id(board)}:"
                        f"{robots}:{target}:{rules.ricochet}:{rules.vortex_sightline}:{min_robots_moved}")
    plain = target == "any" and held(rules) and not min_robots_moved and isinstance(board, str)
    known = _known(lo, hi, board, robots, target, rules, min_robots_moved, rng,
                   pools if draw_from_pools and plain else None, seed)
    if known is not None:
        return known
    deadline = time.monotonic() + time_budget if time_budget else math.inf
    evaluations = 0
    if lo >= LONG and bank_seeds and isinstance(board, str) and BoardKind.of(board) is not None and target == "any" \
            and held(rules):
        starts = _walk_starts(lo, hi, board, robots, rules, pools)
        found, evaluations = _walk_from(starts, lo, hi, rules, min_robots_moved, rng, max_evaluations, deadline,
                                        cancel, threads=FIVE_ROBOT_THREADS if robots == 5 else 1)
        if found is not None:
            return found
    search = _Search(board, robots, target, rules, lo, hi, min_robots_moved, rng, deadline, cancel)
    found, evaluations = search.run(evaluations, max_evaluations)
    if found is not None:
        return found
    if cancel is not None and cancel.is_set():
        raise NoPuzzleFound("cancelled")
    raise NoPuzzleFound(f"no puzzle of optimal length {lo}..{hi} found within {evaluations} placements"
                        + (f" and {time_budget:g} s" if time_budget else "")
                        + "; long lengths come from pools and the bank, or ask for a pack (POST /v1/packs)")


def _known(lo: int, hi: int, board: str | Board, robots: int, target: str, rules: Rules, min_robots_moved: int,
           rng: random.Random, pools: Library | None, seed: int | str) -> Generated | None:
    """A proven puzzle drawn from `pools` or the bank, when one fits; None to search.
    Raises NoPuzzleFound for lengths only pools and the bank hold, when they hold none."""
    # Pools hold lengths from MIN_LENGTH on: a range reaching below is searched, so
    # that its short lengths (and the grades they bring) stay as likely as before.
    if pools is not None and isinstance(board, str) and robots == 4 and lo >= POOL_MIN_LENGTH:  # pools: a spec's
        drawn = draw(pools, lo, hi, board=board, robots=robots, ricochet=rules.ricochet,
                     rng=random.Random(f"pool:{seed}:{lo}:{hi}:{board}:{rules.ricochet}"))
        if drawn is not None:
            return drawn
    banked = _from_bank(lo, hi, board, robots, target, rules, min_robots_moved, rng)
    if banked is not None:
        return banked
    if lo >= BANK_FROM and _banked(board) and target == "any":
        known = bank.matching(1, MAX_LENGTH, robots, rules.ricochet, _edition(board))
        longest = max((e["length"] for e in known), default=None)
        raise NoPuzzleFound(f"no puzzle of {lo}..{hi} moves is known for {robots} robots on {board} boards "
                            f"(the longest banked is {longest}); from {BANK_FROM} moves on they come only from "
                            "pools and the bank")
    return None


@dataclass
class _Search:
    """The search from random placements: restarts of a hill climb toward longer
    optima (for long lengths, a climb on one target through the walk)."""

    board: str | Board
    robots: int
    target: str
    rules: Rules
    lo: int
    hi: int
    min_robots_moved: int
    rng: random.Random
    deadline: float
    cancel: Cancel | None

    def live(self) -> bool:
        return time.monotonic() < self.deadline and not (self.cancel is not None and self.cancel.is_set())

    def run(self, evaluations: int, max_evaluations: int) -> tuple[Generated | None, int]:
        """A fitting puzzle (or None) and the placements evaluated so far."""
        colours = ROBOT_COLOURS[:self.robots]
        restart_every = 60 + 20 * self.hi
        while evaluations < max_evaluations and self.live():
            b = _pick_board(self.board, self.rng)
            free = b.start_cells()
            goals = _goals(b, self.target, self.robots)
            placement = dict(zip(colours, self.rng.sample(free, self.robots)))
            climb = self._climb if self.lo >= LONG else self._evaluate
            found, evaluations = climb(b, free, goals, colours, placement, restart_every, evaluations)
            if found is not None:
                return found, evaluations
        return None, evaluations

    def _climb(self, b: Board, free: list[Any], goals: list[Any], colours: tuple[str, ...],
               placement: dict[str, Any], restart_every: int, evaluations: int) -> tuple[Generated | None, int]:
        # Long optima are rare: climb on one target, keeping robot moves that
        # do not shorten its optimum.
        start = Puzzle.create(b, placement, self.rng.choice(goals), self.rules)
        met = 0
        for p, answer in walk(start, self.rng, steps=restart_every - 1, include_start=True, floor=-1,
                              ceiling=self.hi, want=self.lo, climb=True, depth=self.hi, deadline=self.deadline,
                              cancel=self.cancel):
            met += 1
            evaluations += 1
            if answer is not None and \
                    (found := _fits(p, answer, self.lo, self.hi, self.rules, self.min_robots_moved)) is not None:
                return found, evaluations
        if met == restart_every:
            mutate(dict(placement), free, colours, self.rng)  # the draw a climb makes after its last step
        return None, evaluations

    def _evaluate(self, b: Board, free: list[Any], goals: list[Any], colours: tuple[str, ...],
                  placement: dict[str, Any], restart_every: int, evaluations: int) -> tuple[Generated | None, int]:
        best_score = -1
        for _ in range(restart_every):
            if not self.live():
                break
            evaluations += 1
            found, score = _evaluate(b, placement, goals, self.rules, self.lo, self.hi, self.min_robots_moved,
                                     self.rng, self.deadline)
            if found is not None:
                return found, evaluations
            # Hill-climb toward longer optima: keep a move unless it made things worse.
            if score >= best_score or self.rng.random() < 0.05:
                best_score, current = score, dict(placement)
            else:
                placement = dict(current)
            mutate(placement, free, colours, self.rng)
        return None, evaluations


def held(rules: Rules) -> bool:
    """Whether pools and the bank may hold puzzles under `rules`: they keep one
    set per ricochet option, every other option at its default (a puzzle under
    another is searched for)."""
    return rules == Rules(ricochet=rules.ricochet)


def _from_bank(lo: int, hi: int, board: str | Board, robots: int, target: str, rules: Rules,
               min_robots_moved: int, rng: random.Random) -> Generated | None:
    """A verified long puzzle from the bank, chosen by the seed, when one fits."""
    if lo < BANK_FROM or not _banked(board) or target != "any" or min_robots_moved:
        return None
    if not held(rules):
        return None
    found = bank.matching(lo, hi, robots, rules.ricochet, _edition(board))
    if not found:
        return None
    return bank.generated(rng.choice(sorted(found, key=lambda e: e["code"])))


SEED_SLACK = 2  # known puzzles up to this many moves longer than wanted start the walk
WALK_STEPS = 12  # steps from one start before the walk starts from another
POOL_STARTS = 200  # pool puzzles per length that may start a walk
# A 5-robot proof of 16-20 moves takes seconds to a minute: its A* runs on both cores
# (solve(..., threads=2)).  Two walks side by side, one thread each, did worse: the
# answer must be the lower-numbered walk's (so that a seed keeps its puzzle), and
# waiting for it wasted the other core.  19 moves, seeds 0-11: median 21.5 s this
# way in one run and 14.4 s in a later one (the machine's speed varies; README);
# 28-74 s for seeds 0-3 the other way, near the first.
FIVE_ROBOT_THREADS = 2
# A fifth robot added to a 4-robot pool puzzle of n moves opened a shortcut in 24 of 24
# tries at 17 moves (of 1 to 7 moves, 2 to 3 the most common): starts come from up to
# this many moves longer than wanted.
FIFTH_SLACK = 4


@dataclass(frozen=True)
class _Start:
    """A walk's starting puzzle, made when the walk first picks it: a pool holds
    thousands, and a 5-robot start needs its fifth robot placed."""

    make: Callable[[random.Random], Puzzle]
    fresh: bool  # not a known puzzle itself (a fifth robot added): it may be the answer as it is
    solution: Callable[[], list[Move]] | None = None  # moves that solve it (a 4-robot optimum, replayed)


def _walk_starts(lo: int, hi: int, board: str, robots: int, rules: Rules,
                 pools: Library | None) -> list[_Start]:
    """Long puzzles to walk from: the bank's of lo..hi + SEED_SLACK moves and,
    with pools, the pools' (for 5 robots: 4-robot ones with a fifth robot)."""
    def near(n: int) -> list[str]:
        return sorted(e["code"] for e in bank.matching(lo, hi + SEED_SLACK, n, rules.ricochet, _edition(board)))

    def known(code: str) -> _Start:
        return _Start(lambda rng: Puzzle.from_code(code), False)

    def fifth(make: Callable[[], Puzzle], solution: Callable[[], list[Move]] | None) -> _Start:
        return _Start(lambda rng: bank.with_fifth_robot(make(), rng, solution() if solution else None), True,
                      solution)

    banked = _banked(board)
    starts = [known(code) for code in near(robots)] if banked else []
    if robots == 5 and banked:
        starts += [fifth(functools.partial(Puzzle.from_code, code), None) for code in near(4)]
    if pools is not None:
        for pool in pools.pools(board, 4, rules.ricochet):
            by_length = pool.lengths()
            if robots == 5:  # up to FIFTH_SLACK longer: the fifth robot nearly always opens a shortcut
                rows = [i for n in range(lo, hi + FIFTH_SLACK + 1) for i in by_length.get(n, [])[:POOL_STARTS]]
                starts += [fifth(functools.partial(pool.puzzle, i), functools.partial(pool.moves, i)) for i in rows]
            else:
                rows = [i for n in range(lo, hi + SEED_SLACK + 1) for i in by_length.get(n, [])[:POOL_STARTS]]
                starts += [_Start(functools.partial(_pool_puzzle, pool, i), False) for i in rows]
    return starts


def _pool_puzzle(pool: Any, row: int, rng: random.Random) -> Puzzle:
    return pool.puzzle(row)


def _walk_from(starts: list[_Start], lo: int, hi: int, rules: Rules, min_robots_moved: int, rng: random.Random,
               max_evaluations: int, deadline: float, cancel: Cancel | None,
               threads: int = 1) -> tuple[Generated | None, int]:
    """Walk from the starts, staying among positions at least `lo` moves long;
    the first fair position of length lo..hi that is not a known puzzle (a bank
    entry, the 4-robot start) is the answer.  Each proof runs on `threads`."""
    if not starts:
        return None, 0
    banked = frozenset(e["code"] for e in bank.entries())
    evaluations = 0
    while evaluations < max_evaluations and time.monotonic() < deadline and not (cancel and cancel.is_set()):
        found, n = _one_walk(starts, banked, lo, hi, rules, min_robots_moved, rng, max_evaluations - evaluations,
                             deadline, cancel, threads)
        evaluations += n
        if found is not None:
            return found, evaluations
    return None, evaluations


def _one_walk(starts: list[_Start], banked: frozenset[str], lo: int, hi: int, rules: Rules, min_robots_moved: int,
              rng: random.Random, budget: int, deadline: float, cancel: Cancel | None,
              threads: int = 1) -> tuple[Generated | None, int]:
    """One walk of up to WALK_STEPS steps from a start the rng picks: its answer
    (or None) and the positions it evaluated (at most `budget`)."""
    pick = rng.choice(starts)
    start = pick.make(rng)
    # A start with a fifth robot added is new, and a candidate itself before the walk moves anything.
    known = banked if pick.fresh else banked | {start.code()}
    first = Puzzle.create(start.board, dict(start.robots), start.goal, rules)
    # The 4-robot optimum still solves a start whose fifth robot stands off its path: the
    # proof then only refutes shorter solutions.
    moves = pick.solution() if pick.solution is not None else None
    evaluations = 0
    # A start with a fifth robot is a candidate as it stands; walking on from it (moving any
    # robot) mostly met shortcuts: 20 moves took a median of 48 s over 6 seeds that way, 12 s without.
    steps = 0 if pick.fresh else WALK_STEPS
    for p, answer in walk(first, rng, steps=steps, floor=lo, depth=hi, deadline=deadline, cancel=cancel,
                          include_start=pick.fresh and start.code() not in banked,
                          start_solution=moves if moves and check(first, moves).solved else None, threads=threads):
        evaluations += 1
        if answer is not None and p.code() not in known \
                and (found := _fits(p, answer, lo, hi, rules, min_robots_moved)) is not None:
            return found, evaluations
        if evaluations >= budget:
            break
    return None, evaluations


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


def _banked(board: str | Board) -> bool:
    """Whether `board` is a kind of random board the bank holds long puzzles for."""
    kind = BoardKind.of(board)
    return kind is not None and kind.banked


def _edition(board: str | Board) -> str:
    """The edition of a random-board request (random-beginner boards are 2013 ones)."""
    kind = BoardKind.of(board)
    return kind.edition if kind is not None else "2013"


def _pick_board(board: str | Board, rng: random.Random) -> Board:
    if isinstance(board, Board):
        return board
    kind = BoardKind.of(board)
    if kind is not None:
        return real_board(random_board_spec(rng, kind.edition, barriers=kind.barriers))
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


def _evaluate(board: Board, placement: dict[str, Cell], goals: list[Goal], rules: Rules, lo: int, hi: int,
              min_robots_moved: int, rng: random.Random, deadline: float = math.inf) -> tuple[Generated | None, int]:
    """Solve every goal for this placement; a fitting, fair one is returned.
    The score (longest optimum, capped at hi + 1) guides the climb."""
    order = list(goals)
    rng.shuffle(order)
    score = 0
    for goal in order:
        p = Puzzle.create(board, placement, goal, rules)
        answer = solve(p, max_depth=hi, time_budget=min(60.0, max(deadline - time.monotonic(), 0.001)))
        if answer.status == "depth_limit":
            score = max(score, hi + 1)
            continue
        if answer.status != "optimal" or answer.length is None:  # an optimal answer has its length
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
    if rules.ricochet is Ricochet.NONE and round_of(p).void:
        return None
    report = difficulty(p, answer)
    if report["fewest_robots_moved"] < min_robots_moved:
        return None
    return Generated(p, answer, report)
