"""Issued API keys: `apikey:<sha256 of the key>` holds the key's record (its name,
when it was made, its own quotas), and `apikeys` maps names to hashes.  The key
itself is never stored: it is shown once, when it is made."""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import TypedDict

from .base import Client, dump, record, text


class KeyRecord(TypedDict):
    """An issued key's record: its name, when it was made (Unix time), and its own
    quotas by kind (empty: the deployment's)."""

    name: str
    created: float
    quotas: dict[str, int]


PREFIX = "rr_"  # issued keys start so: easy to find in a leaked file, and to tell from an address


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class KeyStore:
    def __init__(self, client: Client) -> None:
        self.redis = client

    def create(self, name: str, quotas: dict[str, int] | None = None) -> tuple[str, KeyRecord]:
        """A new key named `name` (unique), with its own quotas (else the
        deployment's): the key, shown only now, and its record."""
        key = PREFIX + secrets.token_urlsafe(32)
        made = KeyRecord(name=name, created=time.time(), quotas=quotas or {})
        hashed = digest(key)
        if not self.redis.hsetnx("apikeys", name, hashed):
            raise ValueError(f"a key named {name!r} exists; revoke it first or choose another name")
        self.redis.set(f"apikey:{hashed}", dump("key", made))
        return key, made

    def find(self, key: str) -> KeyRecord | None:
        """The record of an issued, unrevoked key."""
        return record(self.redis.get(f"apikey:{digest(key)}"), "key", KeyRecord)

    def all(self) -> list[KeyRecord]:
        hashes = self.redis.hgetall("apikeys")
        records = [record(self.redis.get(f"apikey:{text(h)}"), "key", KeyRecord) for h in hashes.values()]
        return sorted((r for r in records if r is not None), key=lambda r: r["name"])

    def revoke(self, name: str) -> bool:
        hashed = self.redis.hget("apikeys", name)
        if hashed is None:
            return False
        self.redis.delete(f"apikey:{text(hashed)}")
        self.redis.hdel("apikeys", name)
        return True


__all__ = ["KeyRecord", "KeyStore", "digest"]
