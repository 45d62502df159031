"""Selection: the next puzzle for a player, near their rating, never one they
were handed or tried, handed in one step so that two requests at once never
hand the same puzzle to one player."""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from functools import lru_cache
from itertools import islice
from typing import cast

from solver.model.puzzle import Puzzle
from solver.play.glicko import prior
from solver.production import library
from solver.production.difficulty import difficulty as difficulty_of
from solver.production.generate import MAX_LENGTH, generate
from solver.production.generated import Generated, NoPuzzleFound
from solver.production.themes import LENGTH_THEMES, could_have, themes_of_length
from solver.search.solution import Solution

from .. import Context
from ..problems import Problem
from .players import NEW_PLAYERS_A_DAY, admitted, scope
from .rounds import open_round, reveal
from .themes import Described, NextPuzzle, describe

# Lichess's offsets from the player's rating, by the difficulty asked for.
OFFSETS = {"easiest": -600, "easier": -300, "normal": 0, "harder": 300, "hardest": 600}
NEXT_BUDGET = 9.0  # seconds the search for a player's next puzzle may take (a random puzzle's)
NEAR = 150  # a played puzzle this close to the aim is handed before a new one is drawn
NEAR_PAGES = 4  # windows of played puzzles read at most (each TRIES above and TRIES below the aim)
TRIES = 16
FIRST_STEPS = 3  # a player's first puzzles (fewer attempts than this) are short whatever the aim (and no theme asked)
FIRST_STEPS_LONGEST = 6
THEMED_LONGEST = 26  # the longest optimum the shipped pools hold: a theme's search widens up to it
THEMED_TRIES = 3  # new puzzles drawn of one length before a theme's window widens to the next length
LIBRARY_WINDOWS = 32  # windows of TRIES puzzles of the library's read for a theme before a search


def next_puzzle(ctx: Context, player_id: str, difficulty: str = "normal", theme: str | None = None,
                solution: bool = True) -> NextPuzzle:
    """GET /v1/puzzles/next: a puzzle the player has not seen, near their rating
    plus the difficulty's offset, in GET /v1/puzzles/random's shape; with its
    solution unless `solution` is false (then it opens a round: the player's
    first attempt within it is rated)."""
    stores = ctx.required_stores()
    who = scope(ctx)
    if not admitted(ctx, player_id):
        midnight = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0)
        wait = int((midnight - dt.datetime.now(dt.UTC)).total_seconds()) + 1
        raise Problem("rate-limited", f"this address made {NEW_PLAYERS_A_DAY} new players today (UTC); ask for "
                      "players it made before, or retry tomorrow (an API key has no such limit)",
                      headers={"Retry-After": str(wait)})
    aim = stores.ratings.player_rating(who, player_id).value + OFFSETS[difficulty]
    record = stores.ratings.player(who, player_id)
    first_steps = record is None or record["attempts"] < FIRST_STEPS
    longest = FIRST_STEPS_LONGEST if first_steps and theme is None else None  # a theme asked is the player's choice
    deadline = time.monotonic() + NEXT_BUDGET
    found = _themed(ctx, who, player_id, aim, theme, deadline) if theme else \
        _candidates(ctx, who, player_id, aim, TRIES, longest, deadline)
    for g, seed in found:
        # A candidate found is served even past the deadline (a pool read for the first
        # time can take it all): the deadline only stops looking for more.
        if (theme is None or could_have(theme, g.puzzle, g.difficulty)) \
                and stores.ratings.played(who, player_id, [g.puzzle.content_hash()])[0] is None:
            served = ctx.answers.adopt(g.puzzle, g.solution)
            if served.moves != g.solution.moves:
                g = replace(g, solution=served,
                            difficulty=difficulty_of(g.puzzle, served, time_budget=ctx.answers.budget))
            described = describe(ctx, g.puzzle, served.moves, g.difficulty)
            how = "shown" if solution else f"open:{time.time():.3f}"
            if (theme is None or theme in described["themes"]) and stores.ratings.hand(
                    who, player_id, g.puzzle.content_hash(), how):  # else another request handed it just now
                return _handed(ctx, g, seed, described, aim, solution, player_id)
        if time.monotonic() > deadline:
            break
    if theme:
        raise Problem("no-puzzle-found", f"no puzzle with the theme {theme} that the player has not seen was found "
                      f"in time, though the search widened from the aim ({aim:.0f}) to every length from 2 to "
                      f"{THEMED_LONGEST} moves that can have it: {theme} is rare among the puzzles drawn "
                      "(docs/ratings.md); ask again")
    raise Problem("no-puzzle-found", f"no puzzle the player has not seen was found near the aim ({aim:.0f}) in time"
                  "; ask again")


def _handed(ctx: Context, g: Generated, seed: str, described: Described, aim: float,
            solution: bool, player_id: str) -> NextPuzzle:
    # Generated.to_json's keys (Made's), then the seed, what play made of it (its difficulty graded by the rating,
    # once played enough) and how near the aim it is: the reply's order
    out = cast(NextPuzzle, {**g.to_json(), "seed": seed, **described, "aim": round(aim, 1),
                            "off_aim": round(described["rating"]["value"] - aim, 1)})
    if solution:
        reveal(ctx, g.puzzle)
    else:  # a round for the client too: an answer shown to it later spoils the round
        open_round(ctx, g.puzzle, player_id)
        del out["solution"]
    return out


def _candidates(ctx: Context, who: str, player_id: str, aim: float, tries: int,
                longest: int | None, deadline: float) -> Iterator[tuple[Generated, str]]:
    """Played puzzles rated near `aim` first (bounded windows, the player's own
    left out), then new ones of the length whose prior is nearest it, and of the
    lengths either side (pools first: generate draws from them); none longer
    than `longest`, if given; a search for a new one never past `deadline`."""
    most = longest or MAX_LENGTH
    yield from _played_near(ctx, who, player_id, aim, tries, most)
    nearest = min(length_for(aim), most)
    for k in range(tries):
        seed = f"next:{who}:{player_id}:{uuid.uuid4().hex[:12]}:{k}"
        length = max(2, min(most, nearest + (0, 0, -1, 1)[k % 4]))
        try:
            left = min(NEXT_BUDGET / 2, deadline - time.monotonic())
            if left <= 0 and k:  # the first is always tried (pools first: usually a draw, no search)
                return
            yield generate(length, seed=seed, time_budget=max(left, 0.5), pools=ctx.pools), seed
        except NoPuzzleFound:
            continue


def _themed(ctx: Context, who: str, player_id: str, aim: float, theme: str,
            deadline: float) -> Iterator[tuple[Generated, str]]:
    """Candidates for a theme, nearest the aim first, as Lichess's selector
    compromises: played puzzles rated within NEAR of the aim, then new ones of
    the length whose prior is nearest the aim, then of the next nearest, and
    so on (the window around the aim widened a length at a time, THEMED_TRIES
    draws each) over every length from 2 to THEMED_LONGEST that can have the
    theme.  Nearest first keeps `difficulty`'s order: a higher aim never
    reaches a shorter length first.  Why: a theme seldom near the aim
    (`short` for a player at 1500, `very-long` below 2500) answered 422 when
    only the lengths either side of the nearest were tried (issue 68).  The
    library's index comes first (`_from_library`): the search is left for a
    player who has seen every puzzle of the theme it holds near the aim."""
    yield from _played_near(ctx, who, player_id, aim, TRIES, THEMED_LONGEST)
    yield from _from_library(ctx, who, player_id, aim, theme)
    for n in widening(aim, theme):  # past what the library holds for this player: a search
        for k in range(THEMED_TRIES):
            left = deadline - time.monotonic()
            if left <= 0:
                return
            try:  # pools hold 8 moves and more (a draw); shorter ones are searched, in milliseconds
                seed = f"next:{who}:{player_id}:{uuid.uuid4().hex[:12]}:{n}:{k}"
                yield generate(n, seed=seed, time_budget=max(min(left, NEXT_BUDGET / 2), 0.5), pools=ctx.pools), seed
            except NoPuzzleFound:
                break  # none of this length to be had: widen


def _from_library(ctx: Context, who: str, player_id: str, aim: float, theme: str) -> Iterator[tuple[Generated, str]]:
    """The library's puzzles of the theme (solver/production/library.py), by
    their rating's distance from the aim, nearest first, those the player was
    handed or tried left out: a window of TRIES read in one round trip,
    LIBRARY_WINDOWS windows at most."""
    stores = ctx.required_stores()
    nearest = library.shared().nearest(theme, aim)
    index = library.shared()
    for _ in range(LIBRARY_WINDOWS):
        window = [index.generated(ref) for _, ref in islice(nearest, TRIES)]
        if not window:
            return
        played = stores.ratings.played(who, player_id, [g.puzzle.content_hash() for g in window])
        for g, was in zip(window, played, strict=True):
            if was is None:
                yield g, f"library:{g.puzzle.code()}"


def widening(aim: float, theme: str | None = None) -> list[int]:
    """The optimal lengths from 2 to THEMED_LONGEST (those a theme of lengths
    allows), by how far their prior (with one helper) lies from `aim`, nearest first."""
    lengths = [n for n in range(2, THEMED_LONGEST + 1)
               if theme not in LENGTH_THEMES or theme in themes_of_length(n)]
    return sorted(lengths, key=lambda n: (abs(prior(n, 2).value - aim), n))


def _played_near(ctx: Context, who: str, player_id: str, aim: float, tries: int,
                 most: int) -> Iterator[tuple[Generated, str]]:
    """Up to `tries` puzzles others played, rated within NEAR of `aim`, that this
    player was never handed, read a window at a time (NEAR_PAGES at most), with
    what is known of them read in one round trip a window."""
    stores = ctx.required_stores()
    given = 0
    for page in range(NEAR_PAGES):
        codes = stores.ratings.near(aim, NEAR, tries, offset=page * tries)
        if not codes:
            return
        hashes = [_hash_of(code) for code in codes]
        played = stores.ratings.played(who, player_id, hashes)
        fresh = [(code, h) for code, h, was in zip(codes, hashes, played, strict=True) if was is None]
        for (code, _), kept in zip(fresh, stores.answers.get_many([h for _, h in fresh]), strict=True):
            if kept is None or kept["status"] != "optimal" or kept["length"] > most:
                continue  # an answer no longer kept: the puzzle waits until it is served again
            p = Puzzle.from_code(code)
            known = Solution.from_json(p, kept)
            given += 1
            yield Generated(p, known, difficulty_of(p, known, time_budget=ctx.answers.budget)), f"played:{code}"
            if given >= tries:
                return


@lru_cache(maxsize=8192)  # the windows near common aims are read again and again: about 1.5 MB
def _hash_of(code: str) -> str:
    return Puzzle.from_code(code).content_hash()


def length_for(aim: float) -> int:
    """The optimal length whose prior (with one helper, the commonest) is nearest `aim`."""
    lengths = range(2, 23)
    return min(lengths, key=lambda n: abs(prior(n, 2).value - aim))
