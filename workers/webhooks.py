"""Webhooks as Standard Webhooks has them: the events, signing secrets and
signatures, the check of a receiver's address, one attempt of a delivery, the
retry schedule, disabling an endpoint, and the announcements that queue
deliveries.  No Celery here: the tasks that run these are workers/tasks.py; the
use cases (application/webhooks.py) use the same checks and secrets.

A delivery is a POST of the event's JSON with the headers `webhook-id` (the
message's id, the same on every attempt), `webhook-timestamp` (the attempt's
time, whole seconds) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256
of `id.timestamp.body` under the secret's bytes; during a rotation's overlap a
second one under the previous secret, after a space).  A 2xx answer settles
it; 410 disables the endpoint; anything else (a redirect too: none is followed)
is tried again on the schedule (`due`), not before a 429's or 503's Retry-After.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import datetime as dt
import email.utils
import hashlib
import hmac
import http.client
import ipaddress
import json
import random
import secrets
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict
from urllib.parse import urlsplit

from solver.play.daily import NotInCalendar, daily_json, number

from .stores import Stores
from .stores.jobs import Job, JobState
from .stores.webhooks import FAILED, PENDING, SUCCEEDED, Attempt, Delivery, Hook, WebhookStore

JOB_EVENTS = ("job.succeeded", "job.failed")
DAY_EVENTS = ("day.published",)
EVENTS = (*JOB_EVENTS, *DAY_EVENTS)  # what an endpoint chooses among
TEST_EVENT = "webhook.test"           # sent to the endpoint asked, whatever its events
DISABLED_EVENT = "webhook.disabled"   # sent to the key's other endpoints, whatever their events
ALL_EVENTS = (*EVENTS, TEST_EVENT, DISABLED_EVENT)
SECRET_PREFIX = "whsec_"
MAX_URL = 2000
ANSWER_BYTES = 64 << 10  # what is read of a receiver's answer (it is not kept)

JITTER = 0.1  # an attempt is due within this share of the wait before it, either side of the schedule
RETRY_AFTER_MOST = 3600.0  # seconds: a receiver's Retry-After is honoured up to an hour
ROTATION_OVERLAP = 24 * 3600.0  # seconds the previous secret still signs after a rotation
IN_FLIGHT = 2  # attempts one key may have in flight at once, over every worker
BUSY = 2.0  # seconds: an attempt whose key has IN_FLIGHT in flight waits this long (to twice) for a place


class AddressRefused(ValueError):
    """A receiver's URL that is not taken: the reason says what to send instead."""


@dataclass(frozen=True)
class Policy:
    """How deliveries are attempted: the webhook settings (workers/settings.py)."""

    allow_private: bool = False
    retry: float = 5.0
    attempts: int = 9
    timeout: float = 5.0  # the whole answer, once connected
    connect_timeout: float = 3.0
    disable_after: float = 5 * 86400.0
    in_flight: int = IN_FLIGHT

    @classmethod
    def of(cls, settings: Any) -> Policy:
        return cls(settings.webhooks_allow_private == "on", settings.webhooks_retry, settings.webhooks_attempts,
                   settings.webhooks_timeout, settings.webhooks_connect_timeout,
                   float(settings.webhooks_disable_after))

    @property
    def longest(self) -> float:
        """The most one attempt takes (connecting, then the whole answer)."""
        return self.connect_timeout + self.timeout


def schedule(policy: Policy) -> list[float]:
    """When each attempt is due, in seconds after the first (jitter aside): 0, then
    `retry`, each next wait four times the last (5 s: 0, 5, 25, 105, 425 ...)."""
    return [policy.retry * (4 ** k - 1) / 3 for k in range(policy.attempts)]


def due(policy: Policy, first: float, made: int, jitter: float = 0.0) -> float | None:
    """When attempt `made + 1` is due for a delivery first attempted at `first`, moved
    by `jitter` (from -1 to 1) times JITTER of the wait before it; None: `made` was the last."""
    if made >= policy.attempts:
        return None
    if made <= 0:
        return first
    wait = policy.retry * 4 ** (made - 1)
    return first + schedule(policy)[made] + JITTER * max(-1.0, min(1.0, jitter)) * wait


def next_attempt(policy: Policy, first: float, made: int, ended: float, retry_after: float | None = None,
                 jitter: float = 0.0) -> float | None:
    """When to try again after a failed attempt (the `made`th) that ended at `ended`:
    on the schedule, never before the attempt ended nor before the receiver's
    Retry-After; None: that was the last."""
    planned = due(policy, first, made, jitter)
    if planned is None:
        return None
    return max(planned, ended + (retry_after or 0.0))


def retry_after(value: str | None, now: float) -> float | None:
    """A Retry-After header (seconds, or an HTTP date) as seconds from `now`, within 0
    and RETRY_AFTER_MOST; None when there is none or it is not one of the two."""
    value = (value or "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        seconds = float(value[:12])
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        seconds = when.timestamp() - now
    return min(max(0.0, seconds), RETRY_AFTER_MOST)


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def signature(secret: str, message_id: str, timestamp: int, body: str) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    mac = hmac.new(key, f"{message_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def secrets_signing(hook: Hook, now: float) -> list[str]:
    """The secrets an endpoint's attempts are signed with at `now`: its own, and
    during a rotation's overlap the previous one."""
    previous = hook.get("previous_secret")
    return [hook["secret"], *([previous] if previous and (hook.get("previous_until") or 0) > now else [])]


def signatures(hook: Hook, message_id: str, timestamp: int, body: str) -> str:
    """The `webhook-signature` header: one signature per secret signing, separated by spaces."""
    return " ".join(signature(s, message_id, timestamp, body) for s in secrets_signing(hook, timestamp))


def rotated(hook: Hook, now: float, overlap: float = ROTATION_OVERLAP) -> Hook:
    """The endpoint with a new secret; the one it had signs beside it for `overlap` seconds."""
    return {**hook, "secret": new_secret(), "previous_secret": hook["secret"], "previous_until": now + overlap,
            "rotated": now}


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix: an IPv4 address in the last 32 bits
TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765's IPv4-translated ::ffff:0:a.b.c.d
# RFC 8215's local-use NAT64 prefix: the deployment's own translator, its IPv4 address at any of RFC 6052's
# places (after a /32 to /96 prefix): never a public receiver, whatever address it carries.
LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def embedded(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 one carries (IPv4-mapped, IPv4-translated, 6to4, NAT64, IPv4-compatible)."""
    if address.version == 4:
        return []
    assert isinstance(address, ipaddress.IPv6Address)
    found = [address.ipv4_mapped, address.sixtofour]
    if address in NAT64 or address in TRANSLATED or int(address) >> 32 == 0:  # 64:ff9b::, ::ffff:0:, ::a.b.c.d
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [ip for ip in found if ip is not None]


def public(ip: str) -> bool:
    """Whether `ip` is a global unicast address, and so is every IPv4 address it embeds."""
    address = ipaddress.ip_address(ip.split("%")[0])
    if address.version == 6 and address in LOCAL_NAT64:
        return False
    return all(a.is_global and not a.is_multicast for a in (address, *embedded(address)))


def _port(url: str) -> int:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        raise AddressRefused("a webhook URL's port is a number from 1 to 65535") from None
    if port == 0:
        raise AddressRefused("a webhook URL's port is a number from 1 to 65535")
    return port or (443 if parts.scheme == "https" else 80)


def addresses(url: str, allow_private: bool) -> list[str]:
    """The addresses a receiver's URL resolves to, all public ones (unless
    `allow_private`); AddressRefused says why not."""
    if len(url) > MAX_URL:
        raise AddressRefused(f"a webhook URL is at most {MAX_URL} characters")
    if any(c <= " " or c >= "\x7f" for c in url):  # http.client refuses them at every delivery
        raise AddressRefused("a webhook URL is printable ASCII, no spaces or control characters: "
                             "percent-encode them (and give an internationalised host in punycode)")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AddressRefused("a webhook URL is http:// or https:// with a host")
    if parts.username or parts.password:
        raise AddressRefused("a webhook URL carries no user or password: authenticate by the signature")
    port = _port(url)
    try:
        found = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (OSError, ValueError, UnicodeError) as e:
        raise AddressRefused(f"the webhook URL's host {parts.hostname!r} does not resolve ({e})") from None
    ips = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not allow_private:
        for ip in ips:
            if not public(ip):
                raise AddressRefused(f"the webhook URL's host resolves to {ip}, a private, loopback, multicast or "
                                     "reserved address (or one embedding such an IPv4 address): give a public "
                                     "receiver")
    return ips


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to an address already checked, the certificate checked for the URL's host."""

    def __init__(self, ip: str, host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.ip = ip

    def connect(self) -> None:
        sock = socket.create_connection((self.ip, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


class AnswerTimeout(TimeoutError):
    """The receiver was connected but gave no whole answer in time."""


def post(url: str, ip: str, headers: dict[str, str], body: bytes, connect_timeout: float,
         timeout: float) -> tuple[int, str | None]:
    """POST to `url` at the checked address `ip` (no second lookup, no redirect
    followed), connected within `connect_timeout` and answered whole within
    `timeout` after that (a receiver that trickles its answer is cut then): the
    status and the answer's Retry-After."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if parts.scheme == "https":
        conn: http.client.HTTPConnection = _PinnedHTTPS(ip, parts.hostname or "", port, connect_timeout)
    else:
        conn = http.client.HTTPConnection(ip, port, timeout=connect_timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    cut = threading.Event()
    try:
        conn.connect()
        sock = conn.sock
        sock.settimeout(timeout)

        def _cut() -> None:
            cut.set()
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

        timer = threading.Timer(timeout, _cut)
        timer.daemon = True
        timer.start()
        try:
            conn.request("POST", target, body=body, headers={"Host": parts.netloc.rpartition("@")[2], **headers})
            response = conn.getresponse()
            response.read(ANSWER_BYTES)
        except (OSError, http.client.HTTPException):
            if cut.is_set():
                raise AnswerTimeout(f"no whole answer within {timeout:g} s") from None
            raise
        finally:
            timer.cancel()
        return response.status, response.getheader("Retry-After")
    finally:
        conn.close()


LOOK_AGAIN = 2.0  # seconds: at most this long before a delivery another attempt held is looked at again


@dataclass
class Attempted:
    """What one call of `attempt` did: the seconds until the delivery's next attempt
    (None: none to schedule here), and the deliveries it queued (`webhook.disabled`)."""

    wait: float | None = None
    queued: list[tuple[str, str]] = dataclasses.field(default_factory=list)


def attempt(store: WebhookStore, hook_id: str, message_id: str, policy: Policy,
            clock: Callable[[], float] = time.time,
            jitter: Callable[[], float] = lambda: random.uniform(-1.0, 1.0)) -> Attempted:
    """Attempt a delivery if it is pending, due and no other worker holds it, and
    its key has fewer than `policy.in_flight` attempts in flight; record it, and
    what its answer makes of the delivery and the endpoint."""
    if not store.lease(hook_id, message_id, policy.longest + 10):  # outlasts an attempt
        # Its holder may be settling it this moment, and a replay asked for just after it settled would
        # otherwise wait for the beat's sweep: look again shortly (the holder's own attempt ends it then).
        return Attempted(min(LOOK_AGAIN, store.leased_for(hook_id, message_id)))
    try:
        delivery = store.delivery(hook_id, message_id)
        if delivery is None or delivery["state"] != PENDING:
            store.drop_due(hook_id, message_id)
            return Attempted()
        early = (delivery["next_attempt"] or 0.0) - clock()  # a pending delivery's is set
        if early > 1.0:
            return Attempted()  # the sweep sends it when it is due
        time.sleep(max(0.0, early))
        hook = store.get(hook_id)
        off = hook.get("disabled") if hook is not None else None
        if hook is None or off:
            why = "the webhook was deleted" if off is None else f"the webhook is disabled: {off['reason']}"
            store.record(hook_id, message_id, {"at": clock(), "status": None, "error": why, "duration_ms": 0},
                         FAILED, None)
            return Attempted()
        if not store.take_flight(hook["owner"], hook_id, message_id, policy.in_flight, policy.longest + 10):
            wait = BUSY * (1.5 + jitter() / 2)  # from 1 to 2 times BUSY: not all at once again
            store.reschedule(hook_id, message_id, clock() + wait)
            return Attempted(wait)
        try:
            outcome = _send(hook, delivery, policy, clock)
        finally:
            store.land(hook["owner"], hook_id, message_id)
        return _settle(store, hook, delivery, outcome, policy, clock, jitter())
    finally:
        store.release(hook_id, message_id)


def _settle(store: WebhookStore, hook: Hook, delivery: Delivery, outcome: Attempt,
            policy: Policy, clock: Callable[[], float], jitter: float) -> Attempted:
    """An attempt's answer recorded: the delivery settled or scheduled again, the
    endpoint's run of failures counted, the endpoint disabled when it said 410 or
    has failed for `policy.disable_after` seconds."""
    ok, wait_asked = outcome["error"] is None, outcome.get("retry_after")
    ended, done = clock(), Attempted()
    made = len(delivery["attempts"]) + 1
    first = delivery["attempts"][0]["at"] if delivery["attempts"] else outcome["at"]
    when: float | None = None
    if ok:
        state = SUCCEEDED
        store.change(hook["id"], lambda h: {**h, "failing_since": None} if h.get("failing_since") else None)
    else:
        state = FAILED
        now = store.change(hook["id"], lambda h: None if h.get("failing_since") else {**h, "failing_since":
                                                                                        outcome["at"]})
        since = (now or hook).get("failing_since") or outcome["at"]
        if outcome["status"] == 410:
            done.queued = disable(store, hook["id"], "the receiver answered 410 Gone: it wants no more events",
                                  ended, announce=True)
        elif ended - since >= policy.disable_after:
            stamp = dt.datetime.fromtimestamp(since, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
            done.queued = disable(store, hook["id"], f"no attempt succeeded for {_span(policy.disable_after)} "
                                  f"(failing since {stamp})", ended, announce=True)
        elif not delivery.get("replay"):  # a replay is one attempt
            when = next_attempt(policy, first, made, ended, wait_asked, jitter)
            state = PENDING if when is not None else FAILED
    store.record(hook["id"], delivery["id"], outcome, state, when)
    done.wait = None if when is None else max(0.0, when - ended)
    return done


def _span(seconds: float) -> str:
    for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)} {unit}" if seconds != size else f"1 {unit[:-1]}"
    return f"{seconds:g} s"


def disable(store: WebhookStore, hook_id: str, reason: str, now: float, announce: bool) -> list[tuple[str, str]]:
    """Disable an endpoint (nothing more is sent to it until it is enabled again)
    and, with `announce`, queue `webhook.disabled` for its key's other enabled
    endpoints: those deliveries.  An endpoint disabled already keeps its reason."""
    was: list[Hook] = []

    def step(hook: Hook) -> Hook | None:
        if hook.get("disabled"):
            return None
        was.append(hook)
        return {**hook, "disabled": {"reason": reason, "at": now}}

    store.change(hook_id, step)
    if not was or not announce:
        return []
    hook = was[-1]
    data = {"webhook": hook_id, "url": hook["url"], "reason": reason, "disabled_at": _iso(now),
            "failing_since": _iso(since) if (since := hook.get("failing_since")) else None}
    key = f"disabled:{hook_id}:{now!r}"
    body, msg = event_body(DISABLED_EVENT, data, now), message_id(key)
    return [(h["id"], msg) for h in store.owned(hook["owner"])
            if h["id"] != hook_id and not h.get("disabled") and store.enqueue(h["id"], msg, DISABLED_EVENT, body)]


def _iso(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _send(hook: Hook, delivery: Delivery, policy: Policy, clock: Callable[[], float]) -> Attempt:
    started = clock()
    timestamp = int(started)
    headers = {"Content-Type": "application/json", "User-Agent": "ricochet-webhooks/1",
               "webhook-id": delivery["id"], "webhook-timestamp": str(timestamp),
               "webhook-signature": signatures(hook, delivery["id"], timestamp, delivery["body"])}
    status, error, wait = None, None, None
    try:
        ip = addresses(hook["url"], policy.allow_private)[0]  # checked again: DNS may have changed
        status, asked = post(hook["url"], ip, headers, delivery["body"].encode(), policy.connect_timeout,
                             policy.timeout)
        if status in (429, 503):
            wait = retry_after(asked, clock())
        if not 200 <= status < 300:
            error = f"HTTP {status}" + (": redirects are not followed" if 300 <= status < 400 else "") + (
                f", Retry-After {wait:g} s" if wait is not None else "")
    except AddressRefused as e:
        error = str(e)
    except (OSError, http.client.HTTPException) as e:
        error = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    except Exception as e:  # whatever else a receiver makes of it: an attempt failed, never a task that dies
        error = f"{type(e).__name__}: {e}"
    return {"at": started, "status": status, "error": error, "retry_after": wait,  # failed unless error is None
            "duration_ms": round((clock() - started) * 1000)}


# -- events --------------------------------------------------------------------------------


def event_body(event: str, data: Mapping[str, object], when: float | None = None) -> str:
    stamp = dt.datetime.fromtimestamp(when if when is not None else time.time(), dt.UTC)
    return json.dumps({"type": event, "timestamp": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                       "data": data}, separators=(",", ":"))


def message_id(event_key: str) -> str:
    """The message's id: one per event, the same however often it is announced."""
    return "msg_" + uuid.uuid5(uuid.NAMESPACE_URL, f"ricochet:{event_key}").hex


class JobEventData(TypedDict):
    """A job event's data (service/shapes.py's JobEventData): a pack's or a solve's fields beside the job's."""
    id: str
    kind: str
    state: str
    created: float
    finished: float | None
    error: str | None
    job_url: str
    pack_url: NotRequired[str]
    made: NotRequired[int]
    failed: NotRequired[int]
    status: NotRequired[str | None]
    optimal_length: NotRequired[int | None]
    code: NotRequired[str | None]


def job_data(job: Job) -> JobEventData:
    data: JobEventData = {"id": job["id"], "kind": job["kind"], "state": job["state"], "created": job["created"],
            "finished": job.get("finished"), "error": job.get("error"), "job_url": f"/v1/jobs/{job['id']}"}
    result = job.get("result") or {}
    if job["kind"] == "pack":
        data["pack_url"], data["made"] = f"/v1/packs/{job['id']}", result.get("made", 0)
        data["failed"] = len(result.get("failed", []))
    elif job["kind"] == "solve":
        data["status"], data["optimal_length"], data["code"] = (result.get("status"), result.get("length"),
                                                                 result.get("code"))
    return data


def announce_job(stores: Stores, job: Job) -> list[tuple[str, str]]:
    """A settled job's event queued for every webhook of the keys that follow it
    (each once, however often this is called): the deliveries (endpoint, message)."""
    store = stores.webhooks
    if job["state"] not in (JobState.SUCCEEDED, JobState.FAILED):
        return []
    event = f"job.{job['state']}"
    key = f"job:{job['id']}"
    queued = []
    if not store.announced(key):
        body, msg = event_body(event, job_data(job), job.get("finished")), message_id(key)
        for owner in store.followers(job["id"]):
            for hook in store.owned(owner):
                if event in hook["events"] and not hook.get("disabled") and store.enqueue(hook["id"], msg, event,
                                                                                          body):
                    queued.append((hook["id"], msg))
        store.mark_announced(key)
    store.unwatch(job["id"])
    return queued


def announce_day(stores: Stores, day: dt.date) -> list[tuple[str, str]]:
    """A day's puzzle (published at 00:00 UTC) announced to the webhooks that want days, once."""
    store = stores.webhooks
    key = f"day:{day.isoformat()}"
    if store.announced(key):
        return []
    try:
        record = stores.days.get(day.isoformat()) or daily_json(day)  # the record that stands, if stored
    except NotInCalendar:
        return []
    data = {"date": record["date"], "number": number(day), "code": record["code"],
            "optimal_length": record["optimal_length"], "grade": record["difficulty"].get("grade"),
            "url": f"/v1/daily/{record['date']}"}
    when = dt.datetime.combine(day, dt.time(), dt.UTC).timestamp()
    body, msg = event_body("day.published", data, when), message_id(key)
    queued = [(h["id"], msg) for h in store.subscribed("day.published")
              if not h.get("disabled") and store.enqueue(h["id"], msg, "day.published", body)]
    store.mark_announced(key)
    return queued


def queue_test(store: WebhookStore, hook: Hook) -> tuple[str, str]:
    """A test event for one endpoint (POST /v1/webhooks/{id}/test): the delivery queued."""
    msg = "msg_" + uuid.uuid4().hex
    body = event_body(TEST_EVENT, {"webhook": hook["id"], "url": hook["url"],
                                   "note": "a test event: your endpoint is reached and its signature checks"})
    store.enqueue(hook["id"], msg, TEST_EVENT, body)
    return hook["id"], msg
