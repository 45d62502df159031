"""Multiplayer games: the server is referee and clock (solver/play/game.py).  Every
change is one atomic update of the stored game that settles the timers first;
a new round's optimum is searched outside any transaction and recorded after."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from solver.errors import InvalidInput
from solver.play.game import ROUND_SOLVE_BUDGET, Game, GameError, options_from_json
from solver.search.solve import solve
from workers.stores import Stores
from workers.stores.games import token_hash

from . import Context
from .problems import BY_STATUS, Problem, echo

MAX_TOKEN = 100
KEYWORDS = ("random", "beginner", "1999")  # boards drawn by the game's seed: any of 2013, no barriers, 1999


def _stores(ctx: Context) -> Stores:
    if ctx.stores is None:
        raise Problem("unavailable", "games need Redis: set REDIS_URL or run `ricochet serve`")
    return ctx.stores


def create(ctx: Context, body: dict[str, Any], now: float) -> tuple[dict[str, Any], dict[str, str]]:
    """A new game (a NewGame, loaded) and each player's token."""
    tokens = {name: secrets.token_urlsafe(24) for name in body["players"]}
    state = start(ctx, body, now, {token_hash(t): name for name, t in tokens.items()})
    return state, tokens


def start(ctx: Context, body: dict[str, Any], now: float, seats: dict[str, str]) -> dict[str, Any]:
    """Start a game of `body["players"]` whose seats (token hash -> name) are already handed out."""
    try:
        options = options_from_json(body["options"])
    except InvalidInput as e:
        raise e if e.field.startswith("options") else e.within("options") from None
    board, gid = body["board"], uuid.uuid4().hex
    seed = secrets.token_hex(16) if body.get("seed") is None else body["seed"]  # a secret deck unless seeded
    game = Game.create(gid, body["players"], None if board in KEYWORDS else board, options, seed, now,
                       beginner=board == "beginner", edition="1999" if board == "1999" else "2013")
    _stores(ctx).games.create(game.state, game.events, seats)
    return rated(ctx, gid, game.state)


def presented(token: str, what: str) -> None:
    """Refuse a request that sent no token (or one no token can be) before any lookup."""
    if not token or len(token) > MAX_TOKEN:
        raise Problem("unauthorized", f"send {what}: Authorization: Bearer <token>",
                      headers={"WWW-Authenticate": "Bearer"})


def player(ctx: Context, gid: str, token: str) -> str:
    """The name of the player whose token this is."""
    presented(token, "your player token")
    name = _stores(ctx).games.player(gid, token)
    if name is None:
        raise Problem("forbidden", "that token is not a player's token in this game")
    return name


def change(ctx: Context, gid: str, action: Callable[[Game], Any], now: float) -> tuple[dict[str, Any], Any]:
    """Apply an action to the stored game atomically (timers settled first): the
    game after it and the action's result."""
    def apply(state: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
        game = Game(state)
        game.advance(now)
        result = action(game)
        return game.events, result

    try:
        state, result = _stores(ctx).games.update(gid, apply)
    except GameError as e:
        raise Problem(BY_STATUS.get(e.status, "conflict"), str(e)) from None
    if state is None:
        raise Problem("not-found", f"no game {echo(gid)!r}: games are kept for a week after their last move")
    return rated(ctx, gid, state), result


def rated(ctx: Context, gid: str, state: dict[str, Any]) -> dict[str, Any]:
    """The referee searches a new round's optimum here, outside any transaction
    (a search may take seconds; a transaction retried on every concurrent bid
    must not), then records it in one short change.  One process does it (a
    lock per round); the others go on, the optimum following a moment later."""
    pending = Game(state).unrated()
    if pending is None:
        return state
    number, puzzle = pending
    stores = _stores(ctx)
    if not stores.games.claim_round_rating(gid, number, int(ROUND_SOLVE_BUDGET) + 30):
        return state
    answer = solve(puzzle, time_budget=ROUND_SOLVE_BUDGET)

    def record(s: dict[str, Any]) -> tuple[list[dict[str, Any]], None]:
        Game(s).rate_round(number, answer.length, answer.moves)
        return [], None

    after, _ = stores.games.update(gid, record, write=True)
    return after if after is not None else state


def view(ctx: Context, state: dict[str, Any], since: int | None = None, now: float | None = None) -> dict[str, Any]:
    """The game's public state, the events after version `since` when given, and
    the referee's clock `now` (so a page can run the sand timer down)."""
    out: dict[str, Any] = {"game": Game(state).public()}
    if now is not None:
        out["now"] = now
    if since is not None:
        out["events"] = _stores(ctx).games.events(state["id"], since)
    return out


def follow(ctx: Context, gid: str, seen: int, clock: Callable[[], float], seconds: float,
           poll: float = 0.25) -> Iterator[dict[str, Any]]:
    """The game's events after version `seen`, each once and in order, as they
    happen (timers settled as the clock runs), for `seconds` or until the game ends."""
    stores = _stores(ctx)
    if stores.games.get(gid) is None:
        raise Problem("not-found", f"no game {echo(gid)!r}")
    return _events(ctx, stores, gid, seen, clock, time.monotonic() + seconds, poll)


def _events(ctx: Context, stores: Stores, gid: str, seen: int, clock: Callable[[], float], deadline: float,
            poll: float) -> Iterator[dict[str, Any]]:
    while True:
        state, _ = stores.games.update(gid, lambda s: (_settle(s, clock()), None))
        if state is not None:
            state = rated(ctx, gid, state)
        for event in stores.games.events(gid, seen):
            seen = event["version"]
            yield event
        if state is None or state["phase"] == "finished" or time.monotonic() >= deadline:
            return
        time.sleep(poll)


def _settle(state: dict[str, Any], now: float) -> list[dict[str, Any]]:
    game = Game(state)
    game.advance(now)
    return game.events
