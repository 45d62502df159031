"""The stores: one per thing kept, each owning its Redis keys, their lifetimes and
their format version.  Nothing above them names a key or catches a Redis error:
an outage surfaces as `Unavailable`.

    stores = Stores.from_url(url)
    stores.jobs.get(job_id); stores.packs.items(pack_id, count); stores.days.publish(day, record)
"""

from __future__ import annotations

from typing import Any

from .answers import AnswerStore
from .base import UNREACHABLE, Client, Full, Sentinels, Unavailable, connect, settle
from .books import BookStore
from .catalogue import CatalogueStore
from .days import DayStore
from .games import GameStore
from .jobs import JOB_STATES, JobStore
from .keys import KeyStore
from .packs import PackStore
from .pools import PoolStore
from .quotas import QuotaStore
from .ratings import RatingStore
from .rooms import RoomStore
from .rounds import RoundStore
from .slots import SlotStore
from .storms import StormStore
from .webhooks import WebhookStore

PROBE = "ricochet:ready"  # the readiness probe's write (a byte, gone in 10 s)

__all__ = ["JOB_STATES", "UNREACHABLE", "Full", "Sentinels", "Stores", "Unavailable"]


class Stores:
    """Every store, over one connection pool."""

    def __init__(self, client: Client) -> None:
        self.redis = client
        self.answers = AnswerStore(client)
        self.jobs = JobStore(client)
        self.days = DayStore(client, self.answers)
        self.packs = PackStore(client, self.answers)
        self.books = BookStore(client)
        self.games = GameStore(client)
        self.pools = PoolStore(client)
        self.quotas = QuotaStore(client)
        self.keys = KeyStore(client)
        self.ratings = RatingStore(client)
        self.catalogue = CatalogueStore(client)
        self.rooms = RoomStore(client)
        self.rounds = RoundStore(client)
        self.slots = SlotStore(client)
        self.webhooks = WebhookStore(client)
        self.storms = StormStore(client)

    @classmethod
    def from_url(cls, url: str, patient: bool = False, sentinels: Sentinels | None = None) -> Stores:
        return cls(connect(url, patient, sentinels))

    @classmethod
    def from_settings(cls, settings: Any, patient: bool = False) -> Stores:
        """The stores of the deployment's Redis (REDIS_URL, through its Sentinels
        when RICOCHET_SENTINELS is set); `settings` is a workers.settings.Settings."""
        sentinels = (Sentinels(settings.sentinels, settings.sentinel_service, settings.sentinel_password)
                     if settings.sentinels else None)
        return cls.from_url(settings.redis_url, patient, sentinels)

    def settle(self, replicas: int, milliseconds: int) -> int:
        """How many replicas hold every write this process made, waiting up to
        `milliseconds` for `replicas` of them (Redis WAIT)."""
        return settle(self.redis, replicas, milliseconds)

    def ping(self) -> None:
        """Raises Unavailable when Redis cannot be reached, and Full when it refuses
        writes for memory: a write is the probe (a Redis at maxmemory answers PING
        and every read, and refuses what the service does, a write)."""
        self.redis.set(PROBE, 1, px=10_000)

    def queued(self, queue: str) -> int:
        """Messages waiting in a Celery queue (the Redis list kombu keeps per queue and priority)."""
        with self.redis.pipeline() as pipe:
            for name in (queue, *(f"{queue}\x06\x16{p}" for p in range(1, 10))):
                pipe.llen(name)
            return sum(pipe.execute())
