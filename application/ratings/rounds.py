"""Rounds: a puzzle handed to a client without its answer opens a round, and
an answer shown to that client (its key or its address) within SHOWN_SECONDS
before or while it is open spoils it, as does a verify in it that is not its
first player's attempt.  Only an attempt in an unspoiled round moves ratings
(docs/ratings.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from solver.model.puzzle import Puzzle
from solver.play import daily
from workers.stores import Stores

from .. import Context


def clients(ctx: Context) -> tuple[str, ...]:
    """Who an answer shown is kept under: the client (its key, else its address),
    then its address when it sent a key (the same machine without the key)."""
    return (ctx.client,) + ((ctx.address,) if ctx.address and ctx.address != ctx.client else ())


def open_round(ctx: Context, p: Puzzle, player: str = "") -> None:
    """`p` was handed to the client without its answer (GET /v1/puzzles/next to
    `player`, /v1/puzzles/random with solution=false, a daily puzzle): spoiled
    from the start if the client was shown its answer lately."""
    if ctx.stores is not None:
        ctx.stores.rounds.open(clients(ctx), p.content_hash(), player)


def reveal(ctx: Context, p: Puzzle) -> None:
    """The client is shown (or checked) `p`'s answer: its players' attempts at
    `p` are not rated, in a round open now or opened within SHOWN_SECONDS."""
    if ctx.stores is not None:
        ctx.stores.rounds.show(clients(ctx), p.content_hash())


def packed(stores: Stores, askers: Iterable[str], items: Iterable[Mapping[str, object]]) -> None:
    """A pack's items were made with their answers for `askers` (the clients that
    asked for the pack): each counts as shown to them, as a solution read does,
    so their rounds on it are not rated while the pack is kept (a week)."""
    stores.rounds.pack(askers, [Puzzle.from_code(str(item["code"])).content_hash() for item in items])


def made_a_pack_with(ctx: Context, p: Puzzle) -> bool:
    """Whether the client (its key or its address) made a pack holding `p`."""
    return ctx.stores is not None and ctx.stores.rounds.packed(clients(ctx), p.content_hash())


def answers_for_its_players(ctx: Context) -> bool:
    """An API key answers for its players (the operator issued it to an app, and
    a key moves a puzzle by a bounded amount a day): in its rounds each player's
    first attempt counts, and its verifies without a player are the app checking
    a guest's answer, not a check that spoils a round.  An address (anyone, who
    can make up players for free) gets neither: the first player to answer a
    round it opened claims it."""
    return ctx.client.startswith("key:")


def checked(ctx: Context, p: Puzzle) -> None:
    """An answer to `p` checked without a player (POST /v1/verify): from an address,
    the answer is as good as shown; from an API key, an app's guest."""
    if not answers_for_its_players(ctx):
        reveal(ctx, p)


def is_today(ctx: Context, p: Puzzle) -> bool:
    """Whether `p` is today's daily puzzle (UTC): solving it keeps a streak.
    The day's record as this deployment published it, else the calendar's."""
    today = daily.today()
    found = ctx.stores.days.get(today.isoformat()) if ctx.stores is not None else None
    return (found or daily.daily_json(today))["code"] == p.code()
