"""What play and the solver make of a served puzzle: its rating (from its
prior until played), popularity and themes, and its grade from its rating once
enough players tried it."""

from __future__ import annotations

from typing import Any

from solver.model.puzzle import Move, Puzzle, Ricochet
from solver.play.glicko import Rating, prior
from solver.play.grades import grade_of_rating
from solver.production import library
from solver.production.packs import themes_known
from solver.production.themes import THEMES, themes

from .. import Context
from .votes import popularity

# Enough rated attempts for a puzzle's grade to follow its rating rather than its formula.
GRADED_AFTER = 8


def puzzle_prior(ctx: Context, length: int | None, robots_moved: int) -> Rating:
    """Where a puzzle starts: from its optimal length (an unsolved one, or any
    without the prior, where a new player does)."""
    return prior(length, robots_moved) if length is not None and ctx.rating_prior else Rating()


def shown(record: dict[str, Any]) -> dict[str, Any]:
    """A puzzle's record as responses carry it: `rating` and `popularity`."""
    return {"rating": {k: record[k] for k in ("value", "deviation", "plays", "wins")},
            "popularity": popularity(record["up"], record["down"])}


def _unplayed(base: Rating) -> dict[str, Any]:
    return {**base.to_json(), "plays": 0, "wins": 0, "up": 0, "down": 0}


def of_puzzle(ctx: Context, p: Puzzle, length: int | None, robots_moved: int) -> dict[str, Any]:
    """The `rating` and `popularity` a response about `p` carries."""
    base = puzzle_prior(ctx, length, robots_moved)
    if ctx.stores is None:
        return shown(_unplayed(base))
    return shown(ctx.stores.ratings.puzzle(p.content_hash(), base))


def themes_of(ctx: Context, p: Puzzle, moves: list[Move], report: dict[str, Any] | None = None) -> list[str]:
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


def describe(ctx: Context, p: Puzzle, moves: list[Move], report: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a served puzzle with the optimal solution `moves` carries besides
    itself: `rating`, `popularity` and `themes`; and its difficulty `report`
    graded by its rating once GRADED_AFTER players have tried it."""
    out = {**of_puzzle(ctx, p, len(moves), len({m.robot for m in moves})), "themes": themes_of(ctx, p, moves, report)}
    if report is not None and out["rating"]["plays"] >= GRADED_AFTER:
        out["difficulty"] = {**report, "grade": grade_of_rating(out["rating"]["value"]), "graded_by": "rating"}
    return out


def describe_many(ctx: Context, items: list[tuple[Puzzle, list[Move]]]) -> list[dict[str, Any]]:
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
    return [{**shown(record), "themes": known if known is not None else themes_known(p, moves)}
            for record, known, (p, moves) in zip(rated, kept, items, strict=True)]


def library_themes() -> dict[str, Any]:
    """GET /v1/themes: each theme, what it means, and how many puzzles the
    library holds with it under each ricochet option and the ratings they start
    at (the index /v1/puzzles/next and random?theme= read)."""
    index = library.shared()
    out = []
    for name, meaning in THEMES.items():
        by_option = {}
        for option in Ricochet:
            span = index.span(name, option)
            by_option[option.value] = {"count": index.count(name, option),
                                       "rating_min": round(span[0]) if span else None,
                                       "rating_max": round(span[1]) if span else None}
        out.append({"theme": name, "description": meaning, **by_option[Ricochet.TURN.value], "by_ricochet": by_option})
    return {"themes": out}
