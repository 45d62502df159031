// Calls to the API from the pages, and what went wrong said in the reader's
// language: the API answers problems as RFC 9457 problem+json whose `type`
// (/problems/<kind>) is stable, so the page words each kind itself and keeps
// the server's English `detail` for the console.

import { t } from "./i18n.js";

export class Failure extends Error {
  constructor(status, kind, detail) {
    super(detail);
    this.status = status;
    this.kind = kind;
  }
}

export async function api(method, path, body, token) {
  const headers = body ? { "Content-Type": "application/json" } : {};
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  } catch (e) {
    throw new Failure(0, "offline", e.message);
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    // a front's own error page, or nothing: the status says enough
  }
  if (!response.ok) {
    const kind = data && typeof data.type === "string" ? data.type.replace(/^.*\/problems\//, "") : String(response.status);
    const failure = new Failure(response.status, kind, (data && data.detail) || response.statusText);
    console.warn(`${method} ${path}: ${response.status} ${failure.message}`);
    throw failure;
  }
  return data;
}

// What to tell the player, by what went wrong: `about` names what was asked for
// ("puzzle", "room", ...) when the kind alone cannot say it.
export function problemText(err, about = "") {
  if (!(err instanceof Failure)) return t("error.page");
  if (err.kind === "offline") return t("error.offline");
  if (err.status === 429) return t("error.busy");
  if (err.status >= 500) return t("error.server");
  if (about === "puzzle" && (err.status === 400 || err.status === 404)) return t("error.bad_puzzle_link");
  if (about === "day" && err.kind === "not-yet-published") return t("error.not_yet");
  if (about === "day" && err.status === 404) return t("error.no_day");
  if (about === "day" && err.status === 400) return t("error.bad_day");
  if (err.kind === "no-puzzle-found") return t("error.no_puzzle_found");
  if (err.status === 404) return t("error.not_found");
  return t("error.refused");
}
