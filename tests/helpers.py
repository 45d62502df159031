"""Small builders for hand-made boards and puzzles in tests."""

from __future__ import annotations

from typing import Any

from solver.board import Board
from solver.puzzle import Goal, Move, Puzzle, Rules
from solver.rules import IllegalMove, State


def custom(width: int = 6, height: int = 6, **parts: Any) -> Board:
    return Board.custom(width, height, **parts)


def puzzle(board: Board, robots: dict[str, tuple[int, int]], target: tuple[int, int],
           colour: str | None = "red", ricochet: str = "turn", sightline: bool = False) -> Puzzle:
    return Puzzle.create(board, robots, Goal(target, colour), Rules(ricochet, sightline))


def moves(text: str) -> list[Move]:
    """'red E, blue N' -> moves."""
    return [Move(*m.split()) for m in text.split(",") if m.strip()]


def after(p: Puzzle, text: str) -> dict[str, tuple[int, int]]:
    """Robot cells after playing `text` from the start."""
    state = State.start(p)
    for m in moves(text):
        state = state.apply(m)
    return state.robots()


def illegal(p: Puzzle, text: str) -> str:
    state = State.start(p)
    ms = moves(text)
    for m in ms[:-1]:
        state = state.apply(m)
    try:
        state.apply(ms[-1])
    except IllegalMove as e:
        return e.reason
    raise AssertionError(f"{ms[-1]} was allowed")
