"""Work charged to each client an hour: `ricochet:quota:<kind>:<client>:<hour>`;
and the prefix of the rate limiter's counters (flask-limiter keeps them itself,
under this prefix, in the same Redis)."""

from __future__ import annotations

import time

from .base import Client

WINDOW = 3600  # seconds
RATE_LIMIT_PREFIX = "ricochet:ratelimit"


class QuotaStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def charge(self, kind: str, client: str, cost: int, limit: int) -> tuple[int, int]:
        """Charge `cost` to the client's hour, unless that takes it over `limit`
        (refused work costs nothing).  Returns what was used with this work, and
        the seconds until the hour turns."""
        now = int(time.time())
        window = now // WINDOW
        key = f"ricochet:quota:{kind}:{client}:{window}"
        with self.redis.pipeline() as pipe:
            pipe.incrby(key, cost)
            pipe.expire(key, WINDOW + 60)
            used = pipe.execute()[0]
        if used > limit:
            self.redis.decrby(key, cost)
        return used, (window + 1) * WINDOW - now
