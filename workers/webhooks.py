"""Webhooks as Standard Webhooks has them: the events, signing secrets and
signatures, the check of a receiver's address, one attempt of a delivery, and
the announcements that queue deliveries.  No Celery here: the tasks that run
these are workers/tasks.py; the use cases (application/webhooks.py) use
the same checks and secrets.

A delivery is a POST of the event's JSON with the headers `webhook-id` (the
message's id, the same on every attempt), `webhook-timestamp` (the attempt's
time, whole seconds) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256
of `id.timestamp.body` under the secret's bytes).  A 2xx answer settles it;
anything else (a redirect too: none is followed) is retried after the backoff.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import http.client
import ipaddress
import json
import secrets
import socket
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from solver.play.daily import NotInCalendar, daily_json, number

from .stores import Stores
from .stores.jobs import JobState
from .stores.webhooks import FAILED, PENDING, SUCCEEDED, WebhookStore

JOB_EVENTS = ("job.succeeded", "job.failed")
DAY_EVENTS = ("day.published",)
EVENTS = (*JOB_EVENTS, *DAY_EVENTS)
TEST_EVENT = "webhook.test"
SECRET_PREFIX = "whsec_"
MAX_URL = 2000
ANSWER_BYTES = 64 << 10  # what is read of a receiver's answer (it is not kept)


class AddressRefused(ValueError):
    """A receiver's URL that is not taken: the reason says what to send instead."""


@dataclass(frozen=True)
class Policy:
    """How deliveries are attempted: the webhook settings (workers/settings.py)."""

    allow_private: bool = False
    retry: float = 5.0
    attempts: int = 9
    timeout: float = 10.0

    @classmethod
    def of(cls, settings: Any) -> Policy:
        return cls(settings.webhooks_allow_private == "on", settings.webhooks_retry, settings.webhooks_attempts,
                   settings.webhooks_timeout)

    def delay(self, attempts_made: int) -> float | None:
        """Seconds from the `attempts_made`th failed attempt to the next; None: give up."""
        return self.retry * 4 ** (attempts_made - 1) if attempts_made < self.attempts else None


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def signature(secret: str, message_id: str, timestamp: int, body: str) -> str:
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    mac = hmac.new(key, f"{message_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix: an IPv4 address in the last 32 bits


def embedded(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 one carries (IPv4-mapped, 6to4, NAT64, IPv4-compatible)."""
    if address.version == 4:
        return []
    assert isinstance(address, ipaddress.IPv6Address)
    found = [address.ipv4_mapped, address.sixtofour]
    if address in NAT64 or int(address) >> 32 == 0:  # 64:ff9b::a.b.c.d, ::a.b.c.d
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return [ip for ip in found if ip is not None]


def public(ip: str) -> bool:
    """Whether `ip` is a global unicast address, and so is every IPv4 address it embeds."""
    address = ipaddress.ip_address(ip.split("%")[0])
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


def post(url: str, ip: str, headers: dict[str, str], body: bytes, timeout: float) -> int:
    """POST to `url` at the checked address `ip` (no second lookup, no redirect followed): the status."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if parts.scheme == "https":
        conn: http.client.HTTPConnection = _PinnedHTTPS(ip, parts.hostname or "", port, timeout)
    else:
        conn = http.client.HTTPConnection(ip, port, timeout=timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn.request("POST", target, body=body, headers={"Host": parts.netloc.rpartition("@")[2], **headers})
        response = conn.getresponse()
        response.read(ANSWER_BYTES)
        return response.status
    finally:
        conn.close()


def attempt(store: WebhookStore, hook_id: str, message_id: str, policy: Policy,
            clock: Callable[[], float] = time.time) -> float | None:
    """Attempt a delivery if it is pending, due and no other worker holds it: the
    seconds until its next attempt, or None when there is none to schedule here."""
    if not store.lease(hook_id, message_id, 2 * policy.timeout + 5):  # outlasts an attempt
        return None
    try:
        delivery = store.delivery(hook_id, message_id)
        if delivery is None or delivery["state"] != PENDING:
            store.drop_due(hook_id, message_id)
            return None
        early = delivery["next_attempt"] - clock()
        if early > 1.0:
            return None  # the sweep sends it when it is due
        time.sleep(max(0.0, early))
        hook = store.get(hook_id)
        if hook is None:
            store.record(hook_id, message_id, {"at": clock(), "status": None, "error": "the webhook was deleted",
                                               "duration_ms": 0}, FAILED, None)
            return None
        outcome = _send(hook, delivery, policy, clock)
        made = len(delivery["attempts"]) + 1
        wait = None if outcome["ok"] else policy.delay(made)
        state = SUCCEEDED if outcome.pop("ok") else PENDING if wait is not None else FAILED
        store.record(hook_id, message_id, outcome, state, clock() + wait if wait is not None else None)
        return wait
    finally:
        store.release(hook_id, message_id)


def _send(hook: dict[str, Any], delivery: dict[str, Any], policy: Policy, clock: Callable[[], float]) -> dict:
    started = clock()
    timestamp = int(started)
    headers = {"Content-Type": "application/json", "User-Agent": "ricochet-webhooks/1",
               "webhook-id": delivery["id"], "webhook-timestamp": str(timestamp),
               "webhook-signature": signature(hook["secret"], delivery["id"], timestamp, delivery["body"])}
    status, error = None, None
    try:
        ip = addresses(hook["url"], policy.allow_private)[0]  # checked again: DNS may have changed
        status = post(hook["url"], ip, headers, delivery["body"].encode(), policy.timeout)
        if not 200 <= status < 300:
            error = f"HTTP {status}" + (": redirects are not followed" if 300 <= status < 400 else "")
    except AddressRefused as e:
        error = str(e)
    except (OSError, http.client.HTTPException) as e:
        error = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    except Exception as e:  # whatever else a receiver makes of it: an attempt failed, never a task that dies
        error = f"{type(e).__name__}: {e}"
    return {"at": started, "status": status, "error": error, "ok": error is None,
            "duration_ms": round((clock() - started) * 1000)}


# -- events --------------------------------------------------------------------------------


def event_body(event: str, data: dict[str, Any], when: float | None = None) -> str:
    stamp = dt.datetime.fromtimestamp(when if when is not None else time.time(), dt.UTC)
    return json.dumps({"type": event, "timestamp": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                       "data": data}, separators=(",", ":"))


def message_id(event_key: str) -> str:
    """The message's id: one per event, the same however often it is announced."""
    return "msg_" + uuid.uuid5(uuid.NAMESPACE_URL, f"ricochet:{event_key}").hex


def job_data(job: dict[str, Any]) -> dict[str, Any]:
    data = {"id": job["id"], "kind": job["kind"], "state": job["state"], "created": job["created"],
            "finished": job.get("finished"), "error": job.get("error"), "job_url": f"/v1/jobs/{job['id']}"}
    result = job.get("result") or {}
    if job["kind"] == "pack":
        data.update(pack_url=f"/v1/packs/{job['id']}", made=result.get("made", 0),
                    failed=len(result.get("failed", [])))
    elif job["kind"] == "solve":
        data.update(status=result.get("status"), optimal_length=result.get("length"), code=result.get("code"))
    return data


def announce_job(stores: Stores, job: dict[str, Any]) -> list[tuple[str, str]]:
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
                if event in hook["events"] and store.enqueue(hook["id"], msg, event, body):
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
    queued = [(h["id"], msg) for h in store.subscribed("day.published") if store.enqueue(h["id"], msg,
                                                                                         "day.published", body)]
    store.mark_announced(key)
    return queued


def queue_test(store: WebhookStore, hook: dict[str, Any]) -> tuple[str, str]:
    """A test event for one endpoint (POST /v1/webhooks/{id}/test): the delivery queued."""
    msg = "msg_" + uuid.uuid4().hex
    body = event_body(TEST_EVENT, {"webhook": hook["id"], "url": hook["url"],
                                   "note": "a test event: your endpoint is reached and its signature checks"})
    store.enqueue(hook["id"], msg, TEST_EVENT, body)
    return hook["id"], msg
