"""What play and the solver make of a served puzzle: its rating (from its
prior until played), popularity and themes, and its grade from its rating once
enough players tried it."""

from __future__ import annotations

from typing import NotRequired, TypedDict, cast

from solver.model.puzzle import Move, Puzzle, Ricochet
from solver.play.glicko import Rating, prior
from solver.play.grades import DifficultyReport, grade_of_rating
from solver.production import library
from solver.production.generated import PuzzleHead
from solver.production.packs import themes_known
from solver.production.themes import THEMES, themes
from workers.stores.ratings import PuzzleRecord

from .. import Context
from .votes import popularity

# Enough rated attempts for a puzzle's grade to follow its rating rather than its formula.
GRADED_AFTER = 8


class PuzzleRating(TypedDict):
    """service/shapes.py's PuzzleRating: a puzzle's rating as replies show it."""

    value: float
    deviation: float
    plays: int
    wins: int


class Shown(TypedDict):
    """What a response about a puzzle carries of its record: `rating` and `popularity`."""

    rating: PuzzleRating
    popularity: int


class Described(Shown):
    """service/shapes.py's Rated: what play and the solver make of a served puzzle
    (with its difficulty report graded by its rating, once played enough)."""

    themes: list[str]
    difficulty: NotRequired[DifficultyReport]


class RandomPuzzle(Shown, PuzzleHead):
    """service/shapes.py's RandomPuzzle, GET /v1/puzzles/random: a generated puzzle
    (solver/production/generated.py's Generated.to_json: the docs/formats.md puzzle,
    its code and DriftingDroids id, its optimal length, solution and difficulty
    report), its seed, and what play made of it."""

    driftingdroids_id: str | None
    solution: NotRequired[list[dict[str, str]]]  # a round's (solution=false) goes without it
    difficulty: DifficultyReport
    themes: list[str]
    seed: str


class NextPuzzle(RandomPuzzle):
    """service/shapes.py's NextPuzzle: GET /v1/puzzles/next."""

    aim: float
    off_aim: float


class ThemeHeld(TypedDict):
    """service/shapes.py's ThemeHeld."""

    count: int
    rating_min: int | None
    rating_max: int | None


class ThemeEntry(ThemeHeld):
    """service/shapes.py's ThemeEntry: a theme, what it means, what the library holds."""

    theme: str
    description: str
    by_ricochet: dict[str, ThemeHeld]


class ThemeList(TypedDict):
    """service/shapes.py's ThemeList: GET /v1/themes."""

    themes: list[ThemeEntry]


def puzzle_prior(ctx: Context, length: int | None, robots_moved: int) -> Rating:
    """Where a puzzle starts: from its optimal length (an unsolved one, or any
    without the prior, where a new player does)."""
    return prior(length, robots_moved) if length is not None and ctx.rating_prior else Rating()


def shown(record: PuzzleRecord) -> Shown:
    """A puzzle's record as responses carry it: `rating` and `popularity`."""
    return {"rating": {"value": record["value"], "deviation": record["deviation"], "plays": record["plays"],
                       "wins": record["wins"]},
            "popularity": popularity(record["up"], record["down"])}


def _unplayed(base: Rating) -> PuzzleRecord:
    rating = base.to_json()
    return {"value": rating["value"], "deviation": rating["deviation"], "plays": 0, "wins": 0, "up": 0, "down": 0}


def of_puzzle(ctx: Context, p: Puzzle, length: int | None, robots_moved: int) -> Shown:
    """The `rating` and `popularity` a response about `p` carries."""
    base = puzzle_prior(ctx, length, robots_moved)
    if ctx.stores is None:
        return shown(_unplayed(base))
    return shown(ctx.stores.ratings.puzzle(p.content_hash(), base))


def themes_of(ctx: Context, p: Puzzle, moves: list[Move], report: DifficultyReport | None = None) -> list[str]:
    """The puzzle's themes (solver/production/themes.py): those the library's
    offline pass gave it, else worked out once and kept; its difficulty
    `report`, when given, spares listing its solutions where the count it
    holds decides."""
    kept = ctx.stores.answers.themes(p.content_hash()) if ctx.stores is not None else None
    if kept is not None:
        return kept
    found = library.shared().lookup(p, len(moves))  # the offline pass's (issue 68): no listing in a request
    if found is None:
        found = themes(p, moves, time_budget=ctx.answers.budget, report=report)
    if ctx.stores is not None:
        ctx.stores.answers.save_themes(p.content_hash(), found)
    return found


def describe(ctx: Context, p: Puzzle, moves: list[Move], report: DifficultyReport | None = None) -> Described:
    """What a served puzzle with the optimal solution `moves` carries besides
    itself: `rating`, `popularity` and `themes`; and its difficulty `report`
    graded by its rating once GRADED_AFTER players have tried it."""
    known = of_puzzle(ctx, p, len(moves), len({m.robot for m in moves}))
    out = Described(rating=known["rating"], popularity=known["popularity"], themes=themes_of(ctx, p, moves, report))
    if report is not None and out["rating"]["plays"] >= GRADED_AFTER:
        # the report's keys (DifficultyReport's), its grade from the rating
        out["difficulty"] = cast(DifficultyReport, {**report, "grade": grade_of_rating(out["rating"]["value"]),
                                                    "graded_by": "rating"})
    return out


def describe_many(ctx: Context, items: list[tuple[Puzzle, list[Move]]]) -> list[Described]:
    """describe for a pack's puzzles: ratings in one round trip, and the themes
    kept for those served one by one, else packs.themes_known's (the library's
    pass's; a short one's listed; else those their solution shows at once), as
    the pack's plan chose them by."""
    priors = [puzzle_prior(ctx, len(moves), len({m.robot for m in moves})) for _, moves in items]
    if ctx.stores is None:
        rated = [_unplayed(base) for base in priors]
        kept: list[list[str] | None] = [None] * len(items)
    else:
        hashes = [p.content_hash() for p, _ in items]
        rated = ctx.stores.ratings.puzzles(list(zip(hashes, priors, strict=True)))
        kept = ctx.stores.answers.themes_of(hashes)
    return [Described(**shown(record), themes=known if known is not None else themes_known(p, moves))
            for record, known, (p, moves) in zip(rated, kept, items, strict=True)]


def library_themes() -> ThemeList:
    """GET /v1/themes: each theme, what it means, and how many puzzles the
    library holds with it under each ricochet option and the ratings they start
    at (the index /v1/puzzles/next and random?theme= read)."""
    index = library.shared()
    out: list[ThemeEntry] = []
    for name, meaning in THEMES.items():
        by_option: dict[str, ThemeHeld] = {}
        for option in Ricochet:
            span = index.span(name, option)
            by_option[option.value] = {"count": index.count(name, option),
                                       "rating_min": round(span[0]) if span else None,
                                       "rating_max": round(span[1]) if span else None}
        out.append({"theme": name, "description": meaning, **by_option[Ricochet.TURN.value], "by_ricochet": by_option})
    return {"themes": out}
