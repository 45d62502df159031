// The same package through require() (CommonJS): the daily, and a webhook verified.
const { createRicochetClient, unwrap } = require("@ricochet/client");
const { verifyWebhook } = require("@ricochet/client/webhooks");

(async () => {
  const api = createRicochetClient({ baseUrl: process.env.RICOCHET_BASE_URL });
  const daily = unwrap(await api.GET("/v1/daily"));
  const sample = JSON.parse(process.env.RICOCHET_WEBHOOK_SAMPLE);
  const event = await verifyWebhook(sample.secret, sample.headers, sample.body);
  console.log(JSON.stringify({ daily: daily.date, webhook: event.type }));
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
