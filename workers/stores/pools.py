"""The deployment's pools (solver.production.pools format), in the Redis every
API and worker process already shares: `pool:v1:<id>` holds a pool's bytes, the
set `pools:v1` their ids, `pools:building` the pool build in flight.  Pools are
written whole, once, so every process may keep what it loaded.  The workers'
themes pass (solver.production.library) keeps a pool's table of themes at
`pool-themes:v1:<id>` (its bytes, rewritten as the pass goes) and how far it
got at `pool-themes:pass` (a hash); none expires."""

from __future__ import annotations

from .base import Client, fields, maybe_text, number, text_map, texts

BUILDING_TTL = 24 * 3600


def _bytes(raw: bytes | str | None) -> bytes | None:
    """A stored pool's or table's bytes (this service's clients read bytes; a str is encoded back)."""
    return raw.encode() if isinstance(raw, str) else raw


class PoolStore:
    PREFIX = "pool:v1:"
    INDEX = "pools:v1"
    BUILDING = "pools:building"

    def __init__(self, client: Client) -> None:
        self.redis = client

    def ids(self) -> list[str]:
        return sorted(texts(self.redis.smembers(self.INDEX)))

    def read(self, pool: str) -> bytes | None:
        return _bytes(self.redis.get(self.PREFIX + pool))

    def write(self, pool_id: str, data: bytes) -> None:
        with self.redis.pipeline() as pipe:  # MULTI: the index never names a pool that is not there
            pipe.set(self.PREFIX + pool_id, data)
            pipe.sadd(self.INDEX, pool_id)
            pipe.execute()

    def building(self) -> str | None:
        """The job of the pool build in flight, if any."""
        return maybe_text(self.redis.get(self.BUILDING))

    def set_building(self, job_id: str) -> None:
        self.redis.set(self.BUILDING, job_id, ex=BUILDING_TTL)

    THEMES = "pool-themes:v1:"
    THEMES_PASS = "pool-themes:pass"

    def themes_table(self, pool: str) -> bytes | None:
        """A pool's table of themes as the workers' pass left it (None: not read by it)."""
        return _bytes(self.redis.get(self.THEMES + pool))

    def write_themes_table(self, pool: str, data: bytes) -> None:
        self.redis.set(self.THEMES + pool, data)

    def pass_progress(self) -> dict[str, int]:
        """How far the workers' themes pass got: pools, pools_done, rows_read, stopped, at (epoch seconds)."""
        return {k: number(v) for k, v in text_map(self.redis.hgetall(self.THEMES_PASS)).items()}

    def set_pass_progress(self, progress: dict[str, int]) -> None:
        self.redis.hset(self.THEMES_PASS, mapping=fields(progress))
