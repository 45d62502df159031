"""Who is asking: an API key the operator issued (`ricochet keys`), found by its
digest, and the prefix the rate limiter's counters are kept under beside the
stores' keys.  The HTTP edge (service/limits.py) asks here, never a store."""

from __future__ import annotations

from typing import Any

from workers.stores import Stores
from workers.stores.keys import digest
from workers.stores.quotas import RATE_LIMIT_PREFIX

__all__ = ["RATE_LIMIT_PREFIX", "digest", "issued"]

MAX_KEY = 200  # characters: a longer X-API-Key is no key of ours, not worth a lookup


def issued(stores: Stores | None, key: str) -> dict[str, Any] | None:
    """The record of the key issued as `key` (its name, quotas), or None when it
    was not issued here, was revoked, or there are no stores."""
    if stores is None or not 0 < len(key) <= MAX_KEY:
        return None
    return stores.keys.find(key)
