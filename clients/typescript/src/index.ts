/**
 * A typed client of the ricochet-service API.
 *
 * The types (`paths`, `components`, `operations`) are generated from the
 * service's openapi.yaml by openapi-typescript (`npm run generate`); requests go
 * through openapi-fetch, so every path, parameter, body and reply is checked by
 * the TypeScript compiler against that document.
 */
import createClient, { type Client } from "openapi-fetch";

import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
export { verifyWebhook, signWebhook, WebhookVerificationError } from "./webhooks.js";
export type { WebhookEvent, WebhookHeaders } from "./webhooks.js";

type Schemas = components["schemas"];
export type Puzzle = Schemas["Puzzle"];
export type Move = Schemas["Move"];
export type Daily = Schemas["Daily"];
export type DailySolution = Schemas["DailySolution"];
export type Verdict = Schemas["Verdict"];
export type Job = Schemas["Job"];
export type Pack = Schemas["Pack"];
export type PackRequest = Schemas["PackRequest"];
export type Problem = Schemas["Problem"];
export type Webhook = Schemas["Webhook"];
export type NewWebhook = Schemas["NewWebhook"];
export type Delivery = Schemas["Delivery"];

export interface RicochetOptions {
  /** The API's base URL, e.g. http://127.0.0.1:8000 */
  baseUrl: string;
  /** An issued key (`ricochet keys create`), sent as X-API-Key; without one the client is its address. */
  apiKey?: string;
  /** Other headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use (the global one by default). */
  fetch?: typeof globalThis.fetch;
}

export type RicochetClient = Client<paths, "application/json">;

/** A client whose `GET`, `POST`, `DELETE` take the API's paths, typed: `client.GET("/v1/daily")`. */
export function createRicochetClient(options: RicochetOptions): RicochetClient {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers["X-API-Key"] = options.apiKey;
  return createClient<paths, "application/json">({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** A refusal of the API (RFC 9457 problem+json): `problem.type` is stable to branch on. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(`${status} ${problem.title}: ${problem.detail ?? ""}`);
    this.name = "ProblemError";
  }
}

/** The data of an openapi-fetch answer, or a ProblemError. */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || answer.data === undefined) {
    const problem = (answer.error ?? { type: "about:blank", title: answer.response.statusText }) as Problem;
    throw new ProblemError(answer.response.status, problem);
  }
  return answer.data;
}

export interface WaitOptions {
  intervalMs?: number;
  timeoutMs?: number;
}

/** Follow a job (GET /v1/jobs/{id}) until it succeeded, failed or was cancelled. */
export async function waitForJob(client: RicochetClient, jobId: string, options: WaitOptions = {}): Promise<Job> {
  const deadline = Date.now() + (options.timeoutMs ?? 300_000);
  for (;;) {
    const job = unwrap(await client.GET("/v1/jobs/{job_id}", { params: { path: { job_id: jobId } } }));
    if (["succeeded", "failed", "cancelled"].includes(job.state)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.state} after ${options.timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}

/** Make a pack and read it once it is done: the pack's puzzles, in order. */
export async function makePack(client: RicochetClient, request: PackRequest, options: WaitOptions = {}): Promise<Pack> {
  const job = unwrap(await client.POST("/v1/packs", { body: request }));
  const done = await waitForJob(client, job.id, options);
  if (done.state !== "succeeded") throw new Error(`pack ${job.id} ${done.state}: ${done.error ?? ""}`);
  return unwrap(await client.GET("/v1/packs/{pack_id}", { params: { path: { pack_id: job.id } } }));
}
