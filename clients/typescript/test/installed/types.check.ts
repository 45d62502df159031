/**
 * The types carry the contract: compiled (never run) by tsc against the
 * installed package (tests/test_typescript_client.py).  Each `@ts-expect-error`
 * line must fail to compile, or tsc reports the directive as unused and the
 * check fails: a stray body key, a path or a parameter the contract does not
 * have, a problem type or a webhook event it does not define.
 */
import {
  type Daily,
  type Problem,
  type ProblemType,
  type RateLimitState,
  ProblemError,
  createRicochetClient,
  rateLimit,
  unwrap,
} from "@ricochet/client";
import {
  type WebhookEvent,
  type WebhookEventOf,
  type WebhookEventType,
  verifyWebhook,
} from "@ricochet/client/webhooks";

const api = createRicochetClient({ baseUrl: "http://127.0.0.1:8000" });

export async function contract(): Promise<void> {
  const job = await api.GET("/v1/jobs/{job_id}", { params: { path: { job_id: "x" } } });
  if (job.error) {
    const type: ProblemType = job.error.type; // problem+json errors are Problems
    const problem: Problem = job.error;
    const detail: string = job.error.detail;
    void [type, problem, detail];
  } else {
    const state: "pending" | "running" | "succeeded" | "failed" | "cancelled" = job.data.state;
    void state;
  }

  const verdict = await api.POST("/v1/verify", { body: { puzzle: { code: "x" }, moves: [] } });
  if (verdict.data) {
    const solved: boolean = verdict.data.solved;
    void solved;
  }
  // @ts-expect-error a body key VerifyRequest does not have
  await api.POST("/v1/verify", { body: { puzzle: { code: "x" }, moves: [], stray: 1 } });
  // @ts-expect-error a key no puzzle reference has, deeper in the body
  await api.POST("/v1/verify", { body: { puzzle: { code: "x", stray: 1 }, moves: [] } });
  // @ts-expect-error the body is required
  await api.POST("/v1/verify");
  // @ts-expect-error a path the contract does not have
  await api.GET("/v1/no-such-path");
  // @ts-expect-error a query parameter the operation does not take
  await api.GET("/v1/puzzles/next", { params: { query: { player: "p", stray: 1 } } });
  // @ts-expect-error the player is a required query parameter
  await api.GET("/v1/puzzles/next", { params: { query: {} } });
  // @ts-expect-error not one of the contract's problem types
  const unknown: ProblemType = "/problems/no-such-problem";
  void unknown;

  const daily: Daily = unwrap(await api.GET("/v1/daily"));
  // @ts-expect-error the daily has no such field
  void daily.no_such_field;

  const text = await api.GET("/v1/daily", { parseAs: "text" });
  if (text.data !== undefined) {
    const body: string = text.data; // parseAs changes what data is
    void body;
  }

  const book = await api.GET("/v1/packs/{pack_id}.pdf", { params: { path: { pack_id: "x" } }, parseAs: "blob" });
  if (book.data !== undefined) {
    const pdf: Blob = book.data;
    void pdf;
  }

  const limits: RateLimitState = rateLimit(job.response);
  const remaining: number | undefined = limits.limits[0]?.remaining;
  const window: number | undefined = limits.policies[0]?.window;
  void [remaining, window];
  try {
    unwrap(job);
  } catch (error) {
    if (error instanceof ProblemError) {
      const type: ProblemType = error.problem.type;
      const after: number | null = error.rateLimit.retryAfter;
      void [type, after];
    }
  }

  const event: WebhookEvent = await verifyWebhook(["whsec_old", "whsec_new"], new Headers(), "{}");
  const name: WebhookEventType = event.type;
  const when: string = event.timestamp;
  void [name, when, event.data];
  // The events are the contract's `webhooks` section: narrowing on the type types the data.
  if (event.type === "job.succeeded") {
    const data: WebhookEventOf<"job.succeeded">["data"] = event.data;
    void data;
  }
  // @ts-expect-error not an event the contract declares
  const bogus: WebhookEventType = "no.such.event";
  void bogus;
}
