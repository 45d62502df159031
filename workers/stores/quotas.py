"""Work charged to each client an hour: `ricochet:quota:<kind>:<client>:<hour>`;
and the prefix of the rate limiter's counters (flask-limiter keeps them itself,
under this prefix, in the same Redis)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .base import Client

WINDOW = 3600  # seconds
RATE_LIMIT_PREFIX = "ricochet:ratelimit"

# KEYS[1] the client's hour; ARGV cost, limit, seconds to keep: charge `cost` only
# if it fits under `limit`, in one step, so that a refusal is never counted, not
# even for the moment another request of the client would read the count.
_CHARGE = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local cost = tonumber(ARGV[1])
if used + cost > tonumber(ARGV[2]) then
  return {0, used}
end
used = redis.call('INCRBY', KEYS[1], cost)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {1, used}
"""


@dataclass(frozen=True)
class Charge:
    """What a charge did: whether the work was charged, what the client has used of
    its hour with it (without it, when refused), and the seconds until the hour turns."""

    charged: bool
    used: int
    reset: int


class QuotaStore:
    def __init__(self, client: Client) -> None:
        self.redis = client
        self._charge = client.register_script(_CHARGE)

    def charge(self, kind: str, client: str, cost: int, limit: int) -> Charge:
        """Charge `cost` to the client's hour, unless that takes it over `limit`:
        refused work costs nothing, so what is left after a refusal is what was
        left before it."""
        now = int(time.time())
        window = now // WINDOW
        key = f"ricochet:quota:{kind}:{client}:{window}"
        charged, used = self._charge(keys=[key], args=[cost, limit, WINDOW + 60])
        return Charge(bool(charged), int(used), (window + 1) * WINDOW - now)
