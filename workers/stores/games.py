"""Games: one JSON state (`game:<id>`), a list of events (`game:<id>:events`),
player tokens, hashed (`game:<id>:tokens`), and the claim on solving a round
(`game:<id>:rating:<round>`), all kept GAME_TTL after the game's last change;
and what each address added to games and rooms a day (`stored:<client>:<day>`,
bytes of JSON, kept two days), which application/games.py bounds."""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from .base import Client, dump, optimistic

DAY = 24 * 3600
GAME_TTL = 2 * DAY  # games: two days after their last change (an idle game is not kept for a week)


class GameStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def create(self, state: dict[str, Any], events: list[dict[str, Any]], seats: dict[str, str]) -> None:
        """Keep a new game, its first events and its seats (token hash -> player name)."""
        gid = state["id"]
        with self.redis.pipeline() as pipe:
            pipe.set(f"game:{gid}", dump("game", state), ex=GAME_TTL)
            pipe.rpush(f"game:{gid}:events", *[json.dumps(e) for e in events])
            pipe.hset(f"game:{gid}:tokens", mapping=seats)
            for key in (f"game:{gid}:events", f"game:{gid}:tokens"):
                pipe.expire(key, GAME_TTL)
            pipe.execute()

    def get(self, gid: str) -> dict[str, Any] | None:
        raw = self.redis.get(f"game:{gid}")
        return json.loads(raw)["game"] if raw is not None else None

    def player(self, gid: str, token: str) -> str | None:
        name = self.redis.hget(f"game:{gid}:tokens", token_hash(token))
        return name.decode() if name is not None else None

    def update(self, gid: str, change: Any, write: bool = False) -> Any:
        """Apply `change(state) -> (events, result)` atomically: concurrent changes
        from any number of API processes are ordered by Redis and none is lost
        (optimistic WATCH/MULTI, retried).  The state is written when there are
        events (or always, with `write`).  Returns (state, result)."""
        key = f"game:{gid}"

        def step(raw: bytes | None, pipe: Any) -> Any:
            if raw is None:
                return None, None
            state = json.loads(raw)["game"]
            events, result = change(state)
            if events or write:
                pipe.multi()
                pipe.set(key, dump("game", state), ex=GAME_TTL)
                if events:
                    pipe.rpush(f"{key}:events", *[json.dumps(e) for e in events])
                pipe.expire(f"{key}:events", GAME_TTL)
                pipe.expire(f"{key}:tokens", GAME_TTL)
            return state, result

        return optimistic(self.redis, key, step, "game")

    def events(self, gid: str, since: int = 0) -> list[dict[str, Any]]:
        return [json.loads(e) for e in self.redis.lrange(f"game:{gid}:events", max(0, since), -1)]

    def stored_today(self, client: str) -> int:
        """Bytes of games and rooms `client` added today (UTC)."""
        return int(self.redis.get(_stored(client)) or 0)

    def charge(self, client: str, size: int) -> int:
        """Count `size` bytes more that `client` added today: its total."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.incrby(_stored(client), size)
            pipe.expire(_stored(client), 2 * DAY)
            return int(pipe.execute()[0])

    def claim_round_rating(self, gid: str, number: int, seconds: int) -> bool:
        """Whether this process is the one to solve round `number` (for `seconds`)."""
        return bool(self.redis.set(f"game:{gid}:rating:{number}", 1, nx=True, ex=seconds))


def _stored(client: str) -> str:
    return f"stored:{client}:{time.strftime('%Y-%m-%d', time.gmtime())}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
