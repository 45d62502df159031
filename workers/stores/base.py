"""What every store shares: the Redis client (patient for the workers), the
format version each stored value carries, `Unavailable`, the one error a
store raises when Redis cannot be reached (nothing above the stores catches
Redis's own), and the edge where Redis's replies are decoded, once: redis-py
types a reply `bytes | str` (this service's clients get bytes), so a store
turns each into a str, an int, a float or a typed record (`text`, `number`,
`record`, ...) before it returns it, and nothing above the stores sees bytes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import unquote, urlsplit

import redis
from kombu.exceptions import OperationalError
from redis.backoff import ExponentialBackoff
from redis.client import Pipeline
from redis.retry import Retry
from redis.sentinel import Sentinel
from redis.typing import EncodableT

T = TypeVar("T")

FORMAT = 1   # the version every stored JSON value carries ("v")
PATIENCE = 75  # a patient client's retries of one command (backoff to 5 s: about 6 minutes)
# A Redis at its maxmemory with the noeviction policy refuses writes (OOM) until
# expiries free room: a write then fails as an outage does (503, or retried by a
# patient client).  A transaction whose EXEC itself is refused (memory crossed
# maxmemory after its commands were queued, or the server turned replica) is
# discarded whole: EXECABORT, nothing written, so it is refused alike.
_DOWN = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.OutOfMemoryError, redis.exceptions.ExecAbortError)


class Unavailable(Exception):
    """The store cannot be reached now; retry shortly."""

    detail = "the store is unreachable; retry shortly"
    retry_after = 5  # seconds


class Full(Unavailable):
    """The store is at its maxmemory and refuses writes until expiries free room."""

    detail = ("the store is full (Redis is at its maxmemory and refuses writes until kept things expire); "
              "retry later")
    retry_after = 60


def refused(e: Exception) -> Unavailable:
    """The store's error for a Redis error of _DOWN: Full when it was memory
    (OOM, or a transaction discarded for it), else Unavailable."""
    full = isinstance(e, redis.exceptions.OutOfMemoryError) or "OOM" in str(e)
    return (Full if full else Unavailable)(str(e))


# Redis or the broker cannot be reached, whichever part noticed first (the
# broker's client wraps Redis's errors in kombu's).
UNREACHABLE = (Unavailable, OperationalError, *_DOWN)


class _Pipeline(Pipeline):
    def execute(self, raise_on_error: bool = True) -> list[Any]:
        try:
            return super().execute(raise_on_error)
        except _DOWN as e:
            raise refused(e) from e

    def immediate_execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return super().immediate_execute_command(*args, **options)
        except _DOWN as e:
            raise refused(e) from e


class Client(redis.Redis):
    """redis.Redis whose outages surface as Unavailable (Full when Redis refuses writes for memory)."""

    def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute_command(*args, **options)
        except _DOWN as e:
            raise refused(e) from e

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> _Pipeline:
        return _Pipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


@dataclass(frozen=True)
class Sentinels:
    """Where to ask which server is the primary: the Sentinels' addresses, the
    name they monitor it under, and their own password (if any)."""

    addresses: tuple[tuple[str, int], ...]
    service: str
    password: str = ""


def connect(url: str, patient: bool = False, sentinels: Sentinels | None = None) -> Client:
    """A client of the Redis at `url`.  `patient` (the workers): every command is
    retried through an outage, with backoff up to 5 s, for about 6 minutes, so a
    Redis restart (or a failover) in the middle of a write loses nothing.  The
    API is not patient: it answers 503 at once.  With `sentinels`, the client
    asks them for the primary at each new connection and drops a connection to a
    server that is no longer the primary, so it follows a failover; `url` then
    gives only the password and database."""
    options: dict[str, Any] = {"socket_timeout": 5, "socket_connect_timeout": 2, "health_check_interval": 30}
    if patient:
        options["retry"] = Retry(ExponentialBackoff(cap=5.0, base=0.25), retries=PATIENCE)
        options["retry_on_error"] = list(_DOWN)
    if sentinels is None:
        return cast(Client, Client.from_url(url, **options))  # redis-py types from_url's return as Redis
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0)
    asking = {"socket_timeout": 1, "socket_connect_timeout": 1, "password": sentinels.password or None}
    watch = Sentinel(list(sentinels.addresses), sentinel_kwargs=asking,
                     password=unquote(parts.password) if parts.password else None, db=database, **options)
    return watch.master_for(sentinels.service, redis_class=Client)


BEACON = "ricochet:replicated"  # a write that carries every earlier one to the replicas' offset


def settle(client: Client, replicas: int, milliseconds: int) -> int:
    """Wait until `replicas` replicas hold every write this process has made so far
    (at most `milliseconds`), and return how many do.  Redis's WAIT counts the
    writes of its own connection; one more write on that connection, after all of
    this process's, carries them all (the replication stream is in order)."""
    with client.pipeline(transaction=False) as pipe:
        pipe.set(BEACON, 1, px=60_000)
        pipe.execute_command("WAIT", replicas, milliseconds)
        return int(pipe.execute()[1])


def dump(key: str, value: object) -> str:
    """A stored JSON value: the payload under `key`, with the format version."""
    return json.dumps({"v": FORMAT, key: value})


Reply = bytes | str  # one value of a Redis reply, as redis-py types it (bytes here: replies are not decoded)


def load(raw: Reply | None, key: str) -> Any:
    """The payload of a stored value, if there is one in a format this release reads."""
    if raw is None:
        return None
    value = json.loads(raw)
    return value[key] if value.get("v") == FORMAT else None


def record(raw: Reply | None, key: str, shape: type[T]) -> T | None:
    """`load`'s payload as the typed record `shape` it was dumped from (a TypedDict
    or a JSON type): the store that wrote it declares its shape, so the type is
    the writer's word, not checked at run time."""
    return cast(T, load(raw, key))


def text(raw: Reply) -> str:
    """A reply's string (UTF-8, as the service writes them)."""
    return raw.decode() if isinstance(raw, bytes) else raw


def maybe_text(raw: Reply | None) -> str | None:
    """A reply's string, or None for a missing key or field."""
    return None if raw is None else text(raw)


def texts(raws: Iterable[Reply]) -> list[str]:
    """The strings of a list or set reply (SMEMBERS, LRANGE, ZRANGE ...), in its order."""
    return [text(r) for r in raws]


def text_map(raw: Mapping[Reply, Reply]) -> dict[str, str]:
    """A hash (HGETALL) as field -> value strings."""
    return {text(k): text(v) for k, v in raw.items()}


def number(raw: object) -> int:
    """An integer reply or stored counter; 0 for a missing one (None)."""
    if raw is None:
        return 0
    if isinstance(raw, bytes | str | int | float):
        return int(raw)
    raise TypeError(f"not a number reply: {raw!r}")


def maybe_number(raw: object) -> int | None:
    """An integer reply (a rank, a TTL ...), or None when Redis answered nil."""
    return None if raw is None else number(raw)


def real(raw: object) -> float:
    """A float reply (a score, a stored time); 0.0 for a missing one (None)."""
    if raw is None:
        return 0.0
    if isinstance(raw, bytes | str | int | float):
        return float(raw)
    raise TypeError(f"not a number reply: {raw!r}")


def scored(rows: Iterable[Any]) -> list[tuple[str, float]]:
    """A sorted set's range read WITHSCORES: (member, score) pairs, in its order."""
    return [(text(member), real(score)) for member, score in rows]


def fields(mapping: Mapping[str, EncodableT]) -> dict[EncodableT, EncodableT]:
    """A hash's fields to write (HSET's `mapping`), as redis-py types them (its
    Mapping's key type is invariant, so a dict[str, str] is refused as it is)."""
    out: dict[EncodableT, EncodableT] = {k: v for k, v in mapping.items()}
    return out


WatchError = redis.WatchError


def optimistic(client: Client, key: str, step: Callable[[bytes | None, Pipeline], T], what: str) -> T:
    """Run `step(raw, pipe)` with `key` watched, again whenever another client
    changed the key first, so that concurrent changes from any number of
    processes are ordered by Redis and none is lost.  `step` reads the value it
    is given and returns at once, or calls pipe.multi() and queues its writes,
    which are then executed as one transaction; its return is returned."""
    for _ in range(1000):
        with client.pipeline() as pipe:
            try:
                pipe.watch(key)
                raw = pipe.get(key)
                out = step(raw.encode() if isinstance(raw, str) else raw, pipe)
                if pipe.explicit_transaction:
                    pipe.execute()
                return out
            except WatchError:
                continue
    raise RuntimeError(f"the {what} changed too often to apply this change")
