"""Games: one JSON state (`game:<id>`), a list of events (`game:<id>:events`),
player tokens, hashed (`game:<id>:tokens`), and the claim on solving a round
(`game:<id>:rating:<round>`), all kept GAME_TTL after the game's last change;
and what each address added to games and rooms a day (`stored:<client>:<day>`,
bytes of JSON, kept two days), which application/games.py bounds."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import TypeVar

from redis.client import Pipeline

from solver.play.game import GameEvent, GameState

from .base import Client, dump, fields, maybe_text, number, optimistic, record

T = TypeVar("T")

DAY = 24 * 3600
GAME_TTL = 2 * DAY  # games: two days after their last change (an idle game is not kept for a week)


class GameStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def create(self, state: GameState, events: list[GameEvent], seats: dict[str, str]) -> None:
        """Keep a new game, its first events and its seats (token hash -> player name)."""
        gid = state["id"]
        with self.redis.pipeline() as pipe:
            pipe.set(f"game:{gid}", dump("game", state), ex=GAME_TTL)
            pipe.rpush(f"game:{gid}:events", *[json.dumps(e) for e in events])
            pipe.hset(f"game:{gid}:tokens", mapping=fields(seats))
            for key in (f"game:{gid}:events", f"game:{gid}:tokens"):
                pipe.expire(key, GAME_TTL)
            pipe.execute()

    def get(self, gid: str) -> GameState | None:
        return record(self.redis.get(f"game:{gid}"), "game", GameState)

    def player(self, gid: str, token: str) -> str | None:
        return maybe_text(self.redis.hget(f"game:{gid}:tokens", token_hash(token)))

    def update(self, gid: str, change: Callable[[GameState], tuple[list[GameEvent], T]],
               write: bool = False) -> tuple[GameState, T] | None:
        """Apply `change(state) -> (events, result)` atomically: concurrent changes
        from any number of API processes are ordered by Redis and none is lost
        (optimistic WATCH/MULTI, retried).  The state is written when there are
        events (or always, with `write`).  Returns (state, result), or None when there is no such game."""
        key = f"game:{gid}"

        def step(raw: bytes | None, pipe: Pipeline) -> tuple[GameState, T] | None:
            state = record(raw, "game", GameState)
            if state is None:
                return None
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

    def events(self, gid: str, since: int = 0) -> list[GameEvent]:
        return [json.loads(e) for e in self.redis.lrange(f"game:{gid}:events", max(0, since), -1)]

    def stored_today(self, client: str) -> int:
        """Bytes of games and rooms `client` added today (UTC)."""
        return number(self.redis.get(_stored(client)))

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
