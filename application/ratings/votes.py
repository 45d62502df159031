"""Votes: a puzzle's popularity, one vote per player, counted once per client."""

from __future__ import annotations

from typing import TypedDict

from solver.model.puzzle import Puzzle

from .. import Context


class VoteView(TypedDict):
    """service/shapes.py's Vote: a puzzle's popularity after a vote."""

    code: str
    popularity: int
    up: int
    down: int


def popularity(up: int, down: int) -> int:
    """Lichess's: -100 (all voted down) to 100 (all up), 0 without votes."""
    return round(100 * (up - down) / (up + down)) if up + down else 0


def voter(ctx: Context, player_id: str) -> str:
    """Who a vote counts for: an address's players count as one voter (made-up
    players are free), an API key's players each (the key answers for them)."""
    return f"{ctx.client}:{player_id}" if ctx.client.startswith("key:") else ctx.client


def vote(ctx: Context, p: Puzzle, player_id: str, up: bool) -> VoteView:
    """A player's vote on a puzzle: the puzzle's popularity after it."""
    ups, downs = ctx.required_stores().ratings.vote(voter(ctx, player_id), p.content_hash(), p.code(), up)
    return {"code": p.code(), "popularity": popularity(ups, downs), "up": ups, "down": downs}
