"""Webhooks over HTTP: an API key's endpoints and their deliveries
(application/webhooks.py decides; docs/webhooks.md)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app

from application import webhooks

from .common import context
from .declare import Reply, operation
from .requests.webhooks import DeliveryPath, HookPath, WebhookChange, WebhookRequest
from .shapes import Deliveries, Delivery, NewWebhook, RotatedSecret, Webhook, Webhooks

bp = Blueprint("webhooks", __name__)

KEY: list[dict[str, list[str]]] = [{"apiKey": []}]  # webhooks belong to an API key: without one, 401


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
           summary="This key's endpoints (never their secrets), each enabled or disabled with the reason",
           replies={200: Reply("The endpoints", Webhooks)})
def list_webhooks() -> Any:
    return {"webhooks": webhooks.listed(context())}


@operation(bp, "delete /v1/webhooks/<hook_id>", "deleteWebhook", tag="webhooks", security=KEY, path=HookPath,
           errors=(401, 404, 503), summary="Delete an endpoint: nothing more is sent to it",
           replies={204: Reply("Deleted")})
def delete_webhook(hook_id: str) -> Any:
    webhooks.delete(context(), hook_id)
    return Response(status=204)


@operation(bp, "patch /v1/webhooks/<hook_id>", "updateWebhook", tag="webhooks", security=KEY, path=HookPath,
           body=WebhookChange, errors=(400, 401, 404, 409, 422, 503),
           summary="Change an endpoint's URL or events, or enable it again (`{\"enabled\": true}`)",
           description="A new URL is checked as at registration. Enabling a disabled endpoint forgets its run of "
                       "failures; deliveries that failed while it was disabled are not sent again (replay them).",
           replies={200: Reply("The endpoint as it is now", Webhook)})
def update_webhook(hook_id: str, body: webhooks.WebhookChange) -> Any:  # the body as WebhookChange loaded it
    return webhooks.update(context(), hook_id, body, allow_private=current_app.config["WEBHOOKS_ALLOW_PRIVATE"])


@operation(bp, "post /v1/webhooks/<hook_id>/rotate", "rotateWebhookSecret", tag="webhooks", security=KEY,
           path=HookPath, errors=(401, 404, 503),
           summary="A new signing secret, shown only in this answer; the previous one signs beside it for 24 hours",
           description="During the overlap each attempt carries two signatures in `webhook-signature`, separated "
                       "by a space (the new secret's first): a receiver holding either secret verifies it.",
           replies={200: Reply("The new secret", RotatedSecret)})
def rotate_webhook(hook_id: str) -> Any:
    return webhooks.rotate(context(), hook_id)


@operation(bp, "post /v1/webhooks/<hook_id>/test", "testWebhook", tag="webhooks", security=KEY, path=HookPath,
           errors=(401, 404, 409, 503),
           summary="Send the endpoint a `webhook.test` event, signed as every event (5 a minute per key; 429 beyond)",
           replies={202: Reply("The delivery, queued", Delivery)})
def test_webhook(hook_id: str) -> Any:
    return webhooks.test(context(), hook_id), 202


@operation(bp, "get /v1/webhooks/<hook_id>/deliveries", "listWebhookDeliveries", tag="webhooks", security=KEY,
           path=HookPath, errors=(401, 404, 503),
           summary="The endpoint's latest deliveries (up to 100, newest first), each with its attempts",
           replies={200: Reply("The deliveries", Deliveries)})
def deliveries(hook_id: str) -> Any:
    return {"deliveries": webhooks.deliveries(context(), hook_id)}


@operation(bp, "post /v1/webhooks/<hook_id>/deliveries/<delivery_id>/retry", "retryWebhookDelivery",
           tag="webhooks", security=KEY, path=DeliveryPath, errors=(401, 404, 409, 503),
           summary="Send a settled delivery once more, under its webhook-id and body (409 while it is pending)",
           replies={202: Reply("The delivery, pending again", Delivery)})
def retry_delivery(hook_id: str, delivery_id: str) -> Any:
    return webhooks.replay(context(), hook_id, delivery_id), 202
