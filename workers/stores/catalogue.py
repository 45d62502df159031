"""The catalogue as the workers grow it: which family boards (swept or lifted)
and positions were tried (so each is done once, by one worker, and a build
resumes where it stopped), and the puzzles proven, by pool id.

Keys: `catalogue:tried` (a set of those keys), `catalogue:rows:<pool id>` (a
hash: puzzle code -> its solution and bound, JSON), `catalogue:pools` (the pool
ids that have rows).  It is a pool source too: a pool of the rows kept."""

from __future__ import annotations

import json
from typing import Any

from .base import Client, text_map, texts


class CatalogueStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def claim(self, key: str) -> bool:
        """True for the one caller that asks for this key first."""
        return bool(self.redis.sadd("catalogue:tried", key))

    def mark(self, keys: list[str]) -> None:
        """Claim these keys for no one: what is known already is not tried."""
        if keys:
            self.redis.sadd("catalogue:tried", *keys)

    def add(self, pool_id: str, code: str, found: dict[str, Any]) -> None:
        with self.redis.pipeline() as pipe:
            pipe.hset(f"catalogue:rows:{pool_id}", code, json.dumps(found))
            pipe.sadd("catalogue:pools", pool_id)
            pipe.execute()

    def rows(self, pool_id: str) -> dict[str, dict[str, Any]]:
        return {k: json.loads(v) for k, v in text_map(self.redis.hgetall(f"catalogue:rows:{pool_id}")).items()}

    def pool_ids(self) -> list[str]:
        return sorted(texts(self.redis.smembers("catalogue:pools")))

    def tried(self) -> int:
        return int(self.redis.scard("catalogue:tried"))

    # A pool source (solver.production.pools.Library): the pools the rows make.

    def ids(self) -> list[str]:
        return self.pool_ids()

    def read(self, pool_id: str) -> bytes | None:
        from solver.production.catalogue import from_json, pools_of

        rows = self.rows(pool_id)
        made = pools_of([from_json(code, item) for code, item in rows.items()]) if rows else []
        return made[0].dumps() if made else None


__all__ = ["CatalogueStore"]
