"""Ratings from play: a player's first attempt at a puzzle rates both (Glicko-2,
solver/play/glicko.py), votes make a puzzle's popularity, and a player is handed
the next puzzle near their rating.  Players are the apps' own ids, scoped to the
API key that sent them (without a key, the public scope)."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from solver.model.puzzle import Move, Puzzle
from solver.play import daily
from solver.play.glicko import Rating, prior
from solver.play.grades import grade_of_rating
from solver.production.difficulty import difficulty as difficulty_of
from solver.production.generate import MAX_LENGTH, generate
from solver.production.generated import Generated, NoPuzzleFound
from solver.production.themes import themes

from . import Context
from .problems import Problem

PUBLIC = "public"
# Enough first attempts for a puzzle's grade to follow its rating rather than its formula.
GRADED_AFTER = 8


def scope(ctx: Context) -> str:
    """The players' scope of the caller: its API key's name, else the public one."""
    return ctx.client[len("key:"):] if ctx.client.startswith("key:") else PUBLIC


def puzzle_prior(ctx: Context, length: int | None, robots_moved: int) -> Rating:
    """Where a puzzle starts: from its optimal length (an unsolved one, or any
    without the prior, where a new player does)."""
    return prior(length, robots_moved) if length is not None and ctx.rating_prior else Rating()


def popularity(up: int, down: int) -> int:
    """Lichess's: -100 (all voted down) to 100 (all up), 0 without votes."""
    return round(100 * (up - down) / (up + down)) if up + down else 0


def shown(record: dict[str, Any]) -> dict[str, Any]:
    """A puzzle's record as responses carry it: `rating` and `popularity`."""
    return {"rating": {k: record[k] for k in ("value", "deviation", "plays", "wins")},
            "popularity": popularity(record["up"], record["down"])}


def of_puzzle(ctx: Context, p: Puzzle, length: int | None, robots_moved: int) -> dict[str, Any]:
    """The `rating` and `popularity` a response about `p` carries."""
    base = puzzle_prior(ctx, length, robots_moved)
    if ctx.stores is None:
        return shown({**base.to_json(), "plays": 0, "wins": 0, "up": 0, "down": 0})
    return shown(ctx.stores.ratings.puzzle(p.content_hash(), base))


def themes_of(ctx: Context, p: Puzzle, moves: list[Move]) -> list[str]:
    """The puzzle's themes (solver/production/themes.py), worked out once and kept."""
    kept = ctx.stores.answers.themes(p.content_hash()) if ctx.stores is not None else None
    if kept is not None:
        return kept
    found = themes(p, moves, time_budget=ctx.answers.budget)
    if ctx.stores is not None:
        ctx.stores.answers.save_themes(p.content_hash(), found)
    return found


def describe(ctx: Context, p: Puzzle, moves: list[Move], report: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a served puzzle with the optimal solution `moves` carries besides
    itself: `rating`, `popularity` and `themes`; and its difficulty `report`
    graded by its rating once GRADED_AFTER players have tried it."""
    out = {**of_puzzle(ctx, p, len(moves), len({m.robot for m in moves})), "themes": themes_of(ctx, p, moves)}
    if report is not None and out["rating"]["plays"] >= GRADED_AFTER:
        out["difficulty"] = {**report, "grade": grade_of_rating(out["rating"]["value"]), "graded_by": "rating"}
    return out


def describe_many(ctx: Context, items: list[tuple[Puzzle, list[Move]]]) -> list[dict[str, Any]]:
    """describe for a pack's puzzles: ratings in one round trip, and the themes
    kept for those served one by one, else those their solution shows at once."""
    priors = [puzzle_prior(ctx, len(moves), len({m.robot for m in moves})) for _, moves in items]
    if ctx.stores is None:
        rated = [{**base.to_json(), "plays": 0, "wins": 0, "up": 0, "down": 0} for base in priors]
        kept: list[list[str] | None] = [None] * len(items)
    else:
        hashes = [p.content_hash() for p, _ in items]
        rated = ctx.stores.ratings.puzzles(list(zip(hashes, priors, strict=True)))
        kept = ctx.stores.answers.themes_of(hashes)
    return [{**shown(record), "themes": known if known is not None else themes(p, moves, thorough=False)}
            for record, known, (p, moves) in zip(rated, kept, items, strict=True)]


def attempt(ctx: Context, p: Puzzle, verdict: dict[str, Any], player: str) -> dict[str, Any]:
    """Record `player`'s attempt at `p` (judged by `verdict`): what a verify
    response's `attempt` says.  Only an attempt whose optimum is proven can be
    rated; the player's first at a puzzle moves both ratings."""
    stores = ctx.required_stores()
    if verdict["optimality"] != "proven" or verdict["optimal_length"] is None:
        return {"rated": False, "reason": "the optimum of this puzzle is not known yet (POST /v1/solve finds it)"}
    known = ctx.answers.settled(p)
    robots_moved = len(known.robots_moved) if known is not None and known.status == "optimal" else 1
    base = puzzle_prior(ctx, verdict["optimal_length"], robots_moved)
    won = bool(verdict["optimal"])
    who = scope(ctx)
    before = stores.ratings.player_rating(who, player)
    done = stores.ratings.attempt(who, player, p.content_hash(), p.code(), won, base)
    today = daily.today()
    if won and p.code() == daily.daily_json(today)["code"]:
        stores.ratings.daily(who, player, today.isoformat(), (today - dt.timedelta(days=1)).isoformat())
    change = round(done.player["value"] - before.value, 1) if done.first else 0.0
    return {"rated": done.first, "won": won, "player": {**_player_rating(done.player), "change": change},
            "puzzle": shown(done.puzzle)["rating"]}


def _player_rating(record: dict[str, Any]) -> dict[str, Any]:
    return {"value": record["value"], "deviation": record["deviation"]}


def player(ctx: Context, player_id: str) -> dict[str, Any]:
    """GET /v1/players/{id}: rating, deviation, attempts, wins and the daily streak."""
    record = ctx.required_stores().ratings.player(scope(ctx), player_id)
    if record is None:
        raise Problem("not-found", f"no player {player_id!r} has played in this scope yet: its first "
                      "POST /v1/verify with \"player\" makes it")
    streak = record["streak"] if record.get("last_daily") in _streak_days() else 0
    return {"id": player_id, "scope": scope(ctx), "rating": _player_rating(record), "attempts": record["attempts"],
            "wins": record["wins"], "daily": {"streak": streak, "best_streak": record["best_streak"],
                                             "last_solved": record.get("last_daily")}}


def _streak_days() -> tuple[str, str]:
    """A streak lives on while its last day is today or yesterday."""
    today = daily.today()
    return today.isoformat(), (today - dt.timedelta(days=1)).isoformat()


def vote(ctx: Context, p: Puzzle, player_id: str, up: bool) -> dict[str, Any]:
    """A player's vote on a puzzle: the puzzle's popularity after it."""
    ups, downs = ctx.required_stores().ratings.vote(scope(ctx), player_id, p.content_hash(), p.code(), up)
    return {"code": p.code(), "popularity": popularity(ups, downs), "up": ups, "down": downs}


# Lichess's offsets from the player's rating, by the difficulty asked for.
OFFSETS = {"easiest": -600, "easier": -300, "normal": 0, "harder": 300, "hardest": 600}
NEXT_BUDGET = 9.0  # seconds the search for a player's next puzzle may take (a random puzzle's)
NEAR = 150  # a played puzzle this close to the aim is handed before a new one is drawn
TRIES = 16
FIRST_STEPS = 3  # a player's first puzzles (fewer attempts than this) are short whatever the aim
FIRST_STEPS_LONGEST = 6


def next_puzzle(ctx: Context, player_id: str, difficulty: str = "normal", theme: str | None = None) -> dict[str, Any]:
    """GET /v1/puzzles/next: a puzzle the player has not seen, near their rating
    plus the difficulty's offset, with its solution (GET /v1/puzzles/random's shape)."""
    stores = ctx.required_stores()
    who = scope(ctx)
    aim = stores.ratings.player_rating(who, player_id).value + OFFSETS[difficulty]
    record = stores.ratings.player(who, player_id)
    longest = FIRST_STEPS_LONGEST if record is None or record["attempts"] < FIRST_STEPS else None
    deadline = time.monotonic() + NEXT_BUDGET
    for g, seed in _candidates(ctx, who, player_id, aim, TRIES * (4 if theme else 1), longest):
        # A candidate found is served even past the deadline (a pool read for the first
        # time can take it all): the deadline only stops looking for more.
        if not stores.ratings.seen(who, player_id, [g.puzzle.content_hash()])[0]:
            served = ctx.answers.adopt(g.puzzle, g.solution)
            if served.moves != g.solution.moves:
                g = replace(g, solution=served,
                            difficulty=difficulty_of(g.puzzle, served, time_budget=ctx.answers.budget))
            described = describe(ctx, g.puzzle, served.moves, g.difficulty)
            if theme is None or theme in described["themes"]:
                stores.ratings.hand(who, player_id, g.puzzle.content_hash())
                return {**g.to_json(), "seed": seed, **described, "aim": round(aim, 1)}
        if time.monotonic() > deadline:
            break
    raise Problem("no-puzzle-found", "no puzzle the player has not seen was found near their rating in time"
                  + (f" with the theme {theme}" if theme else "") + "; ask again")


def _candidates(ctx: Context, who: str, player_id: str, aim: float, tries: int,
                longest: int | None = None) -> Iterator[tuple[Generated, str]]:
    """Played puzzles rated near `aim` first, then new ones of the length whose
    prior is nearest it, and of the lengths either side (pools first: generate
    draws from them); none longer than `longest`, if given."""
    most = longest or MAX_LENGTH
    for code in ctx.required_stores().ratings.near(aim, NEAR, tries):
        p = Puzzle.from_code(code)
        known = ctx.answers.settled(p)
        if known is not None and known.status == "optimal" and known.length <= most:
            yield Generated(p, known, difficulty_of(p, known, time_budget=ctx.answers.budget)), f"played:{code}"
    nearest = min(length_for(aim), most)
    for k in range(tries):
        seed = f"next:{who}:{player_id}:{uuid.uuid4().hex[:12]}:{k}"
        length = max(2, min(most, nearest + (0, 0, -1, 1)[k % 4]))
        try:
            yield generate(length, seed=seed, time_budget=NEXT_BUDGET / 2, pools=ctx.pools), seed
        except NoPuzzleFound:
            continue


def length_for(aim: float) -> int:
    """The optimal length whose prior (with one helper, the commonest) is nearest `aim`."""
    lengths = range(2, 23)
    return min(lengths, key=lambda n: abs(prior(n, 2).value - aim))
