"""Puzzles by code: hints, difficulty reports and random puzzles, each with the one
optimal solution the service shows for that puzzle everywhere."""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import replace
from typing import NotRequired, TypedDict, cast

from solver.model.board import BoardKind, real_board
from solver.model.puzzle import Move, Puzzle, Ricochet, moves_from_json
from solver.play.grades import lengths_of
from solver.production import library
from solver.production.difficulty import difficulty
from solver.production.generate import MAX_LENGTH, generate
from solver.production.generated import Generated
from solver.production.pools import admits
from solver.search.orders import distinct
from solver.search.solution import Solution, hint

from . import Context, ratings
from .problems import Problem
from .ratings.themes import DifficultyReport, PuzzleRating, RandomPuzzle

RANDOM_TIME_BUDGET = 10.0  # seconds a random-puzzle request may take, answer included
RANDOM_SEARCH_BUDGET = RANDOM_TIME_BUDGET - 1.0  # the search stops early enough to answer within it
LAST_HINT = 4  # the hint that gives the first move: the answer shown, for ratings


class CodedHint(TypedDict):
    """service/shapes.py's CodedHint: solver/search/solution.py's hint of a puzzle, with its code."""

    code: str
    level: int
    optimal_length: int
    robots_moved: NotRequired[int]  # from level 2
    robots: NotRequired[list[str]]  # from level 3
    first_move: NotRequired[dict[str, str] | None]  # level 4


class About(TypedDict, total=False):
    """What GET /v1/puzzles/{code} knows of a puzzle whose optimal solution is kept (nothing, else)."""

    optimal_length: int
    rating: PuzzleRating
    popularity: int
    themes: list[str]


class SolutionsView(TypedDict):
    """service/shapes.py's Solutions: GET /v1/puzzles/{code}/solutions."""

    code: str
    length: int
    count: int
    complete: bool
    orderings: int
    solutions: list[list[dict[str, str]]]


def _optimal(ctx: Context, p: Puzzle, what: str) -> list[Move]:
    """The optimal solution the service serves for p, or the Problem that says
    why `what` (hints, the solutions) cannot be given."""
    known = ctx.answers.settled(p)
    if known is not None and known.status == "unsolvable":
        raise Problem("unsolvable", f"the puzzle has no solution, so there are no {what}")
    if known is None:
        raise Problem("needs-a-job", "the optimal solution is not known yet (it takes longer than a request "
                      f"may search): POST /v1/solve queues the search, and the {what} follow once it is solved")
    return known.moves


def puzzle_hint(ctx: Context, p: Puzzle, level: int) -> CodedHint:
    """A hint of `level` (1 to 4) from the optimal solution the service serves;
    the last (the first move) counts as the answer shown."""
    shown = cast(CodedHint, {"code": p.code(), **hint(_optimal(ctx, p, "hints"), level)})  # hint's keys, by level
    if level >= LAST_HINT:
        ratings.reveal(ctx, p)
    return shown


def about(ctx: Context, p: Puzzle) -> About:
    """A puzzle's optimal length, rating, popularity and themes, when its optimal
    solution is kept (GET /v1/puzzles/{code} searches nothing): a shared link
    keeps its par."""
    kept = ctx.stores.answers.get(p.content_hash()) if ctx.stores is not None else None
    if kept is None or kept["status"] != "optimal":
        return {}
    moves = moves_from_json(kept["moves"])
    described = ratings.describe(ctx, p, moves)  # without a report: rating, popularity, themes
    return About(optimal_length=len(moves), rating=described["rating"], popularity=described["popularity"],
                 themes=described["themes"])


def rate(ctx: Context, p: Puzzle) -> DifficultyReport:
    """The puzzle's difficulty report (its optimum found within the request's budget)."""
    found, _ = ctx.answers.lookup(p)
    if found["length"] is None:
        if found["status"] == "unsolvable":
            raise Problem("unsolvable", "the puzzle has no solution, so it has no difficulty")
        raise Problem("needs-a-job", f"the puzzle needs more than {found['lower_bound'] - 1} moves; solve it first "
                      "with POST /v1/solve")
    report = difficulty(p, Solution.from_json(p, found), time_budget=ctx.answers.budget)
    return cast(DifficultyReport, {**report, "code": p.code()})  # the report's keys (Difficulty's), and the code


class RandomQuery(TypedDict):
    """GET /v1/puzzles/random's query, as service/requests/puzzles.py's RandomQuery loads it."""

    length: NotRequired[int]
    grade: NotRequired[str]
    theme: NotRequired[str]
    robots: int
    seed: NotRequired[str]
    board: str
    solution: bool


def random_puzzle(ctx: Context, query: RandomQuery) -> RandomPuzzle:
    """A generated puzzle of an exact optimal length or of a grade (a RandomQuery,
    loaded), with the solution every other endpoint will show for it."""
    length, grade, seed = query.get("length"), query.get("grade"), query.get("seed") or uuid.uuid4().hex
    theme = query.get("theme")
    if theme is not None and grade is not None:
        raise Problem("invalid-input", "give a theme alone or with a length, not with a grade", field="grade")
    if theme is None and (length is None) == (grade is None):
        raise Problem("invalid-input", "give exactly one of length or grade (or a theme)", field="length")
    if length is not None and not 2 <= length <= MAX_LENGTH:
        raise Problem("out-of-range", f"no fair puzzle has {length} moves: ask for a length from 2 to "
                      f"{MAX_LENGTH} (a round solved in one move is void)", field="length")
    if theme is not None:
        g = _of_theme(theme, length, query["board"], query["robots"], seed)
    elif length is not None:
        g = generate(length, board=query["board"], robots=query["robots"], seed=seed,
                     time_budget=RANDOM_SEARCH_BUDGET, pools=ctx.pools)
    else:
        assert grade is not None  # exactly one of length and grade was given (checked above)
        g = _of_grade(ctx, grade, query["board"], query["robots"], seed)
    served = ctx.answers.adopt(g.puzzle, g.solution)  # one solution per puzzle: the hints' and a solve's too
    if served.moves != g.solution.moves:
        g = replace(g, solution=served, difficulty=difficulty(g.puzzle, served, time_budget=ctx.answers.budget))
    described = ratings.describe(ctx, g.puzzle, g.solution.moves, g.difficulty)
    out = cast(RandomPuzzle, {**g.to_json(), "seed": seed, **described})  # Generated.to_json's keys are Made's
    if query.get("solution", True):
        ratings.reveal(ctx, g.puzzle)
    else:  # a round: this client's players' first answers are rated
        ratings.open_round(ctx, g.puzzle)
        del out["solution"]
    return out


def _of_theme(theme: str, length: int | None, wanted: str, robots: int, seed: str) -> Generated:
    """A puzzle of the library with the theme (solver/production/library.py),
    drawn by the seed, on a board the query's `board` (`wanted`) admits."""
    if robots != 4:
        raise Problem("invalid-input", "the library's themed puzzles have 4 robots: leave robots out or give 4",
                      field="robots")
    if BoardKind.of(wanted) is None:
        real_board(wanted)  # a spec that names no board is the client's to fix (400), not a theme's absence
    g = library.shared().draw(theme, Ricochet.TURN, random.Random(f"random-theme:{seed}:{theme}:{length}"),
                              length=length, fits=lambda spec: admits(wanted, spec))
    if g is None:
        where = f" of {length} moves" if length is not None else ""
        raise Problem("no-puzzle-found", f"the library holds no puzzle with the theme {theme}{where} on "
                      f"{wanted} boards (GET /v1/themes lists what it holds); ask for another length or board")
    return g


def _of_grade(ctx: Context, grade: str, board: str, robots: int, seed: str) -> Generated:
    lo, hi = lengths_of(grade)  # the lengths the grade's puzzles can have; each find's grade is checked
    deadline = time.monotonic() + RANDOM_SEARCH_BUDGET
    for attempt in range(40):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Problem("no-puzzle-found", f"no {grade} puzzle found in time for this seed; try another seed")
        g = generate(min_length=lo, max_length=hi, board=board, robots=robots,
                     seed=f"{seed}:{attempt}", time_budget=remaining, pools=ctx.pools)
        if g.difficulty["grade"] == grade:
            return g
    raise Problem("no-puzzle-found", f"no {grade} puzzle found for this seed; try another seed")


SOLUTIONS_LIMIT = 500  # distinct solutions a response lists at most


def solutions(ctx: Context, p: Puzzle, limit: int) -> SolutionsView:
    """GET /v1/puzzles/{code}/solutions: the distinct optimal solutions (solutions
    that differ only in the order of independent moves are one), up to `limit`."""
    length = len(_optimal(ctx, p, "solutions"))
    shown = distinct(p, length, limit=limit, time_budget=ctx.answers.budget, state_budget=ctx.answers.state_budget)
    if shown is None:
        raise Problem("needs-a-job", "listing this puzzle's solutions takes longer than a request may search")
    ratings.reveal(ctx, p)
    return cast(SolutionsView, {"code": p.code(), "length": length, **shown})  # distinct's keys: count ... solutions
