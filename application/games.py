"""Multiplayer games: the server is referee and clock (solver/play/game.py).  Every
change is one atomic update of the stored game that settles the timers first;
a new round's optimum is searched outside any transaction and recorded after."""

from __future__ import annotations

import datetime as dt
import json
import secrets
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import NotRequired, TypedDict, TypeVar

from solver.errors import InvalidInput
from solver.play.game import ROUND_SOLVE_BUDGET, Game, GameError, GameEvent, GamePublic, GameState, options_from_json
from solver.search.solve import solve
from workers.stores import Stores
from workers.stores.games import token_hash

from . import Context
from .problems import BY_STATUS, Problem, echo

MAX_TOKEN = 100
KEYWORDS = ("random", "beginner", "1999")  # boards drawn by the game's seed: any of 2013, no barriers, 1999
T = TypeVar("T")


class NewGame(TypedDict):
    """POST /v1/games's body as loaded: the fields of service/requests/games.py's NewGame."""
    players: list[str]
    board: str
    options: Mapping[str, object]  # checked by options_from_json
    seed: NotRequired[str | None]


class GameView(TypedDict):
    """A game as clients see it: the keys of service/shapes.py's GameView."""
    game: GamePublic
    events: NotRequired[list[GameEvent]]
    now: NotRequired[float]


def _stores(ctx: Context) -> Stores:
    if ctx.stores is None:
        raise Problem("unavailable", "games need Redis: set REDIS_URL or run `ricochet serve`")
    return ctx.stores


def _budget(ctx: Context) -> int | None:
    """Bytes of games and rooms the caller may add a day: its address's budget
    (RICOCHET_ADDRESS_STATE_KB), or None (an API key, or no quotas in force)."""
    return ctx.quotas.get("state_bytes_a_day") if ctx.client.startswith("addr:") else None


def within_budget(ctx: Context) -> None:
    """Refuse (429 until midnight UTC) an address that added its day's bytes of
    games and rooms: each costs Redis for days, and one address must not fill it."""
    budget = _budget(ctx)
    if budget is None or _stores(ctx).games.stored_today(ctx.client) < budget:
        return
    midnight = (dt.datetime.now(dt.UTC) + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    wait = int((midnight - dt.datetime.now(dt.UTC)).total_seconds()) + 1
    raise Problem("rate-limited", f"this address added its {budget >> 10} KiB of games and rooms today (UTC): "
                  "play on tomorrow, or ask the operator for an API key (a key has no such limit)",
                  headers={"Retry-After": str(wait)})


def charge(ctx: Context, size: int) -> None:
    """Count `size` bytes the caller added to games and rooms today (an address only)."""
    if size > 0 and _budget(ctx) is not None:
        _stores(ctx).games.charge(ctx.client, size)


# What Redis holds for a key besides its value: without it, a day of one-player games
# and one-seat rooms charged at the budget took 1.68 times the budget (measured, 7.0).
KEY_BYTES = 200


def stored_size(*values: object, keys: int = 0) -> int:
    """The bytes `values` take as the stores keep them (JSON), in `keys` new keys."""
    return sum(len(json.dumps(v)) for v in values) + keys * KEY_BYTES


def create(ctx: Context, body: NewGame, now: float) -> tuple[GameState, dict[str, str]]:
    """A new game (a NewGame, loaded) and each player's token."""
    within_budget(ctx)
    tokens = {name: secrets.token_urlsafe(24) for name in body["players"]}
    state = start(ctx, body, now, {token_hash(t): name for name, t in tokens.items()})
    return state, tokens


def start(ctx: Context, body: NewGame, now: float, seats: dict[str, str],
          robots: dict[str, str] | None = None) -> GameState:
    """Start a game of `body["players"]` whose seats (token hash -> name) are already handed out,
    `robots` the robot players among them (name -> strength); its bytes are charged to the caller
    (the budget was checked by whoever asked)."""
    try:
        options = options_from_json(body["options"])
    except InvalidInput as e:
        raise e if e.field.startswith("options") else e.within("options") from None
    board, gid = body["board"], uuid.uuid4().hex
    given = body.get("seed")
    seed = secrets.token_hex(16) if given is None else given  # a secret deck unless seeded
    game = Game.create(gid, body["players"], None if board in KEYWORDS else board, options, seed, now,
                       beginner=board == "beginner", edition="1999" if board == "1999" else "2013",
                       robots=robots)
    _stores(ctx).games.create(game.state, game.events, seats)
    charge(ctx, stored_size(game.state, seats, *game.events, keys=4))  # state, events, seats, a claim
    return rated(ctx, gid, game.state, now)


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


def change(ctx: Context, gid: str, action: Callable[[Game], T], now: float) -> tuple[GameState, T]:
    """Apply an action to the stored game atomically (timers settled first): the
    game after it and the action's result.  What it adds is charged to the
    caller's day; an address past its budget may still look (the timers run),
    but not act."""
    budget = _budget(ctx)
    spent = budget is not None and _stores(ctx).games.stored_today(ctx.client) >= budget
    added = [0]

    def apply(state: GameState) -> tuple[list[GameEvent], T]:
        before = stored_size(state)
        game = Game(state)
        game.advance(now)
        settled = len(game.events)
        result = action(game)
        if spent and len(game.events) > settled:
            within_budget(ctx)  # raises: nothing of the action is written
        added[0] = max(0, stored_size(state) - before) + stored_size(*game.events) if game.events else 0
        return game.events, result

    try:
        changed = _stores(ctx).games.update(gid, apply)
    except GameError as e:
        raise Problem(BY_STATUS.get(e.status, "conflict"), str(e)) from None
    if changed is None:
        raise Problem("not-found", f"no game {echo(gid)!r}: games are kept for two days after their last move")
    state, result = changed
    charge(ctx, added[0])
    return rated(ctx, gid, state, now), result


def rated(ctx: Context, gid: str, state: GameState, now: float | None = None) -> GameState:
    """The referee searches a new round's optimum here, outside any transaction
    (a search may take seconds; a transaction retried on every concurrent bid
    must not), then records it in one short change.  One process does it (a
    lock per round); the others go on, the optimum following a moment later.
    Robot players start to think once it is known (at `now`, the referee's clock)."""
    pending = Game(state).unrated()
    if pending is None:
        return state
    number, puzzle = pending
    stores = _stores(ctx)
    if not stores.games.claim_round_rating(gid, number, int(ROUND_SOLVE_BUDGET) + 30):
        return state
    answer = solve(puzzle, time_budget=ROUND_SOLVE_BUDGET)

    def record(s: GameState) -> tuple[list[GameEvent], None]:
        Game(s).rate_round(number, answer.length, answer.moves, now)
        return [], None

    after = stores.games.update(gid, record, write=True)
    return after[0] if after is not None else state


def view(ctx: Context, state: GameState, since: int | None = None, now: float | None = None) -> GameView:
    """The game's public state, the events after version `since` when given, and
    the referee's clock `now` (so a page can run the sand timer down)."""
    out = GameView(game=Game(state).public())
    if now is not None:
        out["now"] = now
    if since is not None:
        out["events"] = _stores(ctx).games.events(state["id"], since)
    return out


def follow(ctx: Context, gid: str, seen: int, clock: Callable[[], float], seconds: float,
           poll: float = 0.25) -> Iterator[GameEvent]:
    """The game's events after version `seen`, each once and in order, as they
    happen (timers settled as the clock runs), for `seconds` or until the game ends."""
    stores = _stores(ctx)
    if stores.games.get(gid) is None:
        raise Problem("not-found", f"no game {echo(gid)!r}")
    return _events(ctx, stores, gid, seen, clock, time.monotonic() + seconds, poll)


def _events(ctx: Context, stores: Stores, gid: str, seen: int, clock: Callable[[], float], deadline: float,
            poll: float) -> Iterator[GameEvent]:
    while True:
        settled = stores.games.update(gid, lambda s: (_settle(s, clock()), None))
        state = rated(ctx, gid, settled[0], clock()) if settled is not None else None
        for event in stores.games.events(gid, seen):
            seen = event["version"]
            yield event
        if state is None or state["phase"] == "finished" or time.monotonic() >= deadline:
            return
        time.sleep(poll)


def _settle(state: GameState, now: float) -> list[GameEvent]:
    game = Game(state)
    game.advance(now)
    return game.events
