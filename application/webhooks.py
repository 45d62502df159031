"""Webhooks: an API key's endpoints (register, list, test, delete), their
deliveries, and the jobs a key follows (docs/webhooks.md).  Webhooks belong to
the key that registered them: a client without a key has none."""

from __future__ import annotations

import datetime as dt
import json
import time
import uuid
from typing import Any

from workers.messages import WEBHOOK_DELIVER
from workers.stores.jobs import JobState
from workers.webhooks import (
    DAY_EVENTS,
    EVENTS,
    AddressRefused,
    Policy,
    addresses,
    announce_day,
    announce_job,
    attempt,
    new_secret,
    queue_test,
)

from . import Context
from .problems import Problem, echo

MAX_PER_KEY = 20


def _owner(ctx: Context) -> str:
    if not ctx.client.startswith("key:"):
        raise Problem("unauthorized", "webhooks belong to an API key: send the X-API-Key the operator issued "
                      "(ricochet keys create)", field="X-API-Key")
    return ctx.client.removeprefix("key:")


def register(ctx: Context, url: str, events: list[str], allow_private: bool) -> dict[str, Any]:
    """A new endpoint for the key asking; its record with the signing secret (shown only now)."""
    owner = _owner(ctx)
    stores = ctx.required_stores()
    unknown = sorted(set(events) - set(EVENTS))
    if unknown or not events:
        raise Problem("invalid-input", f"events are one or more of {', '.join(EVENTS)}", field="events")
    try:
        addresses(url, allow_private)
    except AddressRefused as e:
        raise Problem("address-not-allowed", str(e), field="url") from None
    record = {"id": "wh_" + uuid.uuid4().hex, "owner": owner, "url": url, "events": sorted(set(events)),
              "created": time.time(), "secret": new_secret()}
    same = stores.webhooks.add(record, DAY_EVENTS, MAX_PER_KEY)
    if same:  # one endpoint, one registration: two would deliver each event twice
        raise Problem("conflict", f"this key already sends to this URL ({same['id']}, events "
                      f"{', '.join(same['events'])}): delete that one to register it again with other events")
    if same is not None:
        raise Problem("conflict", f"a key has at most {MAX_PER_KEY} webhooks: delete one first")
    return record


def listed(ctx: Context) -> list[dict[str, Any]]:
    return ctx.required_stores().webhooks.owned(_owner(ctx))


def one(ctx: Context, hook_id: str) -> dict[str, Any]:
    """An endpoint of the key asking (404 for another key's: it is not theirs to know of)."""
    owner = _owner(ctx)
    hook = ctx.required_stores().webhooks.get(hook_id) if len(hook_id) <= 64 else None
    if hook is None or hook["owner"] != owner:
        raise Problem("not-found", f"this key has no webhook {echo(hook_id)!r}")
    return hook


def delete(ctx: Context, hook_id: str) -> None:
    ctx.required_stores().webhooks.remove(one(ctx, hook_id))


def test(ctx: Context, hook_id: str) -> dict[str, Any]:
    """Queue a test event for one endpoint: the delivery, pending."""
    hook = one(ctx, hook_id)
    stores = ctx.required_stores()
    if ctx.send is None:
        raise Problem("unavailable", "deliveries need the queue: set REDIS_URL or run `ricochet serve`")
    hook_id, message = queue_test(stores.webhooks, hook)
    _send(ctx, [(hook_id, message)])
    return shown(stores.webhooks.delivery(hook_id, message) or {})


def deliveries(ctx: Context, hook_id: str) -> list[dict[str, Any]]:
    hook = one(ctx, hook_id)
    return [shown(d) for d in ctx.required_stores().webhooks.deliveries(hook["id"])]


def shown(delivery: dict[str, Any]) -> dict[str, Any]:
    """A delivery as clients see it: the event's body as the JSON it is."""
    return {**{k: v for k, v in delivery.items() if k != "body"}, "event": json.loads(delivery.get("body") or "{}")}


def follow(ctx: Context, job: dict[str, Any]) -> None:
    """A job queued for a key with webhooks is followed: its end is announced to
    them, by the worker that settles it, or here when it settled already (a pack
    the pools held whole can end before its 202 is sent)."""
    stores = ctx.stores
    if stores is None or not ctx.client.startswith("key:"):
        return
    owner = ctx.client.removeprefix("key:")
    if not stores.webhooks.count(owner):
        return
    stores.webhooks.follow(job["id"], owner)
    now = stores.jobs.get(job["id"])
    if now is not None and now["state"] in (JobState.SUCCEEDED, JobState.FAILED) and ctx.send is not None:
        _send(ctx, announce_job(stores, now))


SOON = 300.0  # seconds: a next attempt sooner than this is sent with a countdown; later ones are the sweep's


def _send(ctx: Context, deliveries: list[tuple[str, str]], **options: Any) -> None:
    if ctx.send is None:
        raise Problem("unavailable", "deliveries need the queue: set REDIS_URL or run `ricochet serve`")
    for hook_id, message in deliveries:
        ctx.send(WEBHOOK_DELIVER, {"hook_id": hook_id, "message_id": message}, **options)  # type: ignore[call-arg]


def deliver(ctx: Context, hook_id: str, message_id: str, policy: Policy, horizon: float) -> float | None:
    """One attempt of a delivery (if it is due and no other worker holds it); the
    next attempt, when it comes within SOON and `horizon` seconds (half the
    broker's visibility timeout), is sent with that countdown; later ones are the
    sweep's.  The seconds to the next attempt, or None when there is none."""
    wait = attempt(ctx.required_stores().webhooks, hook_id, message_id, policy)
    if wait is not None and wait < min(SOON, horizon):
        _send(ctx, [(hook_id, message_id)], countdown=wait)
    return wait


def sweep(ctx: Context, today: dt.date) -> int:
    """Announce what is due to be (settled jobs followed, `today`'s puzzle) and
    send every delivery whose attempt is due: how many were sent.  The store is
    the truth: a worker lost mid-delivery or a Redis restart loses nothing."""
    stores = ctx.required_stores()
    for job_id in stores.webhooks.watched():
        job = stores.jobs.get(job_id)
        if job is None:
            stores.webhooks.unwatch(job_id)
        else:
            announce_job(stores, job)  # an open job stays watched
    announce_day(stores, today)
    due = stores.webhooks.due(time.time())
    _send(ctx, due)
    return len(due)


def announce_settled(ctx: Context, job_id: str) -> None:
    """After a job's task: the job's event, at once, if it settled and a key with webhooks follows it."""
    stores = ctx.required_stores()
    if not stores.webhooks.is_watched(job_id):
        return
    job = stores.jobs.get(job_id)
    if job is not None:
        _send(ctx, announce_job(stores, job))
