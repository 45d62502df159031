"""Rooms: where players gather by a shared link before a game starts.  One JSON
state (`room:<id>`) and the seats' tokens, hashed (`room:<id>:tokens`), both
expiring ROOM_TTL after the last change (GAME_TTL once started).  A seat's
token is also its token in the room's game, so a browser keeps one."""

from __future__ import annotations

from collections.abc import Callable
from typing import NotRequired, TypedDict, TypeVar

from redis.client import Pipeline

from solver.play.game import GameEvent, GameOptions
from solver.play.race import RaceState

from .base import Client, dump, maybe_text, optimistic, record, text_map
from .games import GAME_TTL, token_hash

ROOM_TTL = 6 * 3600  # a room nobody started: six hours after its last seat taken; a started one as its game
T = TypeVar("T")


class RoomState(TypedDict):
    """A room as the store keeps it (application/rooms.py changes it)."""
    id: str
    version: int
    created: float
    host: str
    players: list[str]  # seated, host first
    board: str
    options: GameOptions
    seed: str | None
    game: str | None  # the game's id once started
    mode: str  # game or race
    race_seconds: int | None
    robots: NotRequired[dict[str, str]]  # robot players, each with its strength
    race: NotRequired[RaceState]  # a race room's, once started
    race_events: NotRequired[list[GameEvent]]


class RoomStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def create(self, state: RoomState, name: str, token: str) -> bool:
        """Keep a new room with its host's seat; False when the id is taken."""
        rid = state["id"]
        with self.redis.pipeline() as pipe:
            pipe.set(f"room:{rid}", dump("room", state), ex=ROOM_TTL, nx=True)
            pipe.hset(f"room:{rid}:tokens", token_hash(token), name)
            pipe.expire(f"room:{rid}:tokens", ROOM_TTL)
            created, *_ = pipe.execute()
        return bool(created)

    def get(self, rid: str) -> RoomState | None:
        return record(self.redis.get(f"room:{rid}"), "room", RoomState)

    def seat(self, rid: str, token: str) -> str | None:
        """The name of the player whose token this is."""
        return maybe_text(self.redis.hget(f"room:{rid}:tokens", token_hash(token)))

    def tokens(self, rid: str) -> dict[str, str]:
        """Token hash -> name, as the room's game keeps them."""
        return text_map(self.redis.hgetall(f"room:{rid}:tokens"))

    def update(self, rid: str, change: Callable[[RoomState], T],
               token: tuple[str, str] | None = None) -> tuple[RoomState, T] | None:
        """Apply `change(state) -> result` atomically (optimistic, retried), with a
        new seat's (token, name) written in the same transaction.  Returns
        (state, result), or None when there is no such room."""
        key = f"room:{rid}"

        def step(raw: bytes | None, pipe: Pipeline) -> tuple[RoomState, T] | None:
            state = record(raw, "room", RoomState)
            if state is None:
                return None
            result = change(state)
            ttl = GAME_TTL if state.get("game") else ROOM_TTL
            pipe.multi()
            pipe.set(key, dump("room", state), ex=ttl)
            if token is not None:
                pipe.hset(f"{key}:tokens", token_hash(token[0]), token[1])
            pipe.expire(f"{key}:tokens", ttl)
            return state, result

        return optimistic(self.redis, key, step, "room")
