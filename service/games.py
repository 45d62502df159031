"""Multiplayer games over HTTP: the server is referee and clock (solver/play/game.py).

State lives in Redis (every API process agrees, an API restart loses nothing);
every change bumps the game's version and appends an event.  Clients poll
`GET /v1/games/{id}?since=VERSION` or stream `GET /v1/games/{id}/events`
(server-sent events).  Each player acts with the token returned when the game
was created (`Authorization: Bearer <token>`), so no one can bid or show a
solution for someone else.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, stream_with_context

from application import games as play
from solver.errors import InvalidInput

from . import limits
from .common import bearer_token, context
from .declare import Reply, event_stream, operation
from .errors import Problem
from .requests.games import Bid, LastEventHeader, NewGame, Shown, SinceQuery
from .shapes import AttemptView, GameEvent, GameView, NewGameView

bp = Blueprint("games", __name__)



def _now() -> float:
    return current_app.config["CLOCK"]()


def _player(gid: str) -> str:
    return play.player(context(), gid, bearer_token())


PLAYER: list[dict[str, list[str]]] = [{"player": []}]
ACTED = (400, 401, 403, 404, 409, 503)
NEW_GAME_LINKS = {"getGame": {"operationId": "getGame", "parameters": {"game_id": "$response.body#/game/id"}},
                  "gameEvents": {"operationId": "gameEvents", "parameters": {"game_id": "$response.body#/game/id"}}}


@operation(bp, "post /v1/games", "createGame", tag="games", body=NewGame, errors=(400, 503),
           summary="Start a game (docs/rules.md section 5); answers each player's token",
           description="players: 1 name (solitaire) to 16.  board: a spec, \"random\" (any 2013 board), "
                       "\"beginner\" (no barrier sections) or \"1999\" (a 1999 board).  options: timer_seconds "
                       "(60), idle_seconds (300), exact_bid (false), tie_break (fewer_chips | first_bid), "
                       "chips_to_win (by player count: 2 -> 8, 3 -> 6, 4 -> 5, more -> every chip), "
                       "scoring (chips | infinity), infinity_target "
                       "(50), solitaire_timer_factor (1 or 2), black_robot (false), ricochet (turn | none), "
                       "void_returns_chip (false).  Robots start on random cells without targets; the seed fixes "
                       "board, robots and every shuffle.",
           replies={201: Reply("The game, and a token per player (send it as Authorization Bearer)", NewGameView,
                               headers={"Location": {"schema": {"type": "string"}}}, links=NEW_GAME_LINKS)})
def create_game(body: play.NewGame) -> Any:  # loaded by the NewGame schema, whose fields it names
    ctx = context()
    state, tokens = play.create(ctx, body, _now())
    return {**play.view(ctx, state), "tokens": tokens}, 201, {"Location": f"/v1/games/{state['id']}"}


@operation(bp, "get /v1/games/<game_id>", "getGame", tag="games", query=SinceQuery, errors=(400, 404, 503),
           summary="The game's public state, and with ?since=VERSION the events after that version",
           replies={200: Reply("The game", GameView)})
def get_game(game_id: str, query: dict[str, Any]) -> Any:
    ctx = context()
    state, _ = play.change(ctx, game_id, lambda game: None, _now())  # looking settles the timers that ran out
    return play.view(ctx, state, query["since"], now=_now())


@operation(bp, "post /v1/games/<game_id>/bids", "bid", tag="games", body=Bid, security=PLAYER, errors=ACTED,
           summary="Bid a number of moves (the first bid starts the timer; a bid may only go down)",
           replies={200: Reply("The game after the bid", GameView)})
def bid(game_id: str, body: dict[str, Any]) -> Any:
    ctx, player = context(), _player(game_id)
    state, _ = play.change(ctx, game_id, lambda game: game.bid(player, body["moves"], _now()), _now())
    return play.view(ctx, state, now=_now())


@operation(bp, "post /v1/games/<game_id>/solutions", "showSolution", tag="games", body=Shown, security=PLAYER,
           errors=ACTED, summary="The player whose turn it is shows a solution (in solitaire, at any time before "
                                 "the timer ends)",
           replies={200: Reply("The attempt's result and the game after it", AttemptView)})
def show(game_id: str, body: dict[str, Any]) -> Any:
    ctx, player = context(), _player(game_id)
    try:
        state, result = play.change(ctx, game_id, lambda game: game.show(player, body["moves"], _now()), _now())
    except InvalidInput as e:
        raise e.within("moves") if not e.field.startswith("moves") else e from None
    return {"result": result, **play.view(ctx, state, now=_now())}


EVENT_STREAM = {"text/event-stream": {"schema": {
    "description": "One event of the stream (the schema describes each event)", "type": "object",
    "required": ["id", "event", "data"],
    "properties": {"id": {"type": "string", "pattern": "^[0-9]+$"}, "event": {"type": "string"},
                   "retry": {"description": "milliseconds before a client reconnects"},
                   "data": {"type": "string", "contentMediaType": "application/json",
                            "contentSchema": {"$ref": "#/components/schemas/GameEvent"}}}}}}


@operation(bp, "get /v1/games/<game_id>/events", "gameEvents", tag="games", query=SinceQuery, header=LastEventHeader,
           summary="Server-sent events, each event once and in order, from ?since or Last-Event-ID; reconnect "
                   "when it ends", errors=(400, 404, 503),
           replies={200: Reply("An event stream: each event's `id` is the game version after it, `event` its type "
                               "and `data` the GameEvent as JSON", media=EVENT_STREAM)})
def events(game_id: str, query: dict[str, Any], header: dict[str, Any]) -> Response:
    """Server-sent events: each game event once, in order, from `since` or Last-Event-ID."""
    start = header.get("last_event", query["since"])
    config = current_app.config
    events = play.follow(context(), game_id, start, config["CLOCK"], config["GAME_SSE_SECONDS"])
    return streamed(events, f"GET /v1/games/{game_id}?since=N")


def streamed(events: Iterator[Any], poll: str) -> Response:
    """Events as server-sent events (a game's, a room's race), within the stream limits."""
    config = current_app.config
    # A stream holds a thread for up to GAME_SSE_SECONDS: each process keeps most
    # of its threads for everything else, and a stream beyond its share is told to poll.
    # And one client holds at most STREAMS_PER_CLIENT over every process, so it cannot take them all.
    give_back = limits.hold("stream", config["STREAMS_PER_CLIENT"], config["GAME_SSE_SECONDS"] + 10, "event streams")
    streams = current_app.extensions.setdefault("game_streams", threading.BoundedSemaphore(config["GAME_STREAMS"]))
    if not streams.acquire(blocking=False):
        give_back()
        raise Problem("unavailable", f"too many event streams here now; poll {poll} instead, or retry",
                      headers={"Retry-After": "2"})

    def stream() -> Iterator[str]:
        try:
            yield "retry: 1000\n\n"
            yield from event_stream(GameEvent, events, "version", "type")
        finally:
            streams.release()
            give_back()

    return Response(stream_with_context(stream()), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
