"""Rooms: players gather by a shared link, then the host starts the game
(application/rooms.py).  The page at /r/{id} plays it in the browser."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app

from application import games as play
from application import rooms

from .common import bearer_token, context
from .declare import Reply, operation
from .games import EVENT_STREAM, streamed
from .requests.games import LastEventHeader, SinceQuery
from .requests.rooms import Joining, NewRobot, NewRoom, RaceMove, RobotPath, RoomPath
from .shapes import RaceMoved, RoomView, Seat, StartedRoom

bp = Blueprint("rooms", __name__)

ROOM_LINKS = {"getRoom": {"operationId": "getRoom", "parameters": {"room_id": "$response.body#/room/id"}}}


@operation(bp, "post /v1/rooms", "createRoom", tag="games", body=NewRoom, errors=(400, 503),
           summary="Open a room for a game (docs/rules.md section 5): the host's seat and token",
           description="Send the link /r/{id} to the others; they take seats with POST /v1/rooms/{id}/players, "
                       "then the host starts the game.  Options are those of POST /v1/games.",
           replies={201: Reply("The room and the host's token", Seat,
                               headers={"Location": {"schema": {"type": "string"}}}, links=ROOM_LINKS)})
def create_room(body: rooms.NewRoom) -> Any:  # loaded by the NewRoom schema, whose fields it names
    room, token = rooms.create(context(), body, current_app.config["CLOCK"]())
    return {"room": room, "token": token}, 201, {"Location": f"/v1/rooms/{room['id']}"}


@operation(bp, "get /v1/rooms/<room_id>", "getRoom", tag="games", path=RoomPath, errors=(404, 503),
           summary="The room: its players, host, board and options, and its game once started",
           replies={200: Reply("The room", RoomView)})
def get_room(room_id: str) -> Any:
    return {"room": rooms.get(context(), room_id)}


@operation(bp, "post /v1/rooms/<room_id>/players", "joinRoom", tag="games", path=RoomPath, body=Joining,
           errors=(400, 404, 409, 503), summary="Take a seat in a room by name, before its game starts",
           replies={201: Reply("The room and this seat's token", Seat)})
def join_room(room_id: str, body: dict[str, Any]) -> Any:
    room, token = rooms.join(context(), room_id, body["name"])
    return {"room": room, "token": token}, 201


@operation(bp, "post /v1/rooms/<room_id>/robots", "addRobot", tag="games", path=RoomPath, body=NewRobot,
           security=[{"player": []}], errors=(400, 401, 403, 404, 409, 503),
           summary="The host seats a robot player of a chosen strength, before the game starts",
           description="A robot finds solutions as a person of its strength would (docs/api.md): it bids, "
                       "lowers its bid, and shows its solution when its turn comes, under the room's rules.",
           replies={201: Reply("The room with the robot seated", RoomView)})
def add_robot(room_id: str, body: dict[str, Any]) -> Any:
    return {"room": rooms.add_robot(context(), room_id, bearer_token(), body["strength"], body.get("name"))}, 201


@operation(bp, "delete /v1/rooms/<room_id>/robots/<name>", "removeRobot", tag="games", path=RobotPath,
           security=[{"player": []}], errors=(400, 401, 403, 404, 409, 503),
           summary="The host takes a robot's seat away again, before the game starts",
           replies={200: Reply("The room without the robot", RoomView)})
def remove_robot(room_id: str, name: str) -> Any:
    return {"room": rooms.remove_robot(context(), room_id, bearer_token(), name)}


@operation(bp, "post /v1/rooms/<room_id>/start", "startRoom", tag="games", path=RoomPath,
           security=[{"player": []}], errors=(401, 403, 404, 409, 503),
           summary="The host starts the room's game with everyone seated (alone: solitaire)",
           description="Each seat's token is its player's token in the game.",
           replies={200: Reply("The room and its game", StartedRoom)})
def start_room(room_id: str) -> Any:
    ctx, now = context(), current_app.config["CLOCK"]()
    room, game = rooms.start(ctx, room_id, bearer_token(), now)
    return {"room": room, **play.view(ctx, game, now=now)} if game is not None else {"room": room, "now": now}


@operation(bp, "post /v1/rooms/<room_id>/race/solutions", "raceMove", tag="games", path=RoomPath, body=RaceMove,
           security=[{"player": []}], errors=(400, 401, 403, 404, 409, 503),
           summary="A racer shows a solution to their current puzzle (scored, then the next), or skips it (null)",
           replies={200: Reply("The room with its race, and what the solution scored", RaceMoved)})
def race_move(room_id: str, body: dict[str, Any]) -> Any:
    room, result = rooms.race_move(context(), room_id, bearer_token(), body["moves"], current_app.config["CLOCK"]())
    return {"room": room, "result": result}


@operation(bp, "get /v1/rooms/<room_id>/events", "roomEvents", tag="games", path=RoomPath, query=SinceQuery,
           header=LastEventHeader, errors=(400, 404, 503),
           summary="The room's race as server-sent events (race_started, race_solution, race_skip, race_over), "
                   "each once and in order, from ?since or Last-Event-ID; reconnect when it ends",
           replies={200: Reply("An event stream: `id` the race's version after the event, `event` its type, "
                               "`data` the event as JSON", media=EVENT_STREAM)})
def room_events(room_id: str, query: dict[str, Any], header: dict[str, Any]) -> Response:
    config = current_app.config
    events = rooms.follow(context(), room_id, header.get("last_event", query["since"]), config["CLOCK"],
                          config["GAME_SSE_SECONDS"])
    return streamed(events, f"GET /v1/rooms/{room_id}")
