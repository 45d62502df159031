"""Players: who a player is (the app's own id in its API key's scope), what
their attempts made of them, and their history."""

from __future__ import annotations

import datetime as dt
from typing import TypedDict

from solver.play import daily
from workers.stores.ratings import HISTORY_KEPT, HistoryLine, PlayerRecord, Streak

from .. import Context
from ..problems import Problem, echo

PUBLIC = "public"
__all__ = ["HISTORY_KEPT", "NEW_PLAYERS_A_DAY", "PUBLIC", "DailyStreak", "PlayerHistory", "PlayerRating", "PlayerView",
           "admitted", "history", "next_streak", "player", "rating_of", "scope", "solved_daily", "streak_days"]


class PlayerRating(TypedDict):
    """service/shapes.py's PlayerRating: a rating as replies show it."""

    value: float
    deviation: float


class DailyStreak(TypedDict):
    """service/shapes.py's DailyStreak."""

    streak: int
    best_streak: int
    last_solved: str | None


class PlayerView(TypedDict):
    """service/shapes.py's Player: GET /v1/players/{id}."""

    id: str
    scope: str
    rating: PlayerRating
    attempts: int
    rated: int
    wins: int
    daily: DailyStreak


class PlayerHistory(TypedDict):
    """service/shapes.py's PlayerHistory: GET /v1/players/{id}/attempts."""

    id: str
    scope: str
    attempts: list[HistoryLine]


def scope(ctx: Context) -> str:
    """The players' scope of the caller: its API key's name, else the public one."""
    return ctx.client[len("key:"):] if ctx.client.startswith("key:") else PUBLIC


# New players one address may make in a day (UTC): each costs Redis about 0.7 KB for 180 days.
NEW_PLAYERS_A_DAY = 1000


def admitted(ctx: Context, player_id: str) -> bool:
    """Whether the caller may make `player_id` now: a player it made before, or
    one more of the NEW_PLAYERS_A_DAY an address makes (an API key: any)."""
    stores = ctx.required_stores()
    return (not ctx.client.startswith("addr:") or stores.ratings.is_player(scope(ctx), player_id)
            or stores.ratings.new_player(ctx.client) <= NEW_PLAYERS_A_DAY)


def rating_of(record: PlayerRecord) -> PlayerRating:
    return {"value": record["value"], "deviation": record["deviation"]}


def _unknown(player_id: str) -> Problem:
    return Problem("not-found", f"no player {echo(player_id)!r} has played in this scope yet (or it was idle too "
                   "long): its first POST /v1/verify with \"player\" makes it")


def player(ctx: Context, player_id: str) -> PlayerView:
    """GET /v1/players/{id}: rating, deviation, attempts, wins and the daily streak."""
    record = ctx.required_stores().ratings.player(scope(ctx), player_id)
    if record is None:
        raise _unknown(player_id)
    streak = record["streak"] if record["last_daily"] in streak_days() else 0
    return {"id": player_id, "scope": scope(ctx), "rating": rating_of(record), "attempts": record["attempts"],
            "rated": record["rated"], "wins": record["wins"],
            "daily": {"streak": streak, "best_streak": record["best_streak"],
                      "last_solved": record["last_daily"]}}


def history(ctx: Context, player_id: str, limit: int) -> PlayerHistory:
    """GET /v1/players/{id}/attempts: the player's last attempts, newest first."""
    stores = ctx.required_stores()
    if stores.ratings.player(scope(ctx), player_id) is None:
        raise _unknown(player_id)
    return {"id": player_id, "scope": scope(ctx), "attempts": stores.ratings.history(scope(ctx), player_id, limit)}


def solved_daily(ctx: Context, player_id: str, day: dt.date) -> None:
    """The player solved the daily puzzle of `day` in a rated attempt: its streak goes on."""
    ctx.required_stores().ratings.streak(scope(ctx), player_id, lambda last, streak, best: next_streak(
        last, streak, best, day.isoformat(), (day - dt.timedelta(days=1)).isoformat()))


def next_streak(last: str | None, streak: int, best: int, day: str, yesterday: str) -> Streak | None:
    """The streak after solving the daily puzzle of `day`: it goes on from
    `yesterday`, else starts again (None: `day` was counted already)."""
    if last == day:
        return None
    now = streak + 1 if last == yesterday else 1
    return {"last_daily": day, "streak": now, "best_streak": max(now, best)}


def streak_days() -> tuple[str, str]:
    """A streak lives on while its last day is today or yesterday."""
    today = daily.today()
    return today.isoformat(), (today - dt.timedelta(days=1)).isoformat()
