/**
 * Verifying webhooks as Standard Webhooks has them (docs/webhooks.md), with
 * Node's crypto alone: `webhook-signature` holds `v1,<base64 HMAC-SHA256>` of
 * `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the base64 bytes of
 * the secret after `whsec_`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

import type { components } from "./schema.js";

export type WebhookEvent = components["schemas"]["WebhookEvent"];
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

const TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

function header(headers: WebhookHeaders, name: string): string {
  const value =
    typeof (headers as Headers).get === "function"
      ? (headers as Headers).get(name)
      : Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) throw new WebhookVerificationError(`missing ${name} header`);
  return text;
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
}

/** The `webhook-signature` value of a message (what the service sends). */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Uint8Array): string {
  const mac = createHmac("sha256", secretBytes(secret)).update(`${id}.${timestamp}.`).update(body).digest();
  return `v1,${mac.toString("base64")}`;
}

/**
 * The event, if `body` (the raw body, as received) is signed with `secret` and
 * was sent within five minutes of now; else a WebhookVerificationError.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  body: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: number } = {},
): WebhookEvent {
  const id = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  const timestamp = Number(stamp);
  if (!/^\d+$/.test(stamp)) throw new WebhookVerificationError("webhook-timestamp is not whole seconds");
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError("webhook-timestamp is too far from now");
  }
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body).slice(3), "base64");
  const matches = signatures.split(" ").some((candidate) => {
    const [version, value] = candidate.split(",", 2);
    if (version !== "v1" || value === undefined) return false;
    const given = Buffer.from(value, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("no signature matches");
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  return JSON.parse(text) as WebhookEvent;
}
