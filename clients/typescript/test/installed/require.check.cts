// The types through require() (a CommonJS TypeScript project): compiled, never run.
import client = require("@ricochet/client");
import hooks = require("@ricochet/client/webhooks");

export async function daily(): Promise<string> {
  const api = client.createRicochetClient({ baseUrl: "http://127.0.0.1:8000" });
  const answer = await api.GET("/v1/daily");
  if (answer.error) return answer.error.type;
  const event: hooks.WebhookEvent = await hooks.verifyWebhook("whsec_", new Headers(), "{}");
  return answer.data.date + event.type;
}
