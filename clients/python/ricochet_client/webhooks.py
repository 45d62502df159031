"""Verifying the service's webhooks as Standard Webhooks has them, with the
standard library: `webhook-signature` holds one or more space-separated
`v1,<base64 HMAC-SHA256>` of `{webhook-id}.{webhook-timestamp}.{body}`, keyed
with the base64 bytes of the secret after `whsec_`.  Several signatures arrive
while a secret is rotated (the old and the new one sign): any one that matches
will do.  The timestamp must be within `tolerance` seconds of now, so that a
captured delivery cannot be replayed later."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from ._generated import WebhookPayload

__all__ = ["TOLERANCE_SECONDS", "WebhookVerificationError", "sign_webhook", "verify_webhook"]

TOLERANCE_SECONDS = 300


class WebhookVerificationError(ValueError):
    """The delivery is not the service's, or is too old or too new: answer it 4xx and ignore it."""


def sign_webhook(secret: str, message_id: str, timestamp: int, body: str | bytes) -> str:
    """The `webhook-signature` value the service sends for a message."""
    payload = body.encode() if isinstance(body, str) else body
    mac = hmac.new(_key(secret), f"{message_id}.{timestamp}.".encode() + payload, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify_webhook(secret: str, headers: Mapping[str, str] | Any, body: str | bytes, *,
                   tolerance: float = TOLERANCE_SECONDS, now: float | None = None) -> WebhookPayload:
    """The event (the body's JSON: `type`, `timestamp`, `data`, typed by the
    contract's `webhooks` section) when `body`, the raw body as received, carries
    a signature made with `secret` within `tolerance` seconds of `now`; else
    WebhookVerificationError.  `headers` is any mapping (looked up in any case)
    or an object with `.get`."""
    message_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    if not stamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not whole seconds since the epoch")
    timestamp = int(stamp)
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        raise WebhookVerificationError(f"webhook-timestamp is more than {tolerance:g} s from now")
    expected = base64.b64decode(sign_webhook(secret, message_id, timestamp, body)[3:])
    for candidate in _header(headers, "webhook-signature").split():
        version, _, value = candidate.partition(",")
        try:
            given = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            continue
        if version == "v1" and hmac.compare_digest(given, expected):
            return json.loads(body)
    raise WebhookVerificationError("no signature in webhook-signature matches this secret")


def _key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the secret is not whsec_ followed by base64") from None


def _header(headers: Mapping[str, str] | Any, name: str) -> str:
    value = headers.get(name)
    if value is None and isinstance(headers, Mapping):
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if not value:
        raise WebhookVerificationError(f"the {name} header is missing")
    return str(value)
