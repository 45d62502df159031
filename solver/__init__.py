"""The game of Ricochet Robots: boards, rules, moves, the optimal search and pictures.

Pure: no Flask, Celery or Redis, and nothing read from disk at import time.
"""

from .board import Board, Diagonal, Target, all_boards, real_board
from .errors import InvalidInput
from .puzzle import Goal, Move, Puzzle, Rules
from .rules import Replay, Verdict, check, replay
from .solution import Solution
from .solve import Cancel, solve, solve_many

__all__ = [
    "Board", "Cancel", "Diagonal", "Goal", "InvalidInput", "Move", "Puzzle", "Replay", "Rules",
    "Solution", "Target", "Verdict", "all_boards", "check", "real_board", "replay", "solve", "solve_many",
]
