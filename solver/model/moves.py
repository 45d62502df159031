"""The rules of a move and a round: sliding, barriers, the ricochet rule, void rounds.

Everything here follows docs/rules.md sections 3 and 4 literally; the reference
search and the checks of the C core are built on these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from solver.model.board import Board, Cell
from solver.model.geometry import DEFLECT, DIRECTIONS, axis
from solver.model.puzzle import Move, Puzzle, Ricochet

# Ricochet status of a robot: not moved yet, last move vertical, last move
# horizontal, or has turned (consecutive perpendicular moves, or a deflection).
UNMOVED, LAST_VERTICAL, LAST_HORIZONTAL, TURNED = range(4)


class IllegalMove(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def slide(board: Board, occupied: Sequence[int], colour: str, start: int, direction: int) -> tuple[int, bool]:
    """Where a robot of `colour` at `start` stops when moved in `direction`,
    and whether a barrier deflected it.  `occupied` holds the other robots.

    Raises IllegalMove for a move that leaves the robot where it is, ends on a
    barrier, or never ends."""
    result = try_slide(board, occupied, colour, start, direction)
    if isinstance(result, str):
        raise IllegalMove(result)
    return result


def try_slide(board: Board, occupied: Sequence[int], colour: str, start: int,
              direction: int, path: list[int] | None = None) -> tuple[int, bool] | str:
    """`slide` that returns the reason instead of raising, for searches.
    When `path` is given, every cell entered is appended to it (for drawing)."""
    cell, d, deflected = start, direction, False
    barriers, step = board.barriers, board.steps
    # A slide that enters more (cell, direction) pairs than exist has repeated
    # one, and repeats it forever; only barriers and openings allow that.
    limit = 4 * board.cells
    while True:
        nxt = step[d][cell]
        if nxt < 0 or nxt in occupied:
            break
        cell = nxt
        if path is not None:
            path.append(cell)
        barrier = barriers.get(cell)
        if barrier is not None and barrier.colour != colour:
            d = DEFLECT[barrier.orientation][d]
            deflected = True
        limit -= 1
        if limit < 0:
            return "the slide never ends"
    if cell == start:
        return "the robot cannot move that way"
    if cell in barriers:
        return "the robot would stop on a diagonal barrier"
    return cell, deflected


def next_status(status: int, direction: int, deflected: bool) -> int:
    """A robot's ricochet status after one of its moves."""
    if status == TURNED or deflected:
        return TURNED
    moved = LAST_HORIZONTAL if axis(direction) else LAST_VERTICAL
    if status in (UNMOVED, moved):
        return moved
    return TURNED


@dataclass(frozen=True)
class State:
    """Robots' cells (flat indices, in the puzzle's colour order) and their ricochet status."""

    puzzle: Puzzle
    cells: tuple[int, ...]
    status: tuple[int, ...]

    @classmethod
    def start(cls, puzzle: Puzzle) -> State:
        b = puzzle.board
        return cls(puzzle, tuple(b.index(c) for _, c in puzzle.robots), (UNMOVED,) * len(puzzle.robots))

    def apply(self, move: Move) -> State:
        """The state after `move`; raises IllegalMove with the reason if it is not allowed."""
        colours = self.puzzle.colours
        if move.robot not in colours:
            raise IllegalMove(f"the {move.robot} robot is not in play")
        r = colours.index(move.robot)
        d = DIRECTIONS.index(move.direction)
        others = self.cells[:r] + self.cells[r + 1:]
        end, deflected = slide(self.puzzle.board, others, move.robot, self.cells[r], d)
        cells = self.cells[:r] + (end,) + self.cells[r + 1:]
        status = self.status[:r] + (next_status(self.status[r], d, deflected),) + self.status[r + 1:]
        return State(self.puzzle, cells, status)

    def robots(self) -> dict[str, Cell]:
        b = self.puzzle.board
        return {c: b.cell(i) for c, i in zip(self.puzzle.colours, self.cells)}

    def finisher(self, active: Sequence[str]) -> str | None:
        """The active robot standing on the target, if any."""
        target = self.puzzle.board.index(self.puzzle.goal.cell)
        for c, cell in zip(self.puzzle.colours, self.cells):
            if cell == target and c in active:
                return c
        return None

    def solved(self, active: Sequence[str]) -> bool:
        c = self.finisher(active)
        if c is None:
            return False
        return self.puzzle.rules.ricochet is Ricochet.NONE or self.status[self.puzzle.colours.index(c)] == TURNED


def one_move_reach(puzzle: Puzzle, colour: str) -> str | None:
    """The direction in which `colour` reaches the target in one move, if any."""
    state = State.start(puzzle)
    target = puzzle.board.index(puzzle.goal.cell)
    r = puzzle.colours.index(colour)
    for d in DIRECTIONS:
        try:
            if state.apply(Move(colour, d)).cells[r] == target:
                return d
        except IllegalMove:
            continue
    return None


@dataclass(frozen=True)
class Round:
    """Who may finish the round, and whether it is void and why."""

    active: tuple[str, ...]
    void: bool
    void_reason: str | None


def candidates(puzzle: Puzzle) -> tuple[str, ...]:
    """Robots that could be active: the chip's colour, or every robot for the vortex."""
    return (puzzle.goal.colour,) if puzzle.goal.colour is not None else puzzle.colours


def round_of(puzzle: Puzzle) -> Round:
    return round_from_reach(puzzle, {c: one_move_reach(puzzle, c) for c in candidates(puzzle)})


def round_from_reach(puzzle: Puzzle, reach: dict[str, str | None]) -> Round:
    """The round, given for each candidate the direction reaching the target in one move."""
    target = puzzle.goal.cell
    pool = candidates(puzzle)
    if puzzle.goal.colour is None and puzzle.rules.vortex_sightline:
        active = tuple(c for c in pool if puzzle.robot(c) != target and reach[c] is None)
        if not active:
            return Round((), True, "every robot can reach the target in one move, so none is active "
                                   "(vortex_sightline)")
        return Round(active, False, None)
    for c in pool:
        if puzzle.robot(c) == target:
            return Round(pool, True, f"the {c} robot already stands on the target")
    for c in pool:
        if reach[c] is not None:
            return Round(pool, True, f"the {c} robot reaches the target in one move ({reach[c]})")
    return Round(pool, False, None)


@dataclass
class Replay:
    """Every position along a sequence of moves; where it went wrong, if it did."""

    states: list[State]
    first_bad_move: int | None = None
    reason: str | None = None

    @property
    def positions(self) -> list[dict[str, Cell]]:
        return [s.robots() for s in self.states]

    @property
    def legal(self) -> bool:
        return self.first_bad_move is None


def replay(puzzle: Puzzle, moves: Sequence[Move]) -> Replay:
    state = State.start(puzzle)
    result = Replay([state])
    for i, move in enumerate(moves):
        try:
            state = state.apply(move)
        except IllegalMove as e:
            result.first_bad_move, result.reason = i, e.reason
            break
        result.states.append(state)
    return result


@dataclass
class Verdict:
    """The judgement of a sequence of moves, in the `ricochet check` shape."""

    legal: bool
    solved: bool
    length: int
    ricochet: bool
    reached_target: bool
    finisher: str | None
    void: bool
    void_reason: str | None
    first_bad_move: int | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "legal": self.legal, "solved": self.solved, "length": self.length,
            "ricochet": self.ricochet, "reached_target": self.reached_target,
            "finisher": self.finisher, "void": self.void,
        }
        if self.void_reason is not None:
            out["void_reason"] = self.void_reason
        if not self.legal:
            out["first_bad_move"] = self.first_bad_move
            out["reason"] = self.reason
        elif not self.solved:
            out["reason"] = self.reason
        return out


def check(puzzle: Puzzle, moves: Sequence[Move]) -> Verdict:
    """Replay `moves` and judge them: legal, solved under the rule options, and why not."""
    rnd = round_of(puzzle)
    rp = replay(puzzle, moves)
    if not rp.legal:
        return Verdict(False, False, len(moves), False, False, None, rnd.void, rnd.void_reason,
                       rp.first_bad_move, rp.reason)
    final = rp.states[-1]
    finisher = final.finisher(rnd.active)
    # Whose turning counts: the robot on the target, else the chip's robot.
    judged = finisher or (puzzle.goal.colour if puzzle.goal.colour in puzzle.colours else None)
    turned = judged is not None and final.status[puzzle.colours.index(judged)] == TURNED
    solved = final.solved(rnd.active)
    reason = None
    if not solved:
        if finisher is None:
            reason = ("no active robot ends on the target" if puzzle.goal.colour is None
                      else f"the {puzzle.goal.colour} robot does not end on the target")
        else:
            reason = f"the {finisher} robot never ricocheted (the ricochet rule asks for a turn)"
    return Verdict(True, solved, len(moves), turned, finisher is not None, finisher,
                   rnd.void, rnd.void_reason, None, reason)

