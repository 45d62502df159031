"""Webhooks' requests: a new endpoint, and an endpoint by its id."""

from __future__ import annotations

from marshmallow import fields, validate

from workers.webhooks import EVENTS, MAX_URL

from . import Strict

__all__ = ["HookPath", "WebhookRequest"]


class WebhookRequest(Strict):
    """POST /v1/webhooks: {"url": "https://...", "events": ["job.succeeded", ...]}."""

    url = fields.String(required=True, validate=validate.Length(min=8, max=MAX_URL), metadata={
        "description": "where events are POSTed: http:// or https://, to a public address; redirects are not "
                       "followed"})
    events = fields.List(fields.String(validate=validate.OneOf(EVENTS)), required=True,
                         validate=validate.Length(min=1, max=len(EVENTS)),
                         metadata={"description": "the events wanted"})


class HookPath(Strict):
    hook_id = fields.String(required=True, metadata={"description": "the endpoint's id, as its creation gave it"})
