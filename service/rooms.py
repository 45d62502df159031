"""Rooms: players gather by a shared link, then the host starts the game
(application/rooms.py).  The page at /r/{id} plays it in the browser."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app
from marshmallow import RAISE, Schema, fields, validate

from application import games as play
from application import rooms
from workers.schemas import Seed, text

from .common import bearer_token, context
from .declare import Reply, operation
from .shapes import GameOptions, RoomView, Seat, StartedRoom

bp = Blueprint("rooms", __name__)

NAME = fields.String(required=True, validate=[text, validate.Length(1, 40)],
                     metadata={"description": "the player's name, shown to the others (1 to 40 characters of text)",
                               "pattern": "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$"})
ROOM_ID = {"name": "room_id", "in": "path", "required": True,
           "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,40}$"}}
ROOM_LINKS = {"getRoom": {"operationId": "getRoom", "parameters": {"room_id": "$response.body#/room/id"}}}


class NewRoom(Schema):
    class Meta:
        unknown = RAISE

    name = NAME
    board = fields.String(load_default="random", validate=validate.Length(max=200), metadata={
        "description": "a spec, \"random\" (any 2013 board), \"beginner\" (no barrier sections) or \"1999\" "
                       "(a 1999 board)"})
    options = fields.Dict(load_default=dict, metadata={"shape": GameOptions})
    seed = Seed(metadata={"description": "fixes board, robots and every shuffle of the room's game (kept from "
                                         "the players); without one the server draws a secret"})


class Joining(Schema):
    class Meta:
        unknown = RAISE

    name = NAME


@operation(bp, "post /v1/rooms", "createRoom", tag="games", body=NewRoom, errors=(400, 503),
           summary="Open a room for a game (docs/rules.md section 5): the host's seat and token",
           description="Send the link /r/{id} to the others; they take seats with POST /v1/rooms/{id}/players, "
                       "then the host starts the game.  Options are those of POST /v1/games.",
           replies={201: Reply("The room and the host's token", Seat,
                               headers={"Location": {"schema": {"type": "string"}}}, links=ROOM_LINKS)})
def create_room(body: dict[str, Any]) -> Any:
    room, token = rooms.create(context(), body, current_app.config["CLOCK"]())
    return {"room": room, "token": token}, 201, {"Location": f"/v1/rooms/{room['id']}"}


@operation(bp, "get /v1/rooms/<room_id>", "getRoom", tag="games", parameters=[ROOM_ID], errors=(404, 503),
           summary="The room: its players, host, board and options, and its game once started",
           replies={200: Reply("The room", RoomView)})
def get_room(room_id: str) -> Any:
    return {"room": rooms.get(context(), room_id)}


@operation(bp, "post /v1/rooms/<room_id>/players", "joinRoom", tag="games", parameters=[ROOM_ID], body=Joining,
           errors=(400, 404, 409, 503), summary="Take a seat in a room by name, before its game starts",
           replies={201: Reply("The room and this seat's token", Seat)})
def join_room(room_id: str, body: dict[str, Any]) -> Any:
    room, token = rooms.join(context(), room_id, body["name"])
    return {"room": room, "token": token}, 201


@operation(bp, "post /v1/rooms/<room_id>/start", "startRoom", tag="games", parameters=[ROOM_ID],
           security=[{"player": []}], errors=(401, 403, 404, 409, 503),
           summary="The host starts the room's game with everyone seated (alone: solitaire)",
           description="Each seat's token is its player's token in the game.",
           replies={200: Reply("The room and its game", StartedRoom)})
def start_room(room_id: str) -> Any:
    ctx, now = context(), current_app.config["CLOCK"]()
    room, game = rooms.start(ctx, room_id, bearer_token(), now)
    return {"room": room, **play.view(ctx, game, now=now)}
