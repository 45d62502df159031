"""Webhooks: an API key's endpoints (register, list, change, rotate, test,
delete), their deliveries (listed, replayed), and the jobs a key follows
(docs/webhooks.md).  Webhooks belong to the key that registered them, by its
name: a client without a key has none, a revoked key's are disabled, and a new
key of the same name (or the operator, `ricochet keys webhooks`) still lists and
deletes them."""

from __future__ import annotations

import datetime as dt
import json
import math
import time
import uuid
from typing import Any, TypedDict

from workers.messages import WEBHOOK_DELIVER
from workers.stores.jobs import Job, JobState
from workers.stores.webhooks import PENDING, Attempt, Delivery, Disabled, Hook, HookChanges
from workers.webhooks import (
    DAY_EVENTS,
    EVENTS,
    ROTATION_OVERLAP,
    AddressRefused,
    Policy,
    addresses,
    announce_day,
    announce_job,
    attempt,
    new_secret,
    queue_test,
    rotated,
)

from . import Context
from .problems import Problem, echo

MAX_PER_KEY = 20
TESTS_PER_MINUTE = 5  # test events a key may send a minute (each holds a delivery worker up to its timeouts)
REVOKED = "its API key was revoked: enable it again (PATCH with enabled true) under a new key of the same name"


class WebhookView(TypedDict):
    """An endpoint as its key sees it (service/shapes.py's Webhook): never a secret."""
    id: str
    url: str
    events: list[str]
    created: float
    enabled: bool
    disabled: Disabled | None
    failing_since: float | None
    previous_secret_expires: float | None


class NewWebhookView(WebhookView):
    """A new endpoint with its signing secret, shown only then (service/shapes.py's NewWebhook)."""
    secret: str


class RotatedSecret(TypedDict):
    """A new signing secret, shown only then (service/shapes.py's RotatedSecret)."""
    id: str
    secret: str
    previous_secret_expires: float


class DeliveryView(TypedDict):
    """A delivery as its key sees it (service/shapes.py's Delivery): the event it POSTs as JSON."""
    id: str
    webhook: str
    type: str
    state: str
    created: float
    next_attempt: float | None
    attempts: list[Attempt]
    event: dict[str, Any]  # the event's JSON body, one of service/shapes.py's EVENT_SHAPES


class WebhookChange(TypedDict, total=False):
    """PATCH /v1/webhooks/{id}'s body (service/requests/webhooks.py's WebhookChange)."""
    url: str
    events: list[str]
    enabled: bool


def _owner(ctx: Context) -> str:
    if not ctx.client.startswith("key:"):
        raise Problem("unauthorized", "webhooks belong to an API key: send the X-API-Key the operator issued "
                      "(ricochet keys create)", field="X-API-Key")
    return ctx.client.removeprefix("key:")


def _events(events: list[str]) -> list[str]:
    unknown = sorted(set(events) - set(EVENTS))
    if unknown or not events:
        raise Problem("invalid-input", f"events are one or more of {', '.join(EVENTS)}", field="events")
    return sorted(set(events))


def _checked(url: str, allow_private: bool) -> str:
    try:
        addresses(url, allow_private)
    except AddressRefused as e:
        raise Problem("address-not-allowed", str(e), field="url") from None
    return url


def _same_url(same: Hook) -> Problem:  # one endpoint, one registration: two would deliver each event twice
    return Problem("conflict", f"this key already sends to this URL ({same['id']}, events "
                   f"{', '.join(same['events'])}): change or delete that one instead")


def register(ctx: Context, url: str, events: list[str], allow_private: bool) -> NewWebhookView:
    """A new endpoint for the key asking; its record with the signing secret (shown only now)."""
    owner = _owner(ctx)
    stores = ctx.required_stores()
    record: Hook = {"id": "wh_" + uuid.uuid4().hex, "owner": owner, "url": _checked(url, allow_private),
              "events": _events(events), "created": time.time(), "secret": new_secret(), "disabled": None,
              "failing_since": None}
    same = stores.webhooks.add(record, DAY_EVENTS, MAX_PER_KEY)
    if same is True:
        raise Problem("conflict", f"a key has at most {MAX_PER_KEY} webhooks: delete one first")
    if same is not False:
        raise _same_url(same)
    return NewWebhookView(**hook_shown(record), secret=record["secret"])


def hook_shown(hook: Hook) -> WebhookView:
    """An endpoint as its key sees it: never a secret; whether it is enabled, and if
    not why; since when its attempts fail; until when a rotated secret still signs."""
    previous = hook.get("previous_until") if hook.get("previous_secret") else None
    return {"id": hook["id"], "url": hook["url"], "events": hook["events"], "created": hook["created"],
            "enabled": not hook.get("disabled"), "disabled": hook.get("disabled"),
            "failing_since": hook.get("failing_since"),
            "previous_secret_expires": previous if previous and previous > time.time() else None}


def listed(ctx: Context) -> list[WebhookView]:
    return [hook_shown(h) for h in ctx.required_stores().webhooks.owned(_owner(ctx))]


def one(ctx: Context, hook_id: str) -> Hook:
    """An endpoint of the key asking (404 for another key's: it is not theirs to know of)."""
    owner = _owner(ctx)
    hook = ctx.required_stores().webhooks.get(hook_id) if len(hook_id) <= 64 else None
    if hook is None or hook["owner"] != owner:
        raise Problem("not-found", f"this key has no webhook {echo(hook_id)!r}")
    return hook


def delete(ctx: Context, hook_id: str) -> None:
    ctx.required_stores().webhooks.remove(one(ctx, hook_id))


def update(ctx: Context, hook_id: str, changes: WebhookChange, allow_private: bool) -> WebhookView:
    """PATCH: a new URL (checked as at registration), new events, or `enabled`
    (true enables a disabled endpoint again, its run of failures forgotten; false
    disables it).  The endpoint as it is then."""
    hook = one(ctx, hook_id)
    patch: HookChanges = {}
    if "url" in changes:
        patch["url"] = _checked(changes["url"], allow_private)
    if "events" in changes:
        patch["events"] = _events(changes["events"])
    if changes.get("enabled") is True:
        patch["disabled"], patch["failing_since"] = None, None
    elif changes.get("enabled") is False:
        patch["disabled"] = hook.get("disabled") or {"reason": "disabled by its key (PATCH enabled false)",
                                                     "at": time.time()}
    changed, same = ctx.required_stores().webhooks.patch(hook["id"], patch, DAY_EVENTS)
    if same is not None:
        raise _same_url(same)
    if changed is None:
        raise Problem("not-found", f"this key has no webhook {echo(hook_id)!r}")
    return hook_shown(changed)


def rotate(ctx: Context, hook_id: str) -> RotatedSecret:
    """A new signing secret (shown only now); the one it replaces signs beside it
    for ROTATION_OVERLAP seconds, so receivers can change theirs meanwhile."""
    hook = one(ctx, hook_id)
    now = time.time()
    changed = ctx.required_stores().webhooks.change(hook["id"], lambda h: rotated(h, now, ROTATION_OVERLAP))
    if changed is None:
        raise Problem("not-found", f"this key has no webhook {echo(hook_id)!r}")
    return {"id": changed["id"], "secret": changed["secret"], "previous_secret_expires": changed["previous_until"]}


def test(ctx: Context, hook_id: str) -> DeliveryView:
    """Queue a test event for one endpoint (at most TESTS_PER_MINUTE a key): the delivery, pending."""
    hook = one(ctx, hook_id)
    stores = ctx.required_stores()
    if ctx.send is None:
        raise Problem("unavailable", "deliveries need the queue: set REDIS_URL or run `ricochet serve`")
    _disabled(hook)
    sent, reset = stores.webhooks.count_test(hook["owner"], 60)
    if sent > TESTS_PER_MINUTE:
        wait = max(1, math.ceil(reset))
        raise Problem("rate-limited", f"a key sends at most {TESTS_PER_MINUTE} test events a minute: retry in "
                      f"{wait} s", headers={"Retry-After": str(wait)}, limit=f"{TESTS_PER_MINUTE} per minute",
                      retry_after=wait)
    hook_id, message = queue_test(stores.webhooks, hook)
    _send(ctx, [(hook_id, message)])
    queued = stores.webhooks.delivery(hook_id, message)
    if queued is None:  # expired at once: it was queued for KEEP seconds
        raise Problem("not-found", f"webhook {hook['id']} has no delivery {message!r}")
    return shown(queued)


def _disabled(hook: Hook) -> None:
    if off := hook.get("disabled"):
        raise Problem("conflict", f"webhook {hook['id']} is disabled ({off['reason']}): enable it "
                      "first with PATCH /v1/webhooks/{id} {\"enabled\": true}")


def replay(ctx: Context, hook_id: str, delivery_id: str) -> DeliveryView:
    """One more attempt of a settled delivery, under its id and body (a failed
    replay is not retried): the delivery, pending."""
    hook = one(ctx, hook_id)
    stores = ctx.required_stores()
    _disabled(hook)
    found = stores.webhooks.delivery(hook["id"], delivery_id) if len(delivery_id) <= 64 else None
    if found is None:
        raise Problem("not-found", f"webhook {hook['id']} has no delivery {echo(delivery_id)!r} (deliveries are "
                      "kept 8 days)")
    if found["state"] == PENDING:
        raise Problem("conflict", f"delivery {found['id']} is pending already: its next attempt is due at "
                      f"{_stamp(found['next_attempt'])}")
    delivery = stores.webhooks.replay(hook["id"], found["id"], time.time())
    _send(ctx, [(hook["id"], found["id"])])
    return shown(delivery or found)


def _stamp(when: float | None) -> str:
    return "never" if when is None else dt.datetime.fromtimestamp(when, dt.UTC).isoformat(timespec="seconds")


def deliveries(ctx: Context, hook_id: str) -> list[DeliveryView]:
    hook = one(ctx, hook_id)
    return [shown(d) for d in ctx.required_stores().webhooks.deliveries(hook["id"])]


def shown(delivery: Delivery) -> DeliveryView:
    """A delivery as clients see it: the event's body as the JSON it is."""
    return {"id": delivery["id"], "webhook": delivery["webhook"], "type": delivery["type"], "state": delivery["state"],
            "created": delivery["created"], "next_attempt": delivery["next_attempt"], "attempts": delivery["attempts"],
            "event": json.loads(delivery.get("body") or "{}")}


def follow(ctx: Context, job: Job) -> None:
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
        ctx.send(WEBHOOK_DELIVER.of({"hook_id": hook_id, "message_id": message}), **options)


def deliver(ctx: Context, hook_id: str, message_id: str, policy: Policy, horizon: float) -> float | None:
    """One attempt of a delivery (if it is due and no other worker holds it); the
    next attempt, when it comes within SOON and `horizon` seconds (half the
    broker's visibility timeout), is sent with that countdown; later ones are the
    sweep's.  The seconds to the next attempt, or None when there is none."""
    done = attempt(ctx.required_stores().webhooks, hook_id, message_id, policy)
    if done.queued:  # the endpoint was disabled: its key's other endpoints are told
        _send(ctx, done.queued)
    if done.wait is not None and done.wait < min(SOON, horizon):
        _send(ctx, [(hook_id, message_id)], countdown=done.wait)
    return done.wait


# -- the operator's, and revoked keys ----------------------------------------------------------


def key_revoked(ctx: Context, name: str) -> int:
    """A revoked key's endpoints disabled (nothing more is sent to them, and no
    `webhook.disabled` either): how many were enabled."""
    store = ctx.required_stores().webhooks
    now, disabled = time.time(), []

    def step(hook: Hook) -> Hook | None:
        if hook.get("disabled"):
            return None
        disabled.append(hook["id"])
        return {**hook, "disabled": {"reason": REVOKED, "at": now}}

    for hook in store.owned(name):
        store.change(hook["id"], step)
    return len(set(disabled))


def owned_by(ctx: Context, name: str) -> list[WebhookView]:
    """The endpoints of the key named `name`, issued or revoked (`ricochet keys webhooks`)."""
    return [hook_shown(h) for h in ctx.required_stores().webhooks.owned(name)]


def delete_owned(ctx: Context, name: str, hook_id: str | None) -> list[str]:
    """Delete one endpoint of the key named `name` (or all of them, `hook_id` None): the ids deleted."""
    store = ctx.required_stores().webhooks
    gone = [h for h in store.owned(name) if hook_id is None or h["id"] == hook_id]
    if hook_id is not None and not gone:
        raise Problem("not-found", f"the key {echo(name)!r} has no webhook {echo(hook_id)!r}")
    for hook in gone:
        store.remove(hook)
    return [h["id"] for h in gone]



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
