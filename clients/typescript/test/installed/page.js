// A page on another origin than the API: today's daily through the bundled client,
// the limits the answer let it see (CORS), and a webhook verified with WebCrypto.
import { createRicochetClient, rateLimit, unwrap } from "@ricochet/client";
import { verifyWebhook } from "@ricochet/client/webhooks";

const params = new URLSearchParams(location.search);
try {
  const api = createRicochetClient({ baseUrl: params.get("api") });
  const answer = await api.GET("/v1/daily");
  const daily = unwrap(answer);
  const sample = JSON.parse(params.get("sample"));
  const event = await verifyWebhook(sample.secret, sample.headers, sample.body);
  window.result = {
    origin: location.origin,
    daily: { date: daily.date, code: daily.code, number: daily.number },
    seen: [...answer.response.headers.keys()],
    limits: rateLimit(answer.response),
    webhook: event.type,
  };
} catch (error) {
  window.result = { error: String(error && error.stack ? error.stack : error) };
}
