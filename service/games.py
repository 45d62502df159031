"""Multiplayer games over HTTP: the server is referee and clock (solver/game.py).

State lives in Redis (every API process agrees, an API restart loses nothing);
every change bumps the game's version and appends an event.  Clients poll
`GET /v1/games/{id}?since=VERSION` or stream `GET /v1/games/{id}/events`
(server-sent events).  Each player acts with the token returned when the game
was created (`Authorization: Bearer <token>`), so no one can bid or show a
solution for someone else.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context
from marshmallow import RAISE, Schema, fields, validate

from solver.errors import InvalidInput
from solver.game import ROUND_SOLVE_BUDGET, Game, GameError, options_from_json
from solver.solve import solve
from workers.schemas import Seed, load

from .errors import BY_STATUS, Problem, count_in, json_body
from .shapes import GameOptions, Move

games = Blueprint("games", __name__)

SSE_SECONDS = 25.0  # one event stream lasts this long; clients reconnect with Last-Event-ID
SSE_POLL = 0.25


class NewGame(Schema):
    class Meta:
        unknown = RAISE

    # Names and options are checked by solver.game (with its own messages); the metadata documents them.
    players = fields.List(fields.String(metadata={"minLength": 1, "maxLength": 40}), required=True,
                          validate=validate.Length(1, 16), metadata={"uniqueItems": True})
    board = fields.String(load_default="random", validate=validate.Length(max=200))
    options = fields.Dict(load_default=dict, metadata={"shape": GameOptions})
    seed = Seed(metadata={"description": "fixes board, robots and every shuffle; without one the server draws a "
                                         "secret"})


class Bid(Schema):
    class Meta:
        unknown = RAISE

    moves = fields.Raw(required=True, metadata={"shape": {"type": "integer", "minimum": 1, "maximum": 99}})


class Shown(Schema):
    class Meta:
        unknown = RAISE

    moves = fields.List(fields.Raw(metadata={"shape": Move}), required=True, validate=validate.Length(max=200))


NEW_GAME, BID, SHOWN = NewGame(), Bid(), Shown()


def _now() -> float:
    return current_app.config["CLOCK"]()


def _stores() -> Any:
    stores = current_app.extensions.get("stores")
    if stores is None:
        raise Problem("unavailable", "games need Redis: set REDIS_URL or run `ricochet serve`")
    return stores


def _player(gid: str) -> str:
    header = request.headers.get("Authorization", "")
    token = header[7:] if header.startswith("Bearer ") else ""
    if not token or len(token) > 100:
        raise Problem("unauthorized", "send your player token: Authorization: Bearer <token>",
                      headers={"WWW-Authenticate": "Bearer"})
    name = _stores().games.player(gid, token)
    if name is None:
        raise Problem("forbidden", "that token is not a player's token in this game")
    return name


def _change(gid: str, action: Callable[[Game], Any]) -> tuple[dict[str, Any], Any]:
    """Apply an action to the stored game atomically (timers settled first)."""
    def change(state: dict[str, Any]) -> tuple[list[dict[str, Any]], Any]:
        game = Game(state)
        game.advance(_now())
        result = action(game)
        return game.events, result

    try:
        state, result = _stores().games.update(gid, change)
    except GameError as e:
        raise Problem(BY_STATUS.get(e.status, "conflict"), str(e)) from None
    if state is None:
        raise Problem("not-found", f"no game {gid!r}: games are kept for a week after their last move")
    return _rated(gid, state), result


def _rated(gid: str, state: dict[str, Any]) -> dict[str, Any]:
    """The referee searches a new round's optimum here, outside any transaction
    (a search may take seconds; a transaction retried on every concurrent bid
    must not), then records it in one short change.  One process does it (a
    lock per round); the others go on, the optimum following a moment later."""
    pending = Game(state).unrated()
    if pending is None:
        return state
    number, puzzle = pending
    stores = _stores()
    if not stores.games.claim_round_rating(gid, number, int(ROUND_SOLVE_BUDGET) + 30):
        return state
    answer = solve(puzzle, time_budget=ROUND_SOLVE_BUDGET)

    def record(s: dict[str, Any]) -> tuple[list[dict[str, Any]], None]:
        Game(s).rate_round(number, answer.length, answer.moves)
        return [], None

    rated, _ = stores.games.update(gid, record, write=True)
    return rated if rated is not None else state


def _view(state: dict[str, Any], since: int | None = None) -> dict[str, Any]:
    out = {"game": Game(state).public()}
    if since is not None:
        out["events"] = _stores().games.events(state["id"], since)
    return out


@games.post("/v1/games")
def create_game() -> Response:
    """
    ---
    post:
      operationId: createGame
      summary: Start a game (RULES.md section 5); answers each player's token
      description: 'players: 1 name (solitaire) to 16.  board: a spec, "random" (any 2013 board) or "beginner"
        (no barrier sections).  options: timer_seconds (60), idle_seconds (300), exact_bid (false), tie_break
        (fewer_chips | first_bid), chips_to_win (by player count: 2 -> 8, 3 -> 6, 4 -> 5, more -> every chip),
        scoring (chips | infinity), infinity_target (50), solitaire_timer_factor (1 or 2), black_robot (false),
        ricochet (turn | none), void_returns_chip (false).  Robots start on random cells without targets;
        the seed fixes board, robots and every shuffle.'
      requestBody:
        required: true
        content: {application/json: {schema: NewGame}}
      responses:
        '201':
          description: The game, and a token per player (send it as Authorization Bearer)
          headers:
            Location: {schema: {type: string}}
          content: {application/json: {schema: NewGameView}}
          links:
            getGame:
              operationId: getGame
              parameters: {game_id: $response.body#/game/id}
            gameEvents:
              operationId: gameEvents
              parameters: {game_id: $response.body#/game/id}
        '400': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    body = load(NEW_GAME, json_body())
    try:
        options = options_from_json(body["options"])
    except InvalidInput as e:
        raise e if e.field.startswith("options") else e.within("options") from None
    board = body["board"]
    gid = uuid.uuid4().hex
    seed = secrets.token_hex(16) if body.get("seed") is None else body["seed"]  # a secret deck unless seeded
    game = Game.create(gid, body["players"], None if board in ("random", "beginner") else board, options,
                       seed, _now(), beginner=board == "beginner")
    tokens = {name: secrets.token_urlsafe(24) for name in body["players"]}
    _stores().games.create(game.state, game.events, tokens)
    state = _rated(gid, game.state)
    response = jsonify({**_view(state), "tokens": tokens})
    response.status_code = 201
    response.headers["Location"] = f"/v1/games/{gid}"
    return response


@games.get("/v1/games/<game_id>")
def get_game(game_id: str) -> Response:
    """
    ---
    get:
      operationId: getGame
      summary: The game's public state, and with ?since=VERSION the events after that version
      parameters:
      - Since
      responses:
        '200':
          description: The game
          content: {application/json: {schema: GameView}}
        '400': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    since = count_in(request.args.get("since", "0"), 9)
    if since is None:
        raise Problem("invalid-input", "since must be a version number (0 to 999999999)", field="since")
    state, _ = _change(game_id, lambda game: None)  # looking settles the timers that ran out
    return jsonify(_view(state, since))


@games.post("/v1/games/<game_id>/bids")
def bid(game_id: str) -> Response:
    """
    ---
    post:
      operationId: bid
      summary: Bid a number of moves (the first bid starts the timer; a bid may only go down)
      security:
      - {player: []}
      requestBody:
        required: true
        content: {application/json: {schema: Bid}}
      responses:
        '200':
          description: The game after the bid
          content: {application/json: {schema: GameView}}
        '400': {$ref: '#/components/responses/Problem'}
        '401': {$ref: '#/components/responses/Problem'}
        '403': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '409': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    body = load(BID, json_body())
    player = _player(game_id)
    state, _ = _change(game_id, lambda game: game.bid(player, body["moves"], _now()))
    return jsonify(_view(state))


@games.post("/v1/games/<game_id>/solutions")
def show(game_id: str) -> Response:
    """
    ---
    post:
      operationId: showSolution
      summary: The player whose turn it is shows a solution (in solitaire, at any time before the timer ends)
      security:
      - {player: []}
      requestBody:
        required: true
        content: {application/json: {schema: Shown}}
      responses:
        '200':
          description: The attempt's result and the game after it
          content: {application/json: {schema: AttemptView}}
        '400': {$ref: '#/components/responses/Problem'}
        '401': {$ref: '#/components/responses/Problem'}
        '403': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '409': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    body = load(SHOWN, json_body())
    player = _player(game_id)
    try:
        state, result = _change(game_id, lambda game: game.show(player, body["moves"], _now()))
    except InvalidInput as e:
        raise e.within("moves") if not e.field.startswith("moves") else e from None
    return jsonify({"result": result, **_view(state)})


@games.get("/v1/games/<game_id>/events")
def events(game_id: str) -> Response:
    """Server-sent events: each game event once, in order, from `since` or Last-Event-ID.

    ---
    get:
      operationId: gameEvents
      summary: Server-sent events, each event once and in order, from ?since or Last-Event-ID; reconnect when
        it ends
      parameters:
      - Since
      responses:
        '200':
          description: 'An event stream: each event''s `id` is the game version after it, `event` its type
            and `data` the GameEvent as JSON'
          content:
            text/event-stream:
              schema:
                description: One event of the stream (the schema describes each event)
                type: object
                required: [id, event, data]
                properties:
                  id: {type: string, pattern: '^[0-9]+$'}
                  event: {type: string}
                  retry: {description: milliseconds before a client reconnects}
                  data:
                    type: string
                    contentMediaType: application/json
                    contentSchema: {$ref: '#/components/schemas/GameEvent'}
        '400': {$ref: '#/components/responses/Problem'}
        '404': {$ref: '#/components/responses/Problem'}
        '503': {$ref: '#/components/responses/Unavailable'}
    """
    start = count_in(request.headers.get("Last-Event-ID") or request.args.get("since", "0"), 9)
    if start is None:
        raise Problem("invalid-input", "since (or Last-Event-ID) must be a version number (0 to 999999999)",
                      field="since")
    stores = _stores()
    if stores.games.get(game_id) is None:
        raise Problem("not-found", f"no game {game_id!r}")
    clock, seconds = current_app.config["CLOCK"], current_app.config["GAME_SSE_SECONDS"]
    # A stream holds a thread for up to GAME_SSE_SECONDS: each process keeps most
    # of its threads for everything else, and a stream beyond its share is told to poll.
    streams = current_app.extensions.setdefault(
        "game_streams", threading.BoundedSemaphore(current_app.config["GAME_STREAMS"]))
    if not streams.acquire(blocking=False):
        raise Problem("unavailable", "too many event streams here now; poll "
                      f"GET /v1/games/{game_id}?since=N instead, or retry", headers={"Retry-After": "2"})

    def stream() -> Iterator[str]:
        try:
            yield from events_since(start)
        finally:
            streams.release()

    def events_since(seen: int) -> Iterator[str]:
        deadline = time.monotonic() + seconds
        yield "retry: 1000\n\n"
        while True:
            state, _ = stores.games.update(game_id, lambda s: (_settle(s, clock()), None))
            if state is not None:
                state = _rated(game_id, state)
            for event in stores.games.events(game_id, seen):
                seen = event["version"]
                yield f"id: {seen}\nevent: {event['type']}\ndata: {json.dumps(event)}\n\n"
            if state is None or state["phase"] == "finished" or time.monotonic() >= deadline:
                return
            time.sleep(SSE_POLL)

    response = Response(stream_with_context(stream()), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _settle(state: dict[str, Any], now: float) -> list[dict[str, Any]]:
    game = Game(state)
    game.advance(now)
    return game.events
