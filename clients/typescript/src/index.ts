/**
 * A typed client of the ricochet-service API.
 *
 * The types (`paths`, `components`, `operations`, `webhooks`) are generated from
 * the service's openapi.yaml by openapi-typescript (`npm run generate`); requests
 * go through openapi-fetch, so every path, parameter, body and reply is checked
 * by the TypeScript compiler against that document.
 *
 * This entry uses no Node built-in, so it bundles for browsers; the webhook
 * verifier is `@ricochet/client/webhooks`.
 */
import createClient, { type Client, type FetchOptions, type FetchResponse, type ParseAs } from "openapi-fetch";

import { type RateLimitState, rateLimit, retryAfter } from "./ratelimit.js";
import type { components, operations, paths, webhooks } from "./schema.js";

export type { components, operations, paths, webhooks };
export {
  type ListMember,
  type QuotaState,
  type RateLimitPolicy,
  type RateLimitState,
  type RateLimitValue,
  Token,
  parseList,
  quotaState,
  rateLimit,
  rateLimitPolicies,
  rateLimitValues,
  retryAfter,
} from "./ratelimit.js";
export type { UntypedWebhookEvent, WebhookEvent, WebhookEventOf, WebhookEventType } from "./webhooks.js";

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
export type ProblemType = Problem["type"];
export type Webhook = Schemas["Webhook"];
export type NewWebhook = Schemas["NewWebhook"];
export type Delivery = Schemas["Delivery"];

/** The media types the client reads: the API's JSON, and its errors' problem+json (RFC 9457). */
export type Media = "application/json" | "application/problem+json";

type Method = "get" | "put" | "post" | "delete" | "patch";
type PathsWith<M extends Method> = {
  [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never;
}[keyof paths];
type Operation<P extends keyof paths, M extends Method> = paths[P][M] & Record<string | number, unknown>;
type Init<P extends keyof paths, M extends Method> = FetchOptions<Operation<P, M>>;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
type InitArgs<P extends keyof paths, M extends Method, A> =
  RequiredKeys<Init<P, M>> extends never
    ? [init?: Init<P, M> & { parseAs?: A }]
    : [init: Init<P, M> & { parseAs?: A }];
type Answer<P extends keyof paths, M extends Method, A> = FetchResponse<
  Operation<P, M>,
  [A] extends [ParseAs] ? { parseAs: A } : object,
  Media
>;

/**
 * One HTTP method of the client.  Unlike openapi-fetch's own, the options are
 * not a type parameter of their own, so an object literal is checked exactly:
 * a key the contract does not have (in the body, the params) does not compile.
 */
export type RicochetMethod<M extends Method> = <P extends PathsWith<M>, A extends ParseAs | undefined = undefined>(
  url: P,
  ...init: InitArgs<P, M, A>
) => Promise<Answer<P, M, A>>;

/**
 * openapi-fetch's client of the API's paths, whose answers are typed
 * `{ data, error, response }`: `data` the 2xx JSON, `error` the Problem.
 */
export type RicochetClient = Omit<Client<paths, Media>, "GET" | "PUT" | "POST" | "DELETE" | "PATCH"> & {
  GET: RicochetMethod<"get">;
  PUT: RicochetMethod<"put">;
  POST: RicochetMethod<"post">;
  DELETE: RicochetMethod<"delete">;
  PATCH: RicochetMethod<"patch">;
};

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

/** A client whose `GET`, `POST`, `PATCH`, `DELETE` take the API's paths, typed: `client.GET("/v1/daily")`. */
export function createRicochetClient(options: RicochetOptions): RicochetClient {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers["X-API-Key"] = options.apiKey;
  const client = createClient<paths, Media>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return client as unknown as RicochetClient;
}

/**
 * A refusal of the API (RFC 9457 problem+json): `problem.type` is stable to
 * branch on, `rateLimit` is what the answer said of the limits (a 429's
 * Retry-After and which limit, a quota's X-Quota-*).
 */
export class ProblemError extends Error {
  readonly rateLimit: RateLimitState;

  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly response?: Response,
  ) {
    super(`${status} ${problem.title}: ${problem.detail ?? ""}`);
    this.name = "ProblemError";
    this.rateLimit = response
      ? rateLimit(response)
      : { policies: [], limits: [], quota: null, retryAfter: null };
  }
}

function isProblem(value: unknown): value is Problem {
  return typeof value === "object" && value !== null && typeof (value as Problem).type === "string";
}

/** The data of an openapi-fetch answer, or a ProblemError (with the response's rate-limit state). */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  const { response } = answer;
  if (answer.error !== undefined || answer.data === undefined || !response.ok) {
    const problem: Problem = isProblem(answer.error)
      ? answer.error
      : ({ type: "about:blank", title: response.statusText || `HTTP ${response.status}`, status: response.status } as unknown as Problem);
    throw new ProblemError(response.status, problem, response);
  }
  return answer.data;
}

export interface WaitOptions {
  /** Between polls when the server says nothing (Retry-After says otherwise): 250 ms. */
  intervalMs?: number;
  /** Give up after (300 s). */
  timeoutMs?: number;
  /** The longest wait a Retry-After may ask for (30 s): a longer one is cut to it. */
  maxRetryAfterMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follow a job (GET /v1/jobs/{id}) until it succeeded, failed or was
 * cancelled.  A poll refused 429 or 503 is retried after its Retry-After
 * (within `maxRetryAfterMs`), as is a job the server says to look at later.
 */
export async function waitForJob(client: RicochetClient, jobId: string, options: WaitOptions = {}): Promise<Job> {
  const timeoutMs = options.timeoutMs ?? 300_000;
  const deadline = Date.now() + timeoutMs;
  const capMs = options.maxRetryAfterMs ?? 30_000;
  for (;;) {
    const answer = await client.GET("/v1/jobs/{job_id}", { params: { path: { job_id: jobId } } });
    const after = retryAfter(answer.response);
    const status = answer.response.status;
    if ((status === 429 || status === 503) && after !== null && Date.now() + after * 1000 <= deadline) {
      await sleep(Math.min(after * 1000, capMs));
      continue;
    }
    const job = unwrap(answer);
    if (["succeeded", "failed", "cancelled"].includes(job.state)) return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.state} after ${timeoutMs} ms`);
    await sleep(after !== null ? Math.min(after * 1000, capMs) : (options.intervalMs ?? 250));
  }
}

/** Make a pack and read it once it is done: the pack's puzzles, in order. */
export async function makePack(client: RicochetClient, request: PackRequest, options: WaitOptions = {}): Promise<Pack> {
  const job = unwrap(await client.POST("/v1/packs", { body: request }));
  const done = await waitForJob(client, job.id, options);
  if (done.state !== "succeeded") throw new Error(`pack ${job.id} ${done.state}: ${done.error ?? ""}`);
  return unwrap(await client.GET("/v1/packs/{pack_id}", { params: { path: { pack_id: job.id } } }));
}
