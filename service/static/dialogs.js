// The pages' dialogs: how to play (shown on a first visit, then one tap away) and
// a question before something that cannot be taken back.  Each is a modal
// <dialog>: focus moves into it, Escape closes it, and it stays in the viewport.

import { t } from "./i18n.js";

const SEEN = "rr-how-to-play-v1";   // {solo: true, table: true}: the introductions this browser has seen

function dialog(id, labelledBy) {
  let el = document.getElementById(id);
  if (el) return el;
  el = document.createElement("dialog");
  el.id = id;
  el.setAttribute("aria-labelledby", labelledBy);
  document.body.append(el);
  return el;
}

function element(tag, text, className) {
  const el = document.createElement(tag);
  if (text !== undefined) el.textContent = text;
  if (className) el.className = className;
  return el;
}

// The robots' keys in words: "1–5", "1–4", "1, 2, 4" (a robot's key is its colour's place).
const KEYED = ["red", "green", "blue", "yellow", "black"];

function keysOf(robots) {
  const keys = KEYED.map((c, i) => (robots.includes(c) ? i + 1 : 0)).filter(Boolean);
  const run = keys.length > 2 && keys.every((k, i) => i === 0 || k === keys[i - 1] + 1);
  return run ? `${keys[0]}–${keys[keys.length - 1]}` : keys.join(", ");
}

// How to play: the rules in a few lines and a picture of two moves.  `kind` is
// "solo" (a puzzle alone) or "table" (a room: bids and the sand timer too);
// `board` ({diagonals, vortex, robots}), where known, leaves out what the puzzle
// has not: diagonals, the vortex as its target, the keys of robots not on it.
export function howToPlay(kind, board = null) {
  const el = dialog("how", "how-heading");
  const picture = element("picture"), still = element("source"), img = element("img");
  still.media = "(prefers-reduced-motion: reduce)";
  still.srcset = "/static/how-to-play-still.svg";
  img.src = "/static/how-to-play.svg";
  img.alt = t("how.picture");
  img.width = 160;
  img.height = 160;
  picture.append(still, img);
  const rules = element("ul");
  const lines = ["how.slide"];
  if (!board || board.diagonals) lines.push("how.diagonal");
  lines.push("how.stop", "how.goal");
  if (!board || board.vortex) lines.push("how.vortex");
  lines.push("how.fewest");
  if (kind === "table") lines.push("how.bid", "how.show", "how.chip");
  rules.append(...lines.map((key) => element("li", t(key))));
  rules.append(element("li", t("how.controls", { keys: keysOf(board ? board.robots : KEYED) })));
  const close = element("button", t(kind === "table" ? "how.close.table" : "how.close"), "primary");
  close.type = "button";
  close.addEventListener("click", () => el.close());
  const form = element("div", undefined, "how");
  form.append(picture, rules);
  el.replaceChildren(element("h2", t("how.heading")), form, close);
  el.querySelector("h2").id = "how-heading";
  el.addEventListener("close", () => {
    const seen = read();
    seen[kind] = true;
    localStorage.setItem(SEEN, JSON.stringify(seen));
  }, { once: true });
  el.showModal();
  close.focus({ preventScroll: true });  // a dialog taller than the screen opens at its top
  el.scrollTop = 0;
  return el;
}

function read() {
  try {
    return JSON.parse(localStorage.getItem(SEEN)) || {};
  } catch {
    return {};
  }
}

export const seenHowToPlay = (kind) => Boolean(read()[kind]);

// A question with two answers; resolves to true for `yes`.
export function ask(heading, text, yes, no) {
  const el = dialog("ask", "ask-heading");
  const h = element("h2", heading);
  h.id = "ask-heading";
  const sure = element("button", yes, "danger");
  const back = element("button", no, "primary");
  sure.type = back.type = "button";
  sure.id = "ask-yes";
  back.id = "ask-no";
  const buttons = element("div", undefined, "buttons");
  buttons.append(back, sure);
  el.replaceChildren(h, element("p", text), buttons);
  return new Promise((resolve) => {
    sure.addEventListener("click", () => { el.close(); resolve(true); });
    back.addEventListener("click", () => { el.close(); resolve(false); });
    el.addEventListener("cancel", () => resolve(false), { once: true });
    el.showModal();
    back.focus();
  });
}
