"""Webhooks over HTTP: an API key's endpoints and their deliveries
(application/webhooks.py decides; docs/webhooks.md)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app

from application import webhooks

from .common import context
from .declare import Reply, operation
from .requests.webhooks import HookPath, WebhookRequest
from .shapes import Deliveries, Delivery, NewWebhook, Webhooks

bp = Blueprint("webhooks", __name__)

KEY = [{"apiKey": []}]  # webhooks belong to an API key: without one, 401


@operation(bp, "post /v1/webhooks", "createWebhook", tag="webhooks", body=WebhookRequest, security=KEY,
           summary="Register an endpoint for events (jobs finished, days published); its signing secret is shown "
                   "only in this answer",
           description="The URL must resolve to public addresses (private, loopback and reserved ones are 422 "
                       "unless RICOCHET_WEBHOOKS_ALLOW_PRIVATE is on). Job events are sent for the jobs this key "
                       "queues while it has a webhook.",
           errors=(400, 401, 409, 422, 503), replies={
               201: Reply("The endpoint and its secret", NewWebhook,
                          headers={"Location": {"schema": {"type": "string"}}})})
def create_webhook(body: dict[str, Any]) -> Any:
    hook = webhooks.register(context(), body["url"], body["events"],
                             allow_private=current_app.config["WEBHOOKS_ALLOW_PRIVATE"])
    return hook, 201, {"Location": f"/v1/webhooks/{hook['id']}"}


@operation(bp, "get /v1/webhooks", "listWebhooks", tag="webhooks", security=KEY, errors=(401, 503),
           summary="This key's endpoints (never their secrets)", replies={200: Reply("The endpoints", Webhooks)})
def list_webhooks() -> Any:
    return {"webhooks": webhooks.listed(context())}


@operation(bp, "delete /v1/webhooks/<hook_id>", "deleteWebhook", tag="webhooks", security=KEY, path=HookPath,
           errors=(401, 404, 503), summary="Delete an endpoint: nothing more is sent to it",
           replies={204: Reply("Deleted")})
def delete_webhook(hook_id: str) -> Any:
    webhooks.delete(context(), hook_id)
    return Response(status=204)


@operation(bp, "post /v1/webhooks/<hook_id>/test", "testWebhook", tag="webhooks", security=KEY, path=HookPath,
           errors=(401, 404, 503), summary="Send the endpoint a `webhook.test` event, signed as every event",
           replies={202: Reply("The delivery, queued", Delivery)})
def test_webhook(hook_id: str) -> Any:
    return webhooks.test(context(), hook_id), 202


@operation(bp, "get /v1/webhooks/<hook_id>/deliveries", "listWebhookDeliveries", tag="webhooks", security=KEY,
           path=HookPath, errors=(401, 404, 503),
           summary="The endpoint's latest deliveries (up to 100, newest first), each with its attempts",
           replies={200: Reply("The deliveries", Deliveries)})
def deliveries(hook_id: str) -> Any:
    return {"deliveries": webhooks.deliveries(context(), hook_id)}



