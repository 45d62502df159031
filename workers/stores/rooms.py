"""Rooms: where players gather by a shared link before a game starts.  One JSON
state (`room:<id>`) and the seats' tokens, hashed (`room:<id>:tokens`), both
expiring ROOM_TTL after the last change (GAME_TTL once started).  A seat's
token is also its token in the room's game, so a browser keeps one."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .base import Client, dump, optimistic
from .games import GAME_TTL, token_hash

ROOM_TTL = 6 * 3600  # a room nobody started: six hours after its last seat taken; a started one as its game


class RoomStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def create(self, state: dict[str, Any], name: str, token: str) -> bool:
        """Keep a new room with its host's seat; False when the id is taken."""
        rid = state["id"]
        with self.redis.pipeline() as pipe:
            pipe.set(f"room:{rid}", dump("room", state), ex=ROOM_TTL, nx=True)
            pipe.hset(f"room:{rid}:tokens", token_hash(token), name)
            pipe.expire(f"room:{rid}:tokens", ROOM_TTL)
            created, *_ = pipe.execute()
        return bool(created)

    def get(self, rid: str) -> dict[str, Any] | None:
        raw = self.redis.get(f"room:{rid}")
        return json.loads(raw)["room"] if raw is not None else None

    def seat(self, rid: str, token: str) -> str | None:
        """The name of the player whose token this is."""
        name = self.redis.hget(f"room:{rid}:tokens", token_hash(token))
        return name.decode() if name is not None else None

    def tokens(self, rid: str) -> dict[str, str]:
        """Token hash -> name, as the room's game keeps them."""
        return {k.decode(): v.decode() for k, v in self.redis.hgetall(f"room:{rid}:tokens").items()}

    def update(self, rid: str, change: Callable[[dict[str, Any]], Any], token: tuple[str, str] | None = None) -> Any:
        """Apply `change(state) -> result` atomically (optimistic, retried), with a
        new seat's (token, name) written in the same transaction.  Returns
        (state, result), or (None, None) when there is no such room."""
        key = f"room:{rid}"

        def step(raw: bytes | None, pipe: Any) -> Any:
            if raw is None:
                return None, None
            state = json.loads(raw)["room"]
            result = change(state)
            ttl = GAME_TTL if state.get("game") else ROOM_TTL
            pipe.multi()
            pipe.set(key, dump("room", state), ex=ttl)
            if token is not None:
                pipe.hset(f"{key}:tokens", token_hash(token[0]), token[1])
            pipe.expire(f"{key}:tokens", ttl)
            return state, result

        return optimistic(self.redis, key, step, "room")
