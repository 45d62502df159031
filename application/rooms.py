"""Rooms: a game's players gather by a shared link.  The host opens a room with
the board and house rules, others take seats by name, and the host starts the
game; each seat's token (kept by its browser, never in the link) is its token
in the game too.  A room of one starts a solitaire game.  The host may seat
robot players of a chosen strength (solver/play/robot.py), who need no token."""

from __future__ import annotations

import secrets
from typing import Any

from solver.errors import InvalidInput
from solver.model.board import real_board
from solver.play.game import MAX_PLAYERS, options_from_json
from solver.play.robot import Strength

from . import Context, games
from .problems import Problem, echo

SEAT = "0" * 64  # a seat as the room keeps it: its token's hash (and its name)


def _rooms(ctx: Context) -> Any:
    if ctx.stores is None:
        raise Problem("unavailable", "rooms need Redis: set REDIS_URL or run `ricochet serve`")
    return ctx.stores.rooms


def public(state: dict[str, Any]) -> dict[str, Any]:
    """What anyone holding the link may see: not the seed, which fixes the deck."""
    return {k: v for k, v in state.items() if k != "seed"}


def create(ctx: Context, body: dict[str, Any], now: float) -> tuple[dict[str, Any], str]:
    """A new room (a NewRoom, loaded) with its host seated, and the host's token."""
    try:
        options = options_from_json(body["options"])
    except InvalidInput as e:
        raise e if e.field.startswith("options") else e.within("options") from None
    if body["board"] not in games.KEYWORDS:
        real_board(body["board"])  # raises InvalidInput("board", ...) for a bad spec
    games.within_budget(ctx)
    token = secrets.token_urlsafe(24)
    for _ in range(5):
        state = {"id": secrets.token_urlsafe(9), "version": 1, "created": now, "host": body["name"],
                 "players": [body["name"]], "board": body["board"], "options": options, "seed": body.get("seed"),
                 "game": None}
        if _rooms(ctx).create(state, body["name"], token):
            games.charge(ctx, games.stored_size(state, SEAT, body["name"], keys=2))
            return public(state), token
    raise RuntimeError("no free room id in five draws")


def _state(ctx: Context, rid: str) -> dict[str, Any]:
    state = _rooms(ctx).get(rid)
    if state is None:
        raise Problem("not-found", f"no room {echo(rid)!r}: rooms are kept six hours after their last seat is "
                      "taken, two days once their game starts")
    return state


def get(ctx: Context, rid: str) -> dict[str, Any]:
    return public(_state(ctx, rid))


def join(ctx: Context, rid: str, name: str) -> tuple[dict[str, Any], str]:
    """Seat a new player by name: their token (the seat charged to the caller's day)."""
    games.within_budget(ctx)
    token = secrets.token_urlsafe(24)

    def seat(state: dict[str, Any]) -> None:
        if state["game"] is not None:
            raise Problem("conflict", "the game in this room has started: ask the host for a new room")
        if name in state["players"]:
            raise Problem("conflict", f"{name!r} is taken in this room: choose another name")
        if len(state["players"]) >= MAX_PLAYERS:
            raise Problem("conflict", f"the room is full ({MAX_PLAYERS} players)")
        state["players"].append(name)
        state["version"] += 1

    state, _ = _rooms(ctx).update(rid, seat, token=(token, name))
    if state is None:
        _state(ctx, rid)  # raises not-found
    games.charge(ctx, games.stored_size(SEAT, name, name))  # the seat, and the name in the room's players
    return public(state), token


def seated(ctx: Context, rid: str, token: str) -> str:
    """The name of the player whose token this is."""
    games.presented(token, "your seat's token")
    name = _rooms(ctx).seat(rid, token)
    if name is None:
        _state(ctx, rid)  # raises not-found
        raise Problem("forbidden", "that token is not a seat's token in this room")
    return name


def start(ctx: Context, rid: str, token: str, now: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """The host starts the room's game: (room, game state)."""
    before = _state(ctx, rid)
    name = seated(ctx, rid, token)
    if before["host"] != name:
        raise Problem("forbidden", f"only the host ({before['host']}) starts the game")
    if before["game"] is not None:
        raise Problem("conflict", "the game in this room has started")
    games.within_budget(ctx)  # the game is the host's to pay for
    stores = _rooms(ctx)
    body = {"players": before["players"], "board": before["board"], "options": before["options"],
            "seed": before["seed"], "robots": before.get("robots", {})}
    game = games.start(ctx, body, now, stores.tokens(rid))

    def record(state: dict[str, Any]) -> str:
        if state["game"] is None and state["players"] == body["players"]:
            state["game"] = game["id"]
            state["version"] += 1
        return state["game"]

    state, gid = stores.update(rid, record)
    if gid != game["id"]:  # someone joined or started meanwhile: this game is never played
        raise Problem("conflict", "the room changed while the game was being set up: try again")
    return public(state), game


def robot_name(strength: Strength, taken: list[str]) -> str:
    """A robot's seat name when the host gave none: "Master robot", then "Master robot 2"..."""
    base = f"{strength.value.capitalize()} robot"
    return next(name for n in range(1, MAX_PLAYERS + 2) if (name := base if n == 1 else f"{base} {n}") not in taken)


def add_robot(ctx: Context, rid: str, token: str, strength: str, name: str | None) -> dict[str, Any]:
    """The host seats a robot player of `strength` (named `name`, or by its strength)."""
    before = _state(ctx, rid)
    host = seated(ctx, rid, token)
    if before["host"] != host:
        raise Problem("forbidden", f"only the host ({before['host']}) seats robots")
    games.within_budget(ctx)
    level = Strength(strength)
    seated_as = [name]

    def seat(state: dict[str, Any]) -> None:
        if state["game"] is not None:
            raise Problem("conflict", "the game in this room has started: robots join before the start")
        if len(state["players"]) >= MAX_PLAYERS:
            raise Problem("conflict", f"the room is full ({MAX_PLAYERS} players)")
        robot = name or robot_name(level, state["players"])
        if robot in state["players"]:
            raise Problem("conflict", f"{robot!r} is taken in this room: choose another name")
        state["players"].append(robot)
        state.setdefault("robots", {})[robot] = level.value
        state["version"] += 1
        seated_as[0] = robot

    state, _ = _rooms(ctx).update(rid, seat)
    if state is None:
        _state(ctx, rid)  # raises not-found
    games.charge(ctx, games.stored_size(seated_as[0], seated_as[0], level.value))
    return public(state)
