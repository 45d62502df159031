/**
 * The client against a live server: the pytest suite starts one and runs
 * `npm test` with RICOCHET_BASE_URL (tests/test_typescript_client.py), and
 * RICOCHET_WEBHOOK_SAMPLE, a delivery the service's own signer signed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

import { ProblemError, createRicochetClient, makePack, parseList, rateLimit, unwrap } from "../src/index.js";
import { WebhookVerificationError, signWebhook, verifyWebhook } from "../src/webhooks.js";

const baseUrl = process.env.RICOCHET_BASE_URL;
if (!baseUrl) throw new Error("set RICOCHET_BASE_URL to a running server's base URL");
const client = createRicochetClient({ baseUrl });

test("today's daily puzzle, typed", async () => {
  const daily = unwrap(await client.GET("/v1/daily"));
  assert.match(daily.date, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(daily.number >= 1 && daily.optimal_length >= 2);
  assert.equal(typeof daily.code, "string");
  assert.ok(Object.keys(daily.puzzle.robots).length >= 1);
});

test("verify: the day's solution is optimal, a move short of it is not solved", async () => {
  const daily = unwrap(await client.GET("/v1/daily"));
  const solution = unwrap(await client.GET("/v1/daily/{day}/solution", { params: { path: { day: daily.date } } }));
  assert.equal(solution.moves.length, daily.optimal_length);
  const verdict = unwrap(await client.POST("/v1/verify", { body: { puzzle: { code: daily.code }, moves: solution.moves } }));
  assert.equal(verdict.solved, true);
  assert.equal(verdict.optimal, true);
  const short = unwrap(
    await client.POST("/v1/verify", { body: { puzzle: { code: daily.code }, moves: solution.moves.slice(0, -1) } }),
  );
  assert.equal(short.solved, false);
});

test("a pack: queued, followed, read in order", async () => {
  // Short lengths: the pools hold them, so the pack is made in a second, not searched for.
  const pack = await makePack(client, { count: 3, min_length: 6, max_length: 8, seed: "typescript" });
  assert.equal(pack.count, 3);
  assert.deepEqual(
    pack.puzzles.map((p) => p.index),
    [0, 1, 2],
  );
  for (const puzzle of pack.puzzles) assert.ok(puzzle.optimal_length >= 6 && puzzle.optimal_length <= 8);
});

test("waiting for a job, a poll refused 503 is asked again after its Retry-After", async () => {
  let refused = 0;
  const flaky: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    if (request.method === "GET" && new URL(request.url).pathname.startsWith("/v1/jobs/") && refused === 0) {
      refused += 1; // the store unreachable once, as the service answers then
      const problem = { type: "/problems/unavailable", title: "Service unavailable", status: 503, detail: "retry" };
      return new Response(JSON.stringify(problem), {
        status: 503,
        headers: { "Content-Type": "application/problem+json", "Retry-After": "1" },
      });
    }
    return fetch(request);
  };
  const patient = createRicochetClient({ baseUrl: baseUrl!, fetch: flaky });
  const started = Date.now();
  const pack = await makePack(patient, { count: 1, min_length: 6, max_length: 8, seed: "retry-after" });
  assert.equal(refused, 1);
  assert.equal(pack.count, 1);
  assert.ok(Date.now() - started >= 1000, `${Date.now() - started} ms: the Retry-After was not waited`);
});

test("a refusal is a ProblemError with the problem's type", async () => {
  await assert.rejects(
    async () => unwrap(await client.GET("/v1/jobs/{job_id}", { params: { path: { job_id: "no-such-job" } } })),
    (error: unknown) =>
      error instanceof ProblemError && error.status === 404 && error.problem.type === "/problems/not-found",
  );
});

test("a webhook the service signed verifies; a changed one does not", async () => {
  const sample = JSON.parse(process.env.RICOCHET_WEBHOOK_SAMPLE ?? "null") as {
    secret: string;
    headers: Record<string, string>;
    body: string;
  } | null;
  assert.ok(sample, "set RICOCHET_WEBHOOK_SAMPLE");
  const event = await verifyWebhook(sample.secret, sample.headers, sample.body);
  assert.equal(event.type, "job.succeeded");
  assert.equal(sample.headers["webhook-signature"], await signWebhook(sample.secret, sample.headers["webhook-id"],
    Number(sample.headers["webhook-timestamp"]), sample.body));
  const headers = new Headers(sample.headers);
  assert.equal((await verifyWebhook(sample.secret, headers, Buffer.from(sample.body))).type, "job.succeeded");
  await assert.rejects(verifyWebhook(sample.secret, sample.headers, sample.body.replace("succeeded", "failed")),
    WebhookVerificationError);
  const other = "whsec_" + Buffer.alloc(24, 7).toString("base64");
  await assert.rejects(verifyWebhook(other, sample.headers, sample.body), WebhookVerificationError);
  const later = Number(sample.headers["webhook-timestamp"]) + 600;
  await assert.rejects(verifyWebhook(sample.secret, sample.headers, sample.body, { now: later }),
    WebhookVerificationError);
  // Rotation: the sender signs with the old and the new secret; either verifies, in either order.
  const rotated = { ...sample.headers, "webhook-signature": `v1,${"A".repeat(43)}= ${sample.headers["webhook-signature"]}` };
  assert.equal((await verifyWebhook(sample.secret, rotated, sample.body)).type, "job.succeeded");
  assert.equal((await verifyWebhook([other, sample.secret], sample.headers, sample.body)).type, "job.succeeded");
  await assert.rejects(verifyWebhook([other], rotated, sample.body), WebhookVerificationError);
});

test("where there is no global crypto (Node 18), the verifier takes Node's webcrypto", () => {
  const sample = process.env.RICOCHET_WEBHOOK_SAMPLE ?? "null";
  const script = `
    delete globalThis.crypto;
    if (globalThis.crypto !== undefined) throw new Error("the global crypto stayed");
    const { verifyWebhook } = await import(${JSON.stringify(new URL("../src/webhooks.js", import.meta.url).href)});
    const sample = JSON.parse(process.env.RICOCHET_WEBHOOK_SAMPLE);
    console.log((await verifyWebhook(sample.secret, sample.headers, sample.body)).type);`;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, RICOCHET_WEBHOOK_SAMPLE: sample },
    encoding: "utf8",
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout.trim(), "job.succeeded");
});

test("next: a puzzle for a player, with its solution, which verifies as that player", async () => {
  const next = unwrap(await client.GET("/v1/puzzles/next", { params: { query: { player: "ts-node-test" } } }));
  assert.equal(typeof next.code, "string");
  assert.ok(next.solution && next.solution.length >= 1);
  const verdict = unwrap(
    await client.POST("/v1/verify", { body: { puzzle: { code: next.code }, moves: next.solution, player: "ts-node-test" } }),
  );
  assert.equal(verdict.solved, true);
});

test("the IETF RateLimit fields parse as Structured Field Lists", () => {
  const headers = new Headers({
    "RateLimit-Policy": '"default";q=100;w=60, "search";q=10;w=60;qu="requests"',
    RateLimit: '"default";r=99;t=42, "search";r=0;t=7',
    "Retry-After": "7",
    "X-Quota-Kind": "pack",
    "X-Quota-Limit": "5000",
    "X-Quota-Remaining": "4964",
    "X-Quota-Reset": "3374",
  });
  assert.deepEqual(rateLimit(headers), {
    policies: [
      { name: "default", quota: 100, window: 60 },
      { name: "search", quota: 10, window: 60, unit: "requests" },
    ],
    limits: [
      { name: "default", remaining: 99, reset: 42 },
      { name: "search", remaining: 0, reset: 7 },
    ],
    quota: { kind: "pack", limit: 5000, remaining: 4964, reset: 3374 },
    retryAfter: 7,
  });
  // A token names a policy too; a malformed field is ignored whole, as RFC 9651 says.
  assert.deepEqual(rateLimit(new Headers({ RateLimit: "default;r=1" })).limits, [{ name: "default", remaining: 1 }]);
  assert.deepEqual(rateLimit(new Headers({ RateLimit: '"default";r=1, "x";r=' })).limits, []);
  assert.deepEqual(rateLimit(new Headers()), { policies: [], limits: [], quota: null, retryAfter: null });
  assert.equal(parseList('"a";q=1, ("b" c);w=2, ?1, :AQI=:')?.length, 4);
  assert.equal(parseList('"a",'), null);
});

test("every answer's limits are readable, and a refusal carries them", async () => {
  const answer = await client.GET("/v1/daily");
  const state = rateLimit(answer.response);
  if (answer.response.headers.has("RateLimit-Policy")) {
    assert.ok(state.policies.length >= 1, answer.response.headers.get("RateLimit-Policy") ?? "");
    assert.ok(state.limits.length >= 1, answer.response.headers.get("RateLimit") ?? "");
  }
  const missing = await client.GET("/v1/jobs/{job_id}", { params: { path: { job_id: "no-such-job" } } });
  try {
    unwrap(missing);
    assert.fail("a missing job was not refused");
  } catch (error) {
    assert.ok(error instanceof ProblemError);
    assert.equal(error.response, missing.response);
    assert.deepEqual(error.rateLimit, rateLimit(missing.response));
  }
});
