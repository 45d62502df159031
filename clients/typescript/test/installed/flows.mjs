// The flows an integrator runs, from the INSTALLED package (tests/test_typescript_client.py
// copies this into a new project that installed the packed tarball): it prints what it
// found as JSON, and the test judges it.
import { ProblemError, createRicochetClient, makePack, rateLimit, unwrap, waitForJob } from "@ricochet/client";
import { WebhookVerificationError, verifyWebhook } from "@ricochet/client/webhooks";

const api = createRicochetClient({ baseUrl: process.env.RICOCHET_BASE_URL });
const player = process.env.RICOCHET_PLAYER;
const out = {};

const answer = await api.GET("/v1/daily");
const daily = unwrap(answer);
out.daily = { date: daily.date, code: daily.code, optimal_length: daily.optimal_length };
out.limits = rateLimit(answer.response);

/** A solve's answer: at once (200), or through its job (202). */
async function solve(code) {
  const data = unwrap(await api.POST("/v1/solve", { body: { code } }));
  if ("moves" in data) return data;
  const job = await waitForJob(api, data.id, { timeoutMs: 120_000 });
  return job.result;
}

const solved = await solve(daily.code);
out.solve = { status: solved.status, length: solved.length, moves: solved.moves.length };

const verdict = unwrap(await api.POST("/v1/verify", { body: { puzzle: { code: daily.code }, moves: solved.moves, player } }));
out.verify = { solved: verdict.solved, optimal: verdict.optimal, attempt: verdict.attempt ?? null };

// The player's next puzzle, with its solution, answered as the player (recorded; unrated, since it came with its answer).
const next = unwrap(await api.GET("/v1/puzzles/next", { params: { query: { player } } }));
const answered = unwrap(await api.POST("/v1/verify", { body: { puzzle: { code: next.code }, moves: next.solution ?? [], player } }));
out.next = { code: next.code, solution: next.solution?.length ?? 0, optimal_length: next.optimal_length,
  solved: answered.solved, optimal: answered.optimal, attempt: answered.attempt ?? null };

const pack = await makePack(api, { count: 2, min_length: 6, max_length: 8, seed: "installed" }, { timeoutMs: 240_000 });
out.pack = { count: pack.count, lengths: pack.puzzles.map((p) => p.optimal_length), indexes: pack.puzzles.map((p) => p.index) };

try {
  unwrap(await api.GET("/v1/jobs/{job_id}", { params: { path: { job_id: "no-such-job" } } }));
} catch (error) {
  out.refusal = error instanceof ProblemError ? { status: error.status, type: error.problem.type } : String(error);
}

const sample = JSON.parse(process.env.RICOCHET_WEBHOOK_SAMPLE);
out.webhook = (await verifyWebhook(sample.secret, sample.headers, sample.body)).type;
try {
  await verifyWebhook(sample.secret, sample.headers, sample.body.replace("succeeded", "failed"));
  out.tampered = "verified";
} catch (error) {
  out.tampered = error instanceof WebhookVerificationError ? "refused" : String(error);
}

console.log(JSON.stringify(out));
