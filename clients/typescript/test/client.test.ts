/**
 * The client against a live server: the pytest suite starts one and runs
 * `npm test` with RICOCHET_BASE_URL (tests/test_typescript_client.py), and
 * RICOCHET_WEBHOOK_SAMPLE, a delivery the service's own signer signed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ProblemError,
  WebhookVerificationError,
  createRicochetClient,
  makePack,
  signWebhook,
  unwrap,
  verifyWebhook,
} from "../src/index.js";

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
  const pack = await makePack(client, { count: 3, min_length: 8, max_length: 10, seed: "typescript" });
  assert.equal(pack.count, 3);
  assert.deepEqual(
    pack.puzzles.map((p) => p.index),
    [0, 1, 2],
  );
  for (const puzzle of pack.puzzles) assert.ok(puzzle.optimal_length >= 8 && puzzle.optimal_length <= 10);
});

test("a refusal is a ProblemError with the problem's type", async () => {
  await assert.rejects(
    async () => unwrap(await client.GET("/v1/jobs/{job_id}", { params: { path: { job_id: "no-such-job" } } })),
    (error: unknown) =>
      error instanceof ProblemError && error.status === 404 && error.problem.type === "/problems/not-found",
  );
});

test("a webhook the service signed verifies; a changed one does not", () => {
  const sample = JSON.parse(process.env.RICOCHET_WEBHOOK_SAMPLE ?? "null") as {
    secret: string;
    headers: Record<string, string>;
    body: string;
  } | null;
  assert.ok(sample, "set RICOCHET_WEBHOOK_SAMPLE");
  const event = verifyWebhook(sample.secret, sample.headers, sample.body);
  assert.equal(event.type, "job.succeeded");
  assert.equal(sample.headers["webhook-signature"], signWebhook(sample.secret, sample.headers["webhook-id"],
    Number(sample.headers["webhook-timestamp"]), sample.body));
  const headers = new Headers(sample.headers);
  assert.equal(verifyWebhook(sample.secret, headers, Buffer.from(sample.body)).type, "job.succeeded");
  assert.throws(() => verifyWebhook(sample.secret, sample.headers, sample.body.replace("succeeded", "failed")),
    WebhookVerificationError);
  assert.throws(() => verifyWebhook("whsec_" + Buffer.alloc(24).toString("base64"), sample.headers, sample.body),
    WebhookVerificationError);
  const later = Number(sample.headers["webhook-timestamp"]) + 600;
  assert.throws(() => verifyWebhook(sample.secret, sample.headers, sample.body, { now: later }),
    WebhookVerificationError);
});
