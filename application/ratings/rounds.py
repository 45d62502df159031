"""Rounds: a puzzle handed to a client without its answer opens a round, and
an answer shown to that client while it is open spoils it.  Only an attempt in
an unspoiled round moves ratings (docs/ratings.md)."""

from __future__ import annotations

from solver.model.puzzle import Puzzle
from solver.play import daily

from .. import Context


def open_round(ctx: Context, p: Puzzle) -> None:
    """`p` was handed to the client without its answer (GET /v1/puzzles/next or
    /v1/puzzles/random with solution=false, a daily puzzle)."""
    if ctx.stores is not None:
        ctx.stores.rounds.open(ctx.client, p.content_hash())


def reveal(ctx: Context, p: Puzzle) -> None:
    """The client is shown `p`'s answer: its players' attempts at `p` are not rated."""
    if ctx.stores is not None:
        ctx.stores.rounds.show(ctx.client, p.content_hash())


def is_today(ctx: Context, p: Puzzle) -> bool:
    """Whether `p` is today's daily puzzle (UTC): solving it keeps a streak.
    The day's record as this deployment published it, else the calendar's."""
    today = daily.today()
    found = ctx.stores.days.get(today.isoformat()) if ctx.stores is not None else None
    return (found or daily.daily_json(today))["code"] == p.code()
