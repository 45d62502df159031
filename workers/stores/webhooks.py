"""Webhooks and their deliveries.

`webhook:<id>` holds an endpoint (its owner, the API key's name; URL, events,
signing secret); `webhooks:<owner>` the ids an owner registered, and
`webhooks:event:<type>` those that want a deployment-wide event (a day
published).  A delivery (`webhook:delivery:<hook>:<message>`) is one event
for one endpoint with its attempts; `webhook:deliveries:<hook>` lists them by
time, and `webhook:due` orders every pending one by its next attempt, so a
delivery whose worker died is found again by the sweep.  A lease
(`webhook:lease:<hook>:<message>`) lets one worker at a time attempt it.
Jobs a client with webhooks queued are followed (`webhook:followers:<job>`,
`webhook:watched`) until their event is announced (`webhook:announced:<event>`).
An owner's test events are counted per minute (`webhook:tests:<owner>`), and
the attempts it has in flight (`webhook:flight:<owner>`, a sorted set of
deliveries scored by when their hold lapses) are held to a few at once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict, cast

from .base import Client, WatchError, dump, number, optimistic, record, text, texts

KEEP = 8 * 24 * 3600     # deliveries, followers and announcements: past the day of retries
LISTED = 100             # deliveries kept listed per endpoint, newest first
PENDING, SUCCEEDED, FAILED = "pending", "succeeded", "failed"


class Disabled(TypedDict):
    """Why and when an endpoint was disabled (service/shapes.py's WebhookDisabled)."""
    reason: str
    at: float


class Hook(TypedDict):
    """An endpoint as stored (`webhook:<id>`): its owner (the API key's name) and signing
    secret beside what its key sees of it (application.webhooks.WebhookView); after a
    rotation, the secret it replaced and until when that one still signs."""
    id: str
    owner: str
    url: str
    events: list[str]
    created: float
    secret: str
    disabled: Disabled | None
    failing_since: float | None
    previous_secret: NotRequired[str]
    previous_until: NotRequired[float]
    rotated: NotRequired[float]


class HookChanges(TypedDict, total=False):
    """What `patch` changes of an endpoint."""
    url: str
    events: list[str]
    disabled: Disabled | None
    failing_since: float | None


class Attempt(TypedDict):
    """One attempt of a delivery (service/shapes.py's DeliveryAttempt)."""
    at: float
    status: int | None
    error: str | None
    retry_after: NotRequired[float | None]
    duration_ms: int


class Delivery(TypedDict):
    """One event for one endpoint (`webhook:delivery:<hook>:<message>`): the body its
    attempts POST, signed as it is, and those attempts; `replay` while a replayed one
    waits for its one more attempt."""
    id: str
    webhook: str
    type: str
    body: str
    created: float
    state: str
    next_attempt: float | None
    attempts: list[Attempt]
    replay: NotRequired[bool]


def _hook(raw: bytes | str | None) -> Hook | None:
    return record(raw, "webhook", Hook)


def _delivery(raw: bytes | str | None) -> Delivery | None:
    return record(raw, "delivery", Delivery)


def _members(rows: object) -> list[bytes]:
    """A sorted set's range read without scores: its members (redis-py types the reply
    with the WITHSCORES pairs too)."""
    return cast(list[bytes], rows)


def _member(hook_id: str, message_id: str) -> str:
    return f"{hook_id}:{message_id}"


# KEYS[1] the owner's flight set; ARGV now, deadline, most, member, seconds: hold a place unless `most` are held
_FLY = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[4]) == false and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


def _owned(reader: Any, owner: str) -> list[Hook]:
    """The endpoints `owner` registered, oldest first, read through `reader` (the client, or a pipeline
    watching the owner's set)."""
    ids = sorted(texts(reader.smembers(f"webhooks:{owner}")))
    found = [_hook(raw) for raw in (reader.mget([f"webhook:{i}" for i in ids]) if ids else [])]
    return sorted((h for h in found if h is not None), key=lambda h: h["created"])


class WebhookStore:
    def __init__(self, client: Client) -> None:
        self.redis = client
        self._fly = client.register_script(_FLY)

    # -- endpoints ---------------------------------------------------------------------------

    def add(self, hook: Hook, global_events: tuple[str, ...], most: int) -> Hook | bool:
        """Register `hook` unless its owner already sends to its URL or holds
        `most` endpoints: False when it is added, else the endpoint with its URL
        (True when the owner holds `most`).  One step (the owner's set watched):
        of registrations of one URL at once, one is added."""
        owned = f"webhooks:{hook['owner']}"
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(owned)
                    hooks = _owned(pipe, hook["owner"])
                    same = next((h for h in hooks if h["url"] == hook["url"]), None)
                    if same is not None or pipe.scard(owned) >= most:
                        pipe.reset()
                        return same or True
                    pipe.multi()
                    pipe.set(f"webhook:{hook['id']}", dump("webhook", hook))
                    pipe.sadd(owned, hook["id"])
                    for event in set(hook["events"]) & set(global_events):
                        pipe.sadd(f"webhooks:event:{event}", hook["id"])
                    pipe.execute()
                    return False
                except WatchError:
                    continue

    def get(self, hook_id: str) -> Hook | None:
        return _hook(self.redis.get(f"webhook:{hook_id}"))

    def owned(self, owner: str) -> list[Hook]:
        return _owned(self.redis, owner)

    def count(self, owner: str) -> int:
        return number(self.redis.scard(f"webhooks:{owner}"))

    def subscribed(self, event: str) -> list[Hook]:
        """The endpoints of every owner that want a deployment-wide event."""
        ids = sorted(texts(self.redis.smembers(f"webhooks:event:{event}")))
        found = [self.get(i) for i in ids]
        return [h for h in found if h is not None]

    def change(self, hook_id: str, step: Callable[[Hook], Hook | None]) -> Hook | None:
        """The endpoint as `step` makes it from what is stored (one step, however many
        workers change it at once; `step` returns None to leave it): the endpoint
        then, or None when there is none.  Not for its URL or events (`patch`)."""
        key = f"webhook:{hook_id}"

        def apply(raw: bytes | None, pipe: Any) -> Hook | None:
            hook = _hook(raw)
            if hook is None:
                return None
            changed = step(Hook(**hook))
            if changed is None:
                return hook
            pipe.multi()
            pipe.set(key, dump("webhook", changed))
            return changed

        return optimistic(self.redis, key, apply, "webhook")

    def patch(self, hook_id: str, changes: HookChanges,
              global_events: tuple[str, ...]) -> tuple[Hook | None, Hook | None]:
        """Change an endpoint's URL, events or anything else in `changes`, unless
        another endpoint of its owner has the new URL: (the endpoint then, None)
        or (None, the endpoint with that URL); (None, None) when there is none.
        One step: the owner's endpoints and this one watched."""
        key = f"webhook:{hook_id}"
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    hook = _hook(pipe.get(key))
                    if hook is None:
                        pipe.reset()
                        return None, None
                    owned = f"webhooks:{hook['owner']}"
                    pipe.watch(owned)
                    url = changes.get("url", hook["url"])
                    same = next((h for h in _owned(pipe, hook["owner"]) if h["url"] == url and h["id"] != hook_id),
                                None)
                    if same is not None:
                        pipe.reset()
                        return None, same
                    changed: Hook = {**hook, **changes}
                    pipe.multi()
                    pipe.set(key, dump("webhook", changed))
                    for event in global_events:
                        if event in changed["events"]:
                            pipe.sadd(f"webhooks:event:{event}", hook_id)
                        else:
                            pipe.srem(f"webhooks:event:{event}", hook_id)
                    pipe.execute()
                    return changed, None
                except WatchError:
                    continue

    def remove(self, hook: Hook) -> None:
        with self.redis.pipeline() as pipe:
            pipe.delete(f"webhook:{hook['id']}")
            pipe.srem(f"webhooks:{hook['owner']}", hook["id"])
            for event in hook["events"]:
                pipe.srem(f"webhooks:event:{event}", hook["id"])
            pipe.execute()

    # -- deliveries ----------------------------------------------------------------------------

    def enqueue(self, hook_id: str, message_id: str, event: str, body: str) -> bool:
        """A pending delivery of `body` (the event, signed as it is) to an endpoint, due
        now; False when that message was already queued for it (announced twice)."""
        now = time.time()
        delivery: Delivery = {"id": message_id, "webhook": hook_id, "type": event, "body": body, "created": now,
                    "state": PENDING, "next_attempt": now, "attempts": []}
        key = f"webhook:delivery:{hook_id}:{message_id}"
        created = bool(self.redis.set(key, dump("delivery", delivery), nx=True, ex=KEEP))
        if not created:  # announced again after a crash: pending still means due
            found = self.delivery(hook_id, message_id)
            if found is None or found["state"] != PENDING:
                return False
            delivery = found
        with self.redis.pipeline() as pipe:
            due = delivery["next_attempt"]  # a pending delivery's is set
            pipe.zadd("webhook:due", {_member(hook_id, message_id): now if due is None else due}, nx=True)
            pipe.zadd(f"webhook:deliveries:{hook_id}", {message_id: delivery["created"]}, nx=True)
            pipe.zremrangebyrank(f"webhook:deliveries:{hook_id}", 0, -LISTED - 1)
            pipe.expire(f"webhook:deliveries:{hook_id}", KEEP)
            pipe.execute()
        return created

    def delivery(self, hook_id: str, message_id: str) -> Delivery | None:
        return _delivery(self.redis.get(f"webhook:delivery:{hook_id}:{message_id}"))

    def deliveries(self, hook_id: str, limit: int = LISTED) -> list[Delivery]:
        ids = texts(_members(self.redis.zrevrange(f"webhook:deliveries:{hook_id}", 0, limit - 1)))
        raws = self.redis.mget([f"webhook:delivery:{hook_id}:{i}" for i in ids]) if ids else []
        return [d for d in (_delivery(raw) for raw in raws) if d is not None]

    def record(self, hook_id: str, message_id: str, attempt: Attempt, state: str,
               next_attempt: float | None) -> Delivery | None:
        """Add an attempt to a delivery; `state` and when to try next (None: never)."""
        key = f"webhook:delivery:{hook_id}:{message_id}"

        def step(raw: bytes | None, pipe: Any) -> Delivery | None:
            delivery = _delivery(raw)
            if delivery is None:
                return None
            delivery = {**delivery, "attempts": [*delivery["attempts"], attempt], "state": state,
                        "next_attempt": next_attempt, "replay": False}
            pipe.multi()
            pipe.set(key, dump("delivery", delivery), ex=KEEP)
            if next_attempt is None:
                pipe.zrem("webhook:due", _member(hook_id, message_id))
            else:
                pipe.zadd("webhook:due", {_member(hook_id, message_id): next_attempt})
            return delivery

        return optimistic(self.redis, key, step, "delivery")

    def replay(self, hook_id: str, message_id: str, now: float) -> Delivery | None:
        """A settled delivery made pending again, due `now`, for one more attempt
        (`replay` set: a failed replay is not retried).  A pending one is left as
        it is.  The delivery then, or None when there is none."""
        key = f"webhook:delivery:{hook_id}:{message_id}"

        def step(raw: bytes | None, pipe: Any) -> Delivery | None:
            delivery = _delivery(raw)
            if delivery is None or delivery["state"] == PENDING:
                return delivery
            delivery = {**delivery, "state": PENDING, "next_attempt": now, "replay": True}
            pipe.multi()
            pipe.set(key, dump("delivery", delivery), ex=KEEP)
            pipe.zadd("webhook:due", {_member(hook_id, message_id): now})
            return delivery

        return optimistic(self.redis, key, step, "delivery")

    def reschedule(self, hook_id: str, message_id: str, when: float) -> None:
        """A pending delivery's next attempt moved to `when`, no attempt made (its owner had enough in flight)."""
        key = f"webhook:delivery:{hook_id}:{message_id}"

        def step(raw: bytes | None, pipe: Any) -> None:
            delivery = _delivery(raw)
            if delivery is None or delivery["state"] != PENDING:
                return
            pipe.multi()
            pipe.set(key, dump("delivery", {**delivery, "next_attempt": when}), ex=KEEP)
            pipe.zadd("webhook:due", {_member(hook_id, message_id): when})

        optimistic(self.redis, key, step, "delivery")

    def count_test(self, owner: str, window: int) -> tuple[int, float]:
        """One more test event for `owner` in this `window` of seconds: how many it
        has sent in it (this one included), and the seconds until it ends."""
        key = f"webhook:tests:{owner}"
        with self.redis.pipeline() as pipe:
            pipe.incr(key)
            pipe.expire(key, window, nx=True)
            pipe.pttl(key)
            count, _, ttl = pipe.execute()
        return int(count), max(0.0, ttl / 1000) if ttl and ttl > 0 else float(window)

    def take_flight(self, owner: str, hook_id: str, message_id: str, most: int, seconds: float) -> bool:
        """Hold one of `owner`'s `most` places for an attempt in flight, for at most `seconds`."""
        now = time.time()
        return bool(self._fly(keys=[f"webhook:flight:{owner}"],
                              args=[now, now + seconds, most, _member(hook_id, message_id), int(seconds) + 1]))

    def land(self, owner: str, hook_id: str, message_id: str) -> None:
        self.redis.zrem(f"webhook:flight:{owner}", _member(hook_id, message_id))

    def drop_due(self, hook_id: str, message_id: str) -> None:
        self.redis.zrem("webhook:due", _member(hook_id, message_id))

    def due(self, now: float, limit: int = 1000) -> list[tuple[str, str]]:
        """Pending deliveries whose next attempt has come: (endpoint, message)."""
        members = _members(self.redis.zrangebyscore("webhook:due", "-inf", now, start=0, num=limit))
        return [(hook, message) for hook, _, message in (text(m).partition(":") for m in members)]

    def lease(self, hook_id: str, message_id: str, seconds: float) -> bool:
        """Claim a delivery's attempt for `seconds` (one worker at a time)."""
        return bool(self.redis.set(f"webhook:lease:{_member(hook_id, message_id)}", "1", nx=True,
                                   px=int(seconds * 1000)))

    def leased_for(self, hook_id: str, message_id: str) -> float:
        """Seconds left of a delivery's lease (at least a quarter of a second, however
        little is left or when it has just gone)."""
        left = self.redis.pttl(f"webhook:lease:{_member(hook_id, message_id)}")
        return max(0.25, (left if isinstance(left, int) else 0) / 1000)

    def release(self, hook_id: str, message_id: str) -> None:
        self.redis.delete(f"webhook:lease:{_member(hook_id, message_id)}")

    # -- jobs followed, events announced ---------------------------------------------------------

    def follow(self, job_id: str, owner: str) -> None:
        with self.redis.pipeline() as pipe:
            pipe.sadd(f"webhook:followers:{job_id}", owner)
            pipe.expire(f"webhook:followers:{job_id}", KEEP)
            pipe.zadd("webhook:watched", {job_id: time.time()}, nx=True)
            pipe.execute()

    def followers(self, job_id: str) -> list[str]:
        return sorted(texts(self.redis.smembers(f"webhook:followers:{job_id}")))

    def watched(self, limit: int = 1000) -> list[str]:
        """Jobs followed whose event is not announced yet, oldest first; those older than KEEP are let go."""
        self.redis.zremrangebyscore("webhook:watched", "-inf", time.time() - KEEP)
        return texts(_members(self.redis.zrange("webhook:watched", 0, limit - 1)))

    def is_watched(self, job_id: str) -> bool:
        return self.redis.zscore("webhook:watched", job_id) is not None

    def unwatch(self, job_id: str) -> None:
        self.redis.zrem("webhook:watched", job_id)

    def announced(self, event_key: str) -> bool:
        return bool(self.redis.exists(f"webhook:announced:{event_key}"))

    def mark_announced(self, event_key: str) -> None:
        self.redis.set(f"webhook:announced:{event_key}", json.dumps(time.time()), ex=KEEP)


__all__ = ["FAILED", "PENDING", "SUCCEEDED", "WebhookStore"]
