"""The optimal solver: a thin typed face over the C core (`solver._core`).

The core releases the GIL while it searches, so `solve_many` spreads a batch
over threads.  Every limit ends a search cleanly and says which one did.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from solver import _core
from solver.model.board import Board, Cell
from solver.model.geometry import DIRECTIONS, ROBOT_COLOURS
from solver.model.moves import Round, candidates, check, round_from_reach
from solver.model.puzzle import Goal, Move, Puzzle, RuleFlag
from solver.search.solution import Solution

DEFAULT_MAX_DEPTH = 64
DEFAULT_STATE_BUDGET = 1 << 30  # bytes: the search's tables stay within 1 GiB


class Ceiling:
    """The most any one search of this process may take for its tables, whatever
    budget its caller gives: none until a server's process sets one as it starts
    (workers.memory.cap_searches: a worker's is RICOCHET_JOB_STATE_MB, a web
    process's two request searches' worth)."""

    NONE = 1 << 62

    def __init__(self, state_bytes: int = NONE) -> None:
        self.state_bytes = state_bytes


ceiling = Ceiling()


class Cancel:
    """A flag another thread sets to stop a running search."""

    def __init__(self) -> None:
        self.buffer = bytearray(1)

    def set(self) -> None:
        self.buffer[0] = 1

    def is_set(self) -> bool:
        return bool(self.buffer[0])


class CompiledBoards:
    """Boards compiled for the C core, kept within a byte budget: what a compiled
    board holds grows with its searches (lower bounds, concern sets and stops
    per target: 30 KiB to 2 MiB a board), so the cache counts bytes, not boards,
    and drops the least recently used board beyond the budget.  Safe across
    threads."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._boards: OrderedDict[Board, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __call__(self, board: Board) -> Any:
        with self._lock:
            found = self._boards.get(board)
            if found is not None:  # what its last searches cached counts from now on
                layout, counted = found
                self._boards.move_to_end(board)
                size = _core.layout_bytes(layout)
                if size != counted:  # rarely: a search of a new target grew it
                    self._boards[board] = (layout, size)
                    self._bytes += size - counted
                    self._trim()
                return layout
        layout = _compile(board)
        with self._lock:
            if board not in self._boards:
                self._recount_recent()
                size = _core.layout_bytes(layout)
                self._boards[board] = (layout, size)
                self._bytes += size
                self._trim()
        return layout

    RECOUNTED = 32  # boards a miss counts again: the searches of the latest ones may have grown them since

    def _recount_recent(self) -> None:
        for board in itertools.islice(reversed(self._boards), self.RECOUNTED):
            layout, counted = self._boards[board]
            size = _core.layout_bytes(layout)
            if size != counted:
                self._boards[board] = (layout, size)
                self._bytes += size - counted

    def _trim(self) -> None:
        while self._bytes > self.budget and len(self._boards) > 1:
            _, (_, size) = self._boards.popitem(last=False)
            self._bytes -= size

    @property
    def bytes(self) -> int:
        """What the boards kept held when last counted."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._boards)


def _compile(board: Board) -> Any:
    """The board's tables for the C core: step targets per direction, barriers per cell."""
    step = np.array(board.steps, dtype="<i2")
    barrier = np.zeros(board.cells, dtype=np.uint8)
    for index, d in board.barriers.items():
        barrier[index] = (ROBOT_COLOURS.index(d.colour) + 1) | ((d.orientation == "\\") << 3)
    return _core.compile_board(board.width, board.height, step.tobytes(), barrier.tobytes(),
                               bool(board.openings))


# The process's compiled boards.  A service sets the budget from its settings
# (RICOCHET_BOARD_CACHE_MB); 64 MiB holds hundreds of real boards with their targets.
compiled = CompiledBoards(32 << 20)


_IDA_NODES = 500_000  # the core's default: past it, IDA*'s repeated iterations cost more than A*'s memory
_STRATEGIES = {"auto": 0, "ida": 1, "astar": 2}
_COLOURED = ~int(RuleFlag.VORTEX_SIGHTLINE)
# Moves are immutable: one instance per robot and direction serves every solution.
_MOVES = {colour: tuple(Move(colour, direction) for direction in DIRECTIONS) for colour in ROBOT_COLOURS}
_Request = tuple[Any, list[int], tuple[int, ...], int, int, int]  # see _request


@functools.cache
def _cast(colours: tuple[str, ...], goal: str | None) -> tuple[tuple[int, ...], int, tuple[tuple[Move, ...], ...]]:
    """What a set of robots and a goal colour are to the core, once per set (at
    most 32 sets of robots and 6 goals): the colour indices, the robots that may
    finish (bit i), and the Move a move of each robot in each direction is."""
    mask = sum(1 << i for i, c in enumerate(colours) if goal in (None, c))
    return tuple(ROBOT_COLOURS.index(c) for c in colours), mask, tuple(_MOVES[c] for c in colours)


def _request(puzzle: Puzzle) -> _Request:
    """The core's view of a puzzle, the one argument every search of the core
    takes: the compiled board, the robots' cells and colour indices, the target
    cell, the robots that may finish (bit i) and the rules as one RuleFlag word."""
    return _asked(puzzle)[0]


def _asked(puzzle: Puzzle) -> tuple[_Request, tuple[tuple[Move, ...], ...]]:
    """_request's tuple, and the Moves of each robot (solve's last argument to the core)."""
    b = puzzle.board
    w = b.width
    goal = puzzle.goal
    colour = goal.colour
    colours, mask, moves = _cast(puzzle.colours, colour)
    flags = puzzle.rules.flags
    if colour is not None:
        flags &= _COLOURED  # the sightline rule is the vortex's (docs/rules.md, section 4)
    x, y = goal.cell
    return (compiled(b), [cy * w + cx for _, (cx, cy) in puzzle.robots], colours, y * w + x, mask, flags), moves


def solve(
    puzzle: Puzzle,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    time_budget: float | None = None,
    state_budget: int = DEFAULT_STATE_BUDGET,
    cancel: Cancel | None = None,
    strategy: str = "auto",
    exact: Analysis | None = None,
    known: Sequence[Move] | None = None,
    threads: int = 1,
    crew_from: int = 1024,
    crew_yields: bool = True,
) -> Solution:
    """An optimal solution of `puzzle`, or the reason the search stopped.

    `time_budget` is in seconds; `state_budget` bounds the search's tables in
    bytes (and so does the process's `ceiling`); `strategy` is `auto` (iterative deepening, handing deep puzzles to A*),
    `ida` or `astar` (for tests and benchmarks).  `exact`, an analysis of the
    puzzle's board and goal with its robots, is the search's lower bound: the
    proof then follows the table (under the ricochet rule too).  `known`, a
    solution of the puzzle (ValueError unless it solves it), spares the search
    its last and largest layer: only shorter solutions are looked for, and
    where none exists `known` is optimal.  `threads` (1 to 8) expand A*'s
    buckets of `crew_from` states or more side by side (deep puzzles; tests
    lower it to cover the path on small ones).  The crew yields to a busy
    machine (`crew_yields`): it starts only with a processor free for each
    thread, and hands the search to one thread when its helpers keep it
    waiting, so two threads are never much slower than one; the length is the
    same either way, the optimal solution found may differ.  With
    `crew_yields=False` the result (states, nodes, moves) is the same on every
    run with the same settings."""
    if known and len(known) - 1 < max_depth:
        if not check(puzzle, known).solved:
            raise ValueError("the known moves do not solve the puzzle")
        shorter = solve(puzzle, max_depth=len(known) - 1, time_budget=time_budget, state_budget=state_budget,
                        cancel=cancel, strategy=strategy, exact=exact, threads=threads,
                        crew_from=crew_from, crew_yields=crew_yields)
        if shorter.status != "depth_limit":
            return shorter
        return Solution("optimal", list(known), len(known), shorter.round, shorter.stats)
    # Positional (the core's order): keywords cost a solve of a few moves a tenth of its time.  The core
    # answers with the Move objects themselves (the last argument names them).
    request, moves = _asked(puzzle)
    raw = _core.solve(
        request, max_depth, time_budget or 0.0, min(state_budget, ceiling.state_bytes),
        cancel.buffer if cancel else None, _STRATEGIES[strategy],
        None if exact is None else exact.capsule_for(puzzle), threads, crew_from, _IDA_NODES, crew_yields, moves,
    )
    return _solution(puzzle, raw)


def _solution(puzzle: Puzzle, raw: tuple[Any, ...]) -> Solution:
    """The core's answer (see `_core.solve`'s docstring for its fields) as a Solution."""
    status, moves, lower_bound, states, nodes, seconds, strategy, reach, _, lone_bound = raw
    stats = {"states": states, "nodes": nodes, "seconds": seconds, "strategy": strategy,
             # The moves a finisher would need if it could stop anywhere (None: it can never arrive).
             "lone_bound": lone_bound if lone_bound != 255 else None}
    return Solution(status, moves, lower_bound, _round(puzzle, reach), stats)


# Rounds are immutable: the usual one (a chip's robot neither home nor one move away) is shared.
_OPEN_ROUNDS = {colour: Round((colour,), False, None) for colour in ROBOT_COLOURS}


def _round(puzzle: Puzzle, reach: Sequence[int] | None) -> Round:
    """The round, from the core's one-move reach (a direction per robot, -1 for none; None when no
    robot that may finish stands on the target or reaches it in one move: the usual round)."""
    if reach is None:
        colour = puzzle.goal.colour
        return _OPEN_ROUNDS[colour] if colour is not None else Round(puzzle.colours, False, None)
    colours = puzzle.colours
    directions = {colours[i]: (DIRECTIONS[d] if d >= 0 else None) for i, d in enumerate(reach)}
    return round_from_reach(puzzle, {c: directions[c] for c in candidates(puzzle)})


def solve_many(puzzles: Iterable[Puzzle], *, threads: int | None = None, **limits: Any) -> list[Solution]:
    """Solve a batch, spread over threads (the core runs without the GIL); results in order."""
    items = list(puzzles)
    if threads == 1 or len(items) <= 1:
        return [solve(p, **limits) for p in items]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(lambda p: solve(p, **limits), items))



@dataclass(frozen=True)
class ReachTable:
    """Optimal lengths from one position for every (robot, cell), from one search.

    Lengths up to `complete_to` are exact; None means no solution within
    `complete_to` moves.  Under the ricochet rule a robot counts as arriving only
    once it has ricocheted."""

    board: Board
    colours: tuple[str, ...]
    depths: bytes
    complete_to: int
    stats: dict[str, Any]

    def optimal_length(self, colour: str, cell: Cell) -> int | None:
        d = self.depths[self.colours.index(colour) * self.board.cells + self.board.index(cell)]
        return None if d == 255 or d > self.complete_to else d

    def goal_length(self, goal: Goal, robots: Iterable[str] | None = None) -> int | None:
        """The optimal length for a goal; `robots` limits who may finish (default: the
        goal's colour, or every robot for an any-robot goal)."""
        pool = list(robots) if robots is not None else ([goal.colour] if goal.colour else list(self.colours))
        lengths = [n for c in pool if (n := self.optimal_length(c, goal.cell)) is not None]
        return min(lengths) if lengths else None


def reach(puzzle: Puzzle, *, max_depth: int = 10, time_budget: float | None = None,
          state_budget: int = DEFAULT_STATE_BUDGET) -> ReachTable:
    """One breadth-first search from the puzzle's robots (its goal is ignored)
    rating every target at once, under the puzzle's ricochet option."""
    raw = _core.reach(_request(puzzle), max_depth=max_depth, time_budget=time_budget or 0.0,
                      state_budget=state_budget)
    stats = {k: raw[k] for k in ("status", "states", "nodes", "seconds")}
    return ReachTable(puzzle.board, puzzle.colours, raw["depths"], raw["complete_to"], stats)


def upper_bound(puzzle: Puzzle, *, helper_moves: int = 1) -> int | None:
    """The length of a solution found cheaply (a finisher moving alone, after at most
    `helper_moves` moves of another robot): the optimum is never longer.  None when
    no such solution exists.  Costs microseconds; the generator uses it to skip
    positions that are certainly too short."""
    return _core.upper_bound(_request(puzzle), helper_moves=helper_moves)


def solution_facts(puzzle: Puzzle, length: int, *, cap: int = 1_000_000, time_budget: float | None = None,
                   state_budget: int = 256 << 20, exact: Analysis | None = None) -> dict[str, Any] | None:
    """Facts over every optimal solution of `length` moves: how many (up to `cap`),
    the fewest robots moved (and which) and the fewest robot switches.
    None when the search ran out of its budgets.  With `exact` (see solve) only
    states that lie on optimal paths are walked."""
    if length == 0:
        return {"solutions": 1, "capped": False, "fewest_robots": 0, "fewest_robots_moved": [],
                "fewest_switches": 0}
    raw = _core.facts(_request(puzzle), length, cap=cap, time_budget=time_budget or 0.0,
                      state_budget=state_budget, exact=_exact(exact, puzzle))
    if raw is None or raw["status"] != "optimal":
        return None
    names = puzzle.colours
    return {
        "solutions": raw["solutions"],
        "capped": raw["capped"],
        "fewest_robots": raw["fewest_robots"],
        "fewest_robots_moved": [c for i, c in enumerate(names) if raw["fewest_robots_mask"] >> i & 1],
        "fewest_switches": raw["fewest_switches"],
    }


@dataclass(frozen=True)
class Solutions:
    """Every optimal solution of a puzzle, up to a limit: `listed` holds them (in
    the order the search met them), `orderings` is how many there are in all
    (up to the counting cap, `capped` past it); `complete` when every one is
    listed.  Solutions that differ only in the order of independent moves are
    one solution (`classes`, solver/search/orders.py folds them)."""

    length: int
    orderings: int
    capped: bool
    listed: list[list[Move]]

    @property
    def complete(self) -> bool:
        return not self.capped and len(self.listed) == self.orderings


def every_solution(puzzle: Puzzle, length: int, *, limit: int = 2000, time_budget: float | None = None,
                   state_budget: int = 256 << 20) -> Solutions | None:
    """The optimal solutions of `length` moves (the puzzle's optimum), up to
    `limit` of them; None when the search ran out of its budgets."""
    if length == 0:
        return Solutions(0, 1, False, [[]])
    raw = _core.facts(_request(puzzle), length, cap=1_000_000, time_budget=time_budget or 0.0,
                      state_budget=min(state_budget, ceiling.state_bytes), list=limit)
    if raw is None or raw["status"] != "optimal":
        return None
    names, data = puzzle.colours, raw["listed"]
    listed = [[_MOVES[names[code >> 2]][code & 3] for code in data[i:i + length]]
              for i in range(0, len(data), length)]
    return Solutions(length, raw["solutions"], raw["capped"], listed)


@dataclass(frozen=True)
class Exhaustive:
    """The optimal length of every position of one board and goal under the plain
    rule (ricochet none; never longer than under the ricochet rule).

    `counts[n]` is how many positions need n moves; `positions` holds the longest
    ones (whole lengths from the longest down, at least `min_length`, within the
    caller's limit), each with one optimal plain-rule solution."""

    counts: tuple[int, ...]
    unsolvable: int
    positions: list[tuple[int, dict[str, Cell], list[Move]]]
    capped: bool
    probes: list[int | None]
    seconds: float

    @property
    def longest(self) -> int | None:
        return len(self.counts) - 1 if self.counts else None


def exhaustive(board: Board, colours: Iterable[str], goal: Goal, *, min_length: int = 0, limit: int = 100_000,
               probes: Iterable[dict[str, Cell]] = (), threads: int = 2,
               state_budget: int = 5 << 30) -> Exhaustive:
    """Every position of `colours` robots on `board` for `goal`, by one search
    backwards from the goal (cells^robots bytes: 4 GiB for 4 robots on 16 x 16).
    `probes` are positions whose lengths are wanted too.  At most 4 robots; no
    edge openings."""
    names = tuple(colours)
    free = bytes(int(c not in board.blocked and board.diagonal_at(c) is None)
                 for c in (board.cell(i) for i in range(board.cells)))
    mask = sum(1 << i for i, c in enumerate(names) if goal.colour in (None, c))
    probe_cells = [[board.index(p[c]) for c in names] for p in probes]
    raw = _core.exhaustive(compiled(board), [ROBOT_COLOURS.index(c) for c in names], board.index(goal.cell), mask,
                           free, min_length, limit=limit, probes=probe_cells, threads=threads,
                           state_budget=state_budget)
    positions = [(n, {c: board.cell(i) for c, i in zip(names, cells)},
                  [Move(names[r], DIRECTIONS[d]) for r, d in path])
                 for n, cells, path in sorted(raw["positions"], key=lambda row: -row[0])]
    return Exhaustive(tuple(raw["counts"]), raw["unsolvable"], positions, raw["capped"], raw["probes"],
                      raw["seconds"])


class Analysis:
    """The plain-rule length of every position of one board and goal with the
    given robots, kept in memory (cells^robots bytes: 4 GiB for 4 robots on a
    16 x 16 board) until `release()` or the end of a `with` block.

    While it is held, `solve(..., exact=analysis)` and
    `solution_facts(..., exact=analysis)` take it as their lower bound: exact
    under the plain rule, and a lower bound under the ricochet rule (that rule
    only takes finishing moves away).  `sample()` draws fair positions by length."""

    def __init__(self, board: Board, colours: tuple[str, ...], goal: Goal, capsule: Any) -> None:
        self.board, self.colours, self.goal = board, colours, goal
        self._capsule = capsule
        info = _core.analysis_info(capsule)
        self.counts: tuple[int, ...] = tuple(info["counts"])
        self.unsolvable: int = info["unsolvable"]
        self.seconds: float = info["seconds"]
        self.bytes: int = info["bytes"]

    @property
    def longest(self) -> int | None:
        return len(self.counts) - 1 if self.counts else None

    def lengths(self, positions: Iterable[dict[str, Cell]]) -> list[int | None]:
        """The plain-rule length of each position (None: the goal cannot be reached)."""
        return _core.analysis_lengths(self._capsule, [[self.board.index(p[c]) for c in self.colours]
                                                      for p in positions])

    def lengths_at(self, positions: Iterable[Sequence[int]]) -> list[int | None]:
        """`lengths` of positions given as cell indices in the analysis's robot
        order (no dicts: for looking up many at once)."""
        return _core.analysis_lengths(self._capsule, positions if isinstance(positions, list) else list(positions))

    def sample(self, per_length: int, *, min_length: int = 0, seed: int = 0,
               cells: Iterable[Cell] | None = None) -> tuple[dict[int, int], list[tuple[int, dict[str, Cell],
                                                                                       list[Move]]]]:
        """Up to `per_length` positions drawn uniformly (by `seed`) at each length
        from `min_length`, robots on distinct `cells` (default: the board's start
        cells, where a fair round begins), each with one optimal plain-rule
        solution read off the table; and how many such positions each length has."""
        allowed = set(self.board.start_cells() if cells is None else cells)
        start = bytes(int(self.board.cell(i) in allowed) for i in range(self.board.cells))
        raw = _core.analysis_sample(self._capsule, start, min_length, per_length, seed & (2**64 - 1))
        names = self.colours
        rows = [(n, {c: self.board.cell(i) for c, i in zip(names, cells)},
                 [Move(names[r], DIRECTIONS[d]) for r, d in path]) for n, cells, path in raw["positions"]]
        return dict(raw["counts"]), rows

    def capsule_for(self, puzzle: Puzzle) -> Any:
        if puzzle.board != self.board or puzzle.goal.cell != self.goal.cell or puzzle.colours != self.colours:
            raise ValueError("the analysis is of another board, target or set of robots")
        return self._capsule

    def release(self) -> None:
        """Free the table now."""
        _core.analysis_release(self._capsule)

    def __enter__(self) -> Analysis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def analyse(board: Board, colours: Iterable[str], goal: Goal, *, threads: int = 2,
            state_budget: int = 5 << 30, time_budget: float | None = None) -> Analysis:
    """The retrograde analysis of one board and goal (see `exhaustive`), kept in
    memory as an `Analysis`.  At most 4 robots; no edge openings."""
    names = tuple(colours)
    free = bytes(int(c not in board.blocked and board.diagonal_at(c) is None)
                 for c in (board.cell(i) for i in range(board.cells)))
    mask = sum(1 << i for i, c in enumerate(names) if goal.colour in (None, c))
    capsule = _core.analyse(compiled(board), [ROBOT_COLOURS.index(c) for c in names], board.index(goal.cell), mask,
                            free, threads=threads, state_budget=state_budget, time_budget=time_budget or 0.0)
    return Analysis(board, names, goal, capsule)


def _exact(analysis: Analysis | None, puzzle: Puzzle) -> Any:
    return None if analysis is None else analysis.capsule_for(puzzle)
