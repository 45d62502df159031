"""The deployment's pools (solver.production.pools format), in the Redis every
API and worker process already shares: `pool:v1:<id>` holds a pool's bytes, the
set `pools:v1` their ids, `pools:building` the pool build in flight.  Pools are
written whole, once, so every process may keep what it loaded."""

from __future__ import annotations

from .base import Client

BUILDING_TTL = 24 * 3600


class PoolStore:
    PREFIX = "pool:v1:"
    INDEX = "pools:v1"
    BUILDING = "pools:building"

    def __init__(self, client: Client) -> None:
        self.redis = client

    def ids(self) -> list[str]:
        return sorted(i.decode() for i in self.redis.smembers(self.INDEX))

    def read(self, pool: str) -> bytes | None:
        return self.redis.get(self.PREFIX + pool)

    def write(self, pool_id: str, data: bytes) -> None:
        with self.redis.pipeline() as pipe:  # MULTI: the index never names a pool that is not there
            pipe.set(self.PREFIX + pool_id, data)
            pipe.sadd(self.INDEX, pool_id)
            pipe.execute()

    def building(self) -> str | None:
        """The job of the pool build in flight, if any."""
        raw = self.redis.get(self.BUILDING)
        return raw.decode() if raw is not None else None

    def set_building(self, job_id: str) -> None:
        self.redis.set(self.BUILDING, job_id, ex=BUILDING_TTL)
