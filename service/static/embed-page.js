// The embeddable puzzle (/embed/daily, /embed/{code}): one puzzle played alone
// inside another site's iframe, with messages to the page around it.  Every
// message is an object {source: "ricochet", type, code, ...}: `ready` (the
// puzzle is drawn), `moves` (after each move: how many, and which), `solved`
// (the moves, their number and the optimum), `revealed` (the solution was
// shown), `resize` (the height the frame needs).  They carry nothing secret and
// go to any parent ("*"): a parent checks that event.origin is this site's.

import { playerId } from "./daily.js";
import { ask, howToPlay } from "./dialogs.js";
import { t } from "./i18n.js";
import { api, problemText } from "./net.js";
import { Solo } from "./solo.js";

const $ = (id) => document.getElementById(id);

function tell(type, data = {}) {
  if (window.parent !== window) window.parent.postMessage({ source: "ricochet", type, ...data }, "*");
}

async function load() {
  const code = location.pathname.replace(/^\/embed\//, "");
  let found, optimal = null, solution, link;
  if (code === "daily") {
    // /embed/daily is today's; ?day=YYYY-MM-DD a published day's (an oEmbed card of /?day=...), its length shown alike.
    const asked = new URLSearchParams(location.search).get("day");
    const day = await api("GET", asked ? `/v1/daily/${encodeURIComponent(asked)}` : "/v1/daily");
    found = { ...day.puzzle, code: day.code };
    optimal = day.optimal_length;
    solution = async () => (await api("GET", day.solution_url)).moves;
    link = `/?day=${day.date}`;
  } else {
    found = await api("GET", `/v1/puzzles/${encodeURIComponent(code)}`);
    optimal = found.optimal_length ?? null;
    solution = async () => (await api("POST", "/v1/solve", { code: found.code })).moves;
    link = `/p/${found.code}`;
  }
  $("site").href = link;
  const board = await api("GET", `/v1/boards/${encodeURIComponent(found.board)}?tables=true`);
  const player = anonymous();
  const solo = new Solo(found, board, {
    optimal, solution, player,
    onMove: (moves) => tell("moves", { code: found.code, count: moves.length, moves }),
    onReveal: (attempt) => {
      tell("revealed", { code: found.code, optimal: attempt.optimal });
      // Giving up, told as the player's answer of no moves (as the site's daily page does): made after the
      // solution was shown, it is not rated, and counts in how others did as not solved.
      if (player) api("POST", "/v1/verify", { puzzle: { code: found.code }, moves: [], player }).catch(() => null);
    },
    onEnd: (attempt) => {
      if (attempt.result === "solved") {
        tell("solved", { code: found.code, moves: attempt.path, length: attempt.moves, optimal: attempt.optimal });
      }
    },
  });
  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]") || e.altKey || e.ctrlKey || e.metaKey) return;
    if (solo.key(e)) e.preventDefault();
    else if (e.code === "KeyS") {
      e.preventDefault();
      reveal(solo);
    }
  });
  $("undo").addEventListener("click", () => solo.undo());
  $("reset").addEventListener("click", () => solo.reset(t("back_to_start")));
  $("solution").addEventListener("click", () => reveal(solo));
  tell("ready", { code: found.code, optimal });
}

// The frame's anonymous player: its answers are rated and count in how others did that day.  Browsers
// keep a frame's storage apart for each site that embeds it, so each such site has a player of its own
// (one address's new players a day are bounded, as everywhere); none where a frame is given no storage.
function anonymous() {
  try {
    return playerId();
  } catch {
    return null;
  }
}

// Showing the solution is giving up, here too: asked first.
async function reveal(solo) {
  if (solo.busy) return;
  if (!solo.revealed && !await ask(t("reveal.heading"), t("reveal.puzzle"), t("reveal.yes"), t("reveal.no"))) return;
  await solo.reveal();
}

// The board takes the height the goal line and the controls leave (embed.css): what they take is
// measured, so that it holds in every language and at every width.
const main = document.querySelector("main");
const boardBox = $("board");
function fit() {
  const body = getComputedStyle(document.body);
  const chrome = main.getBoundingClientRect().height - boardBox.getBoundingClientRect().height +
    parseFloat(body.paddingTop) + parseFloat(body.paddingBottom);
  document.documentElement.style.setProperty("--chrome", `${Math.ceil(chrome)}px`);
}
// The height the frame needs (its content's, not the frame's own), told whenever it changes.
new ResizeObserver(() => {
  fit();
  tell("resize", { height: Math.ceil(main.getBoundingClientRect().bottom + 8) });
}).observe(main);
for (const part of [$("goal"), $("controls")]) new ResizeObserver(fit).observe(part);
fit();
$("how-open").addEventListener("click", () => howToPlay("solo"));
load().catch((err) => {
  $("goal-text").textContent = problemText(err, "puzzle");
  $("goal").className = "error";
});
