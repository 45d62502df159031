/**
 * Verifying webhooks as Standard Webhooks has them (docs/webhooks.md):
 * `webhook-signature` holds one or more space-separated `v1,<base64 HMAC-SHA256>`
 * of `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the base64 bytes of
 * the secret after `whsec_`.  While a secret is rotated the service signs with
 * the old and the new one, so a delivery carries two signatures and either
 * verifies it.
 *
 * Imported as `@ricochet/client/webhooks`, apart from the client, and written on
 * WebCrypto (`globalThis.crypto.subtle`, or Node 18's `webcrypto`) alone: the same
 * code runs in Node, browsers, Deno, Bun and edge workers, so it is async.
 */
import type { webhooks } from "./schema.js";

/** An event's body while the contract declares no `webhooks` section: its type, when, and untyped data. */
export interface UntypedWebhookEvent {
  type: string;
  timestamp: string;
  data: { [key: string]: unknown };
}

type EventBody<Item> = Item extends { post: { requestBody?: { content: { "application/json": infer Body } } } }
  ? Body
  : never;

/**
 * Every event the contract's `webhooks` section (OpenAPI 3.1) declares, as the
 * body it POSTs: narrow on `type` to get its `data` typed.  Until openapi.yaml has
 * that section (openapi-typescript then emits `webhooks` as an empty record), the
 * untyped shape.
 */
export type WebhookEvent = string extends keyof webhooks
  ? UntypedWebhookEvent
  : { [Name in keyof webhooks]: EventBody<webhooks[Name]> }[keyof webhooks];

/** The events' names (`job.succeeded`, ...). */
export type WebhookEventType = WebhookEvent["type"];

/** The event of one name: `WebhookEventOf<"job.succeeded">["data"]`. */
export type WebhookEventOf<Type extends WebhookEventType> = Extract<WebhookEvent, { type: Type }>;

/** A fetch Request's Headers, or Node's IncomingHttpHeaders (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the webhook-timestamp may be from now, either way (300 s, as Standard Webhooks has it). */
  toleranceSeconds?: number;
  /** Now, in Unix seconds (for tests and replays). */
  now?: number;
}

const TOLERANCE_SECONDS = 300;
const PREFIX = "whsec_";
const encoder = new TextEncoder();

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

let found: Promise<SubtleCrypto> | undefined;

/** WebCrypto: the global one, or on Node 18 (which has no global `crypto`) its crypto module's. */
function subtle(): Promise<SubtleCrypto> {
  found ??= locate();
  return found;
}

async function locate(): Promise<SubtleCrypto> {
  const global = globalThis.crypto?.subtle;
  if (global) return global;
  if ((globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node) {
    // Computed, so that a bundler for browsers leaves it out rather than failing on a Node built-in.
    const name = ["node", "crypto"].join(":");
    const { webcrypto } = (await import(name)) as { webcrypto: Crypto };
    return webcrypto.subtle;
  }
  throw new Error(
    "verifying webhooks needs WebCrypto (globalThis.crypto.subtle): Node 18+, a browser page served over " +
      "https or from localhost, Deno, Bun or a worker",
  );
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

function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null; // not base64
  }
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === "string") return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

async function key(secret: string): Promise<CryptoKey> {
  const raw = fromBase64(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  if (raw === null || raw.length === 0) {
    throw new WebhookVerificationError(`the secret is not ${PREFIX} and base64, as the service gave it`);
  }
  return (await subtle()).importKey("raw", raw as Uint8Array<ArrayBuffer>, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

function signedContent(id: string, timestamp: number, body: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  const head = encoder.encode(`${id}.${timestamp}.`);
  const tail = bytesOf(body);
  const content = new Uint8Array(head.length + tail.length);
  content.set(head);
  content.set(tail, head.length);
  return content;
}

/** The `webhook-signature` value of a message as the service sends it (one secret). */
export async function signWebhook(
  secret: string,
  id: string,
  timestamp: number,
  body: string | Uint8Array | ArrayBuffer,
): Promise<string> {
  const mac = await (await subtle()).sign("HMAC", await key(secret), signedContent(id, timestamp, body));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

/**
 * The event, if `body` (the raw body, as received: parse nothing before) carries
 * a signature made with `secret` (or any of `secret`, when you rotate yours and
 * keep the old one for a while) and was sent within five minutes of now; else a
 * WebhookVerificationError.  Any of the space-separated signatures may match.
 */
export async function verifyWebhook(
  secret: string | readonly string[],
  headers: WebhookHeaders,
  body: string | Uint8Array | ArrayBuffer,
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, "webhook-id");
  const stamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!/^\d+$/.test(stamp)) throw new WebhookVerificationError("webhook-timestamp is not whole seconds");
  const timestamp = Number(stamp);
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? TOLERANCE_SECONDS)) {
    throw new WebhookVerificationError("webhook-timestamp is too far from now");
  }
  const given = signatures
    .split(" ")
    .map((candidate) => candidate.split(","))
    .filter(([version, value]) => version === "v1" && value !== undefined)
    .map(([, value]) => fromBase64(value))
    .filter((value): value is Uint8Array => value !== null && value.length === 32);
  const content = signedContent(id, timestamp, body);
  const secrets = typeof secret === "string" ? [secret] : secret;
  const crypto = await subtle();
  for (const each of secrets) {
    const hmac = await key(each);
    for (const signature of given) {
      // subtle.verify compares in constant time
      if (await crypto.verify("HMAC", hmac, signature as Uint8Array<ArrayBuffer>, content)) {
        return JSON.parse(new TextDecoder().decode(bytesOf(body))) as WebhookEvent;
      }
    }
  }
  throw new WebhookVerificationError("no signature matches");
}
