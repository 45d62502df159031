"""The game of Ricochet Robots: boards, rules, moves, the optimal search and pictures.

Pure: no Flask, Celery or Redis, and nothing read from disk at import time.
"""

from solver.errors import InvalidInput
from solver.model.board import Board, Diagonal, Target, all_boards, real_board
from solver.model.moves import Replay, Verdict, check, replay
from solver.model.puzzle import Goal, Move, Puzzle, Rules
from solver.search.solution import Solution
from solver.search.solve import Cancel, solve, solve_many

__all__ = [
    "Board", "Cancel", "Diagonal", "Goal", "InvalidInput", "Move", "Puzzle", "Replay", "Rules",
    "Solution", "Target", "Verdict", "all_boards", "check", "real_board", "replay", "solve", "solve_many",
]
