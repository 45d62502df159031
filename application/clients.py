"""Who is asking: an API key the operator issued (`ricochet keys`), found by its
digest, and the prefix the rate limiter's counters are kept under beside the
stores' keys, and the places of streams and exports a client holds.  The HTTP
edge (service/limits.py) asks here, never a store."""

from __future__ import annotations

import contextlib

from workers.stores import UNREACHABLE, Stores
from workers.stores.keys import KeyRecord, digest
from workers.stores.quotas import RATE_LIMIT_PREFIX

__all__ = ["RATE_LIMIT_PREFIX", "KeyRecord", "digest", "give_back", "issued", "take_place"]

MAX_KEY = 200  # characters: a longer X-API-Key is no key of ours, not worth a lookup


def issued(stores: Stores | None, key: str) -> KeyRecord | None:
    """The record of the key issued as `key` (its name, quotas), or None when it
    was not issued here, was revoked, or there are no stores."""
    if stores is None or not 0 < len(key) <= MAX_KEY:
        return None
    return stores.keys.find(key)


def take_place(stores: Stores, kind: str, who: str, most: int, seconds: float) -> tuple[str | None, float]:
    """One of the `most` places of `kind` that client `who` may hold at once over
    every web process, for at most `seconds`: (the place, 0) or (None, seconds to
    wait) when it holds them all."""
    return stores.slots.take(kind, who, most, seconds)


def give_back(stores: Stores, kind: str, who: str, place: str) -> None:
    """Give a place back; with Redis unreachable it lapses at its deadline."""
    with contextlib.suppress(*UNREACHABLE):
        stores.slots.give_back(kind, who, place)
