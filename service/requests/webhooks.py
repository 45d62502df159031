"""Webhooks' requests: a new endpoint, a change to one, an endpoint by its id,
and one of its deliveries."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate, validates_schema

from workers.webhooks import EVENTS, MAX_URL

from . import Strict

__all__ = ["DeliveryPath", "HookPath", "WebhookChange", "WebhookRequest"]


def _url(**options: Any) -> fields.String:
    return fields.String(validate=validate.Length(min=8, max=MAX_URL), metadata={
        "description": "where events are POSTed: http:// or https://, to a public address; redirects are not "
                       "followed"}, **options)


def _events(**options: Any) -> fields.List[str]:
    return fields.List(fields.String(validate=validate.OneOf(EVENTS)),
                       validate=validate.Length(min=1, max=len(EVENTS)),
                       metadata={"description": "the events wanted (`webhook.test` and `webhook.disabled` are "
                                                "sent whatever these are)"}, **options)


class WebhookRequest(Strict):
    """POST /v1/webhooks: {"url": "https://...", "events": ["job.succeeded", ...]}."""

    url = _url(required=True)
    events = _events(required=True)


class WebhookChange(Strict):
    """PATCH /v1/webhooks/{id}: any of a new URL, new events, and enabled."""

    url = _url()
    events = _events()
    enabled = fields.Boolean(truthy={True}, falsy={False}, error_messages={"invalid": "must be true or false"},
                             metadata={
        "description": "true enables a disabled endpoint again (its run of failures forgotten); false disables it"})

    @validates_schema
    def _something(self, data: dict[str, Any], **_: Any) -> None:
        if not data:
            raise ValidationError("send at least one of url, events and enabled", "url")


class HookPath(Strict):
    hook_id = fields.String(required=True, metadata={"description": "the endpoint's id, as its creation gave it"})


class DeliveryPath(HookPath):
    delivery_id = fields.String(required=True, metadata={
        "description": "the delivery's id (its webhook-id), as its listing gives it"})
