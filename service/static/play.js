// The play page: a living example of the API.  It loads a puzzle (the daily one,
// /p/{code}, a random one of ?length=N, or Train's next one), plays it alone
// (solo.js: the board, moves, POST /v1/verify), and ends with a result card:
// moves against the optimum, time, hints, the streak, a share text and, for the
// daily, how others did on it.  The daily's records live in this browser
// (daily.js); its answers are sent as this browser's anonymous player's, so that
// they count in how others did (GET /v1/daily/{day}/stats).

import { archive, begin, clock, countdown, dayBefore, dayHead, fillSpread, finish, markArchive, playerId, progressOf,
         recordOf, saveProgress, share, shareText, showStats, spreadOf, summary, today } from "./daily.js";
import { ask, howToPlay, seenHowToPlay } from "./dialogs.js";
import { date, lang, switcher, t } from "./i18n.js";
import { api, problemText } from "./net.js";
import { Solo } from "./solo.js";

const $ = (id) => document.getElementById(id);
const page = { kind: null, solo: null, ended: false, record: null, attempt: null, recordIsThis: true };

// -- loading a puzzle ----------------------------------------------------------------

async function load() {
  const path = location.pathname, params = new URLSearchParams(location.search);
  let found, title, optimal = null;
  if (path.startsWith("/p/")) {
    page.kind = "puzzle";
    const code = decodeURIComponent(path.slice(3));
    found = await api("GET", `/v1/puzzles/${encodeURIComponent(code)}`).catch(failed("puzzle"));
    title = t("title.puzzle");
    document.title = t("page.puzzle");
    optimal = found.optimal_length ?? null;
  } else if (params.get("length")) {
    page.kind = "random";
    found = await api("GET", `/v1/puzzles/random?length=${encodeURIComponent(params.get("length"))}`).catch(failed());
    title = t("title.random", { n: found.optimal_length });
    document.title = t("page.puzzle");
    optimal = found.optimal_length;
    page.next = `/?length=${found.optimal_length}`;  // another of the same length
    history.replaceState(null, "", `/p/${found.code}`);
  } else if (params.get("train")) {
    page.kind = "train";
    found = await train();
    title = t("title.training", { n: found.optimal_length });
    document.title = t("page.train");
    optimal = found.optimal_length;
    page.next = "/?train=1";
  } else {
    page.kind = "daily";
    page.player = playerId();  // its first answer is rated and counts in how others did
    const day = params.get("day");
    const daily = await api("GET", day ? `/v1/daily/${encodeURIComponent(day)}` : "/v1/daily").catch(failed("day"));
    page.daily = daily;
    page.todays = !day;  // today's puzzle, as the page was opened: midnight ends its day
    found = { ...daily.puzzle, code: daily.code };
    title = t("title.daily", { number: daily.number, date: date(daily.date), grade: t(`grade.${daily.difficulty.grade}`) });
    optimal = daily.optimal_length;
  }
  if (typeof found.board !== "string") throw new Error(t("only_real_boards"));
  const board = await api("GET", `/v1/boards/${encodeURIComponent(found.board)}?tables=true`).catch(failed());
  $("title").textContent = title;
  const kept = `rr-moves:${found.code}`, before = JSON.parse(sessionStorage.getItem(kept) || "[]");
  page.solo = new Solo(found, board, {
    optimal, player: page.player, solution: () => solution(found.code),
    onReveal: (attempt) => end(attempt, null, false), onEnd: (attempt, verdict) => end(attempt, verdict),
    onMove: (moves) => sessionStorage.setItem(kept, JSON.stringify(moves)),
  });
  page.solo.replay(before);  // a reload, or another language, keeps them
  const hinted = Number(sessionStorage.getItem(`rr-hint:${found.code}`) || 0);
  if (hinted) showHint(hinted);  // the hint shown before the reload, in the page's language now
  if (page.kind === "daily") {
    Object.assign(page.solo, progressOf(page.daily.date));
    if (!recordOf(page.daily.date)) begin(page.daily.date);
    daySoFar();
  }
  page.facts = boardFacts(board, found);
  if (!seenHowToPlay("solo")) howToPlay("solo", page.facts);
  timeGoesBy(0);
  setInterval(timeGoesBy, 1000);
}

// What the how-to names only where the puzzle has it: diagonals, the vortex as the
// target (every real board holds one), the keys of the robots on the board.
const boardFacts = (board, found) => ({
  diagonals: (board.diagonals || []).length > 0,
  vortex: found.target.symbol === "vortex",
  robots: Object.keys(found.robots),
});

// A failed call, said in the reader's language and what to do about it.
const failed = (about) => (err) => {
  throw new Error(problemText(err, about));
};

// The solution, when the player gives up: the day's, or the service's answer.
async function solution(code) {
  return page.kind === "daily" ? (await api("GET", page.daily.solution_url)).moves
    : (await api("POST", "/v1/solve", { code })).moves;
}

// Train mode: the next puzzle near this browser's anonymous player's rating, whose
// answers are rated (POST /v1/verify with "player").
async function train() {
  page.player = playerId();
  // Without its solution: a round, so the player's first answer is rated (docs/ratings.md).
  const found = await api("GET", `/v1/puzzles/next?player=${page.player}&solution=false`).catch(failed());
  $("training").hidden = false;
  $("daily-box").hidden = true;
  $("result-train").hidden = true;
  const me = await fetch(`/v1/players/${page.player}`);
  const rating = me.ok ? (await me.json()).rating.value : 1500;
  $("rating").textContent = t("rating", { value: Math.round(rating) });
  return found;
}

// The time played, counted while the page is in view, the how-to closed and the
// puzzle not yet ended.
function timeGoesBy(step = 1) {
  const solo = page.solo;
  if (!solo || (step && (document.hidden || page.ended || $("how")?.open))) return;
  solo.seconds += step;
  $("clock").textContent = clock(solo.seconds);
  if (solo.seconds % 5 === 0) keepProgress();
}

function keepProgress() {
  if (page.kind === "daily" && page.solo && !recordOf(page.daily.date)) {
    saveProgress(page.daily.date, { hints: page.solo.hints, seconds: page.solo.seconds });
  }
}

// -- ending: solved, or the solution shown ---------------------------------------------

// An attempt ended (`open`: show its card now).  The daily keeps its first finish
// as the day's record; a solution shown is told first (onReveal), then again once
// played (onEnd), as one attempt.
function end(attempt, verdict, open = true) {
  if (attempt !== page.attempt) {
    const kept = page.kind === "daily" ? finish(page.daily.date, attempt) : { record: attempt, first: true };
    page.record = kept.record;
    page.recordIsThis = kept.first;
    page.attempt = attempt;
    page.ended = true;
    if (page.kind === "daily" && kept.first && attempt.result === "revealed" && counted(page.daily.date)) concede();
  }
  if (verdict && verdict.attempt) rated(verdict.attempt);
  if (page.kind === "daily") {
    $("turned-still").hidden = true;
    showStats($("stats"));
    markArchive($("archive"));
    daySoFar();
  }
  if (open) result(page.attempt, page.record);
}

// Giving up on the day, told to the server as this browser's player's answer of no
// moves: made after the solution was shown, it is not rated, and counts in how
// others did as not solved (docs/api.md).  The card's figures wait for it.  Only
// a day still counted there (today's or yesterday's, UTC) is told.
const counted = (day) => day === today() || day === dayBefore(today());

function concede() {
  page.conceded = api("POST", "/v1/verify", { puzzle: { code: page.solo.code }, moves: [], player: page.player })
    .catch(() => null);
}

function rated(attempt) {
  if (!attempt.rated) {
    page.ratingNote = page.lastHint ? t("rating.unrated.hint") : t("rating.unrated");
    return;
  }
  const now = Math.round(attempt.player.value), change = Math.round(attempt.player.change);
  page.ratingNote = t("rating.change", { before: now - change, after: now, change: `${change >= 0 ? "+" : "−"}${Math.abs(change)}` });
  $("rating").textContent = page.ratingNote;
}

function figure(list, label, value) {
  const item = document.createElement("div"), dt = document.createElement("dt"), dd = document.createElement("dd");
  dt.textContent = label;
  dd.textContent = String(value);
  item.append(dt, dd);
  list.append(item);
}

// The result card: this attempt, and for the daily the day's record and streak.
function result(attempt, record) {
  const revealed = attempt.result === "revealed", optimal = !revealed && attempt.moves === attempt.optimal;
  $("result-heading").textContent = revealed ? t("result.revealed") : optimal ? t("result.optimal") : t("result.solved");
  $("result").className = revealed ? "revealed" : optimal ? "optimal" : "solved";
  $("result-line").textContent = revealed ? t("result.line.revealed", { n: attempt.optimal })
    : optimal ? t("result.line.optimal", { n: attempt.moves })
    : t("result.line", { moves: t("moves.count", { n: attempt.moves }), optimal: attempt.optimal });
  const figures = $("result-figures");
  figures.replaceChildren();
  if (!revealed) figure(figures, t("result.moves"), `${attempt.moves} / ${attempt.optimal}`);
  figure(figures, t("result.time"), clock(attempt.seconds));
  figure(figures, t("result.hints"), attempt.hints);
  const notes = [];
  if (page.kind === "daily") {
    figure(figures, t("stats.streak"), summary().streak);
    if (!record.onDay) notes.push(t("result.archive"));
    else if (record.result === "solved" && page.daily.date < today()) notes.push(t("result.turned"));
    else if (record.result === "revealed") notes.push(t("result.streak_ends"));
    if (!page.recordIsThis) notes.push(t("result.first_counts", { moves: recordWords(record) }));
  }
  if (page.kind === "train" && page.ratingNote) notes.push(page.ratingNote);
  $("result-note").textContent = notes.join(" ");
  $("crowd").hidden = true;
  if (page.kind === "daily") crowd(record);
  $("share-text").textContent = page.kind === "daily"
    ? shareText(dayHead(page.daily), record, `${location.origin}/?day=${page.daily.date}`)
    : shareText(t("share.head.puzzle"), attempt, `${location.origin}/p/${page.solo.code}`);
  $("share-status").textContent = "";
  $("result-countdown").hidden = page.kind !== "daily";
  $("next").hidden = !page.next;
  if (!$("result").open) $("result").showModal();
  if (page.next) $("next").focus();
}

// How others did on the day's puzzle, once this finish is counted: the share who
// solved it and their average moves, and a chart of their moves over the optimum;
// nothing while no one else finished it but the reader (then, if the reader
// solved it, that they were the first).
async function crowd(record) {
  const day = page.daily.date, when = day === today() ? "today" : "day";
  await page.conceded;
  let stats;
  try {
    stats = await api("GET", `/v1/daily/${day}/stats`);
  } catch {
    return;  // the card stands without it
  }
  const solved = record.result === "solved", optimal = page.daily.optimal_length;
  let line;
  if (stats.players === 1 && stats.solved === 1 && solved) line = t(`crowd.first.${when}`);
  else if (stats.players < 2) return;
  else if (!stats.solved) line = t(`crowd.none.${when}`, { n: stats.players });
  else line = t(`crowd.${when}`, { share: percent.format(stats.solved_share), n: stats.average_moves });
  $("crowd-line").textContent = line;
  const list = $("crowd-spread");
  list.hidden = stats.players < 2 || !stats.solved;
  fillSpread(list, spreadOf(stats.moves, optimal), t("crowd.spread"), solved ? Math.min(3, record.moves - optimal) : -1);
  $("crowd").hidden = false;
}

const percent = new Intl.NumberFormat(lang, { style: "percent" });

const recordWords = (r) => r.result === "revealed" ? t("archive.revealed") : t("moves.count", { n: r.moves });

// The day's record, if there is one, beside the board (and its card a tap away).
function daySoFar() {
  const r = recordOf(page.daily.date);
  $("after").hidden = !r;
  if (!r) return;
  page.ended = true;
  $("after-text").textContent = r.result === "revealed" ? t("day.revealed")
    : t(r.moves === r.optimal ? "day.solved.optimal" : "day.solved", { n: r.moves });
  if (!page.record) {
    page.record = r;
    page.attempt = r;
    page.recordIsThis = true;
  }
}

// Showing the solution is giving up: the page asks first (unless the day is over).
async function showSolution() {
  const solo = page.solo;
  if (!solo || solo.busy) return;
  if (!solo.revealed && !(page.kind === "daily" && recordOf(page.daily.date))) {
    const words = page.kind === "daily" ? "reveal.daily" : page.kind === "train" ? "reveal.train" : "reveal.puzzle";
    if (!await ask(t("reveal.heading"), t(words), t("reveal.yes"), t("reveal.no"))) return;
  }
  if ($("result").open) $("result").close();
  await solo.reveal();
}

// Hints come one level at a time, as DriftingDroids gives them: the optimal length,
// how many robots move, which ones, then the first move.  Each is counted.
const ARROWS = { N: "↑", E: "→", S: "↓", W: "←" };
const LAST_HINT = 4;  // the first move: in Train, the answer shown (the attempt is not rated)

async function showHint(again) {
  const solo = page.solo;
  if (!solo || solo.busy || (!again && (page.shownHints || 0) >= LAST_HINT)) return;
  const path = page.kind === "daily" ? `/v1/daily/${page.daily.date}/hint` : `/v1/puzzles/${encodeURIComponent(solo.code)}/hint`;
  // The first hint tells the length: where the page says it already, hints start at the
  // second, and are numbered from 1 all the same.
  page.hintsSkipped ??= solo.optimal ? 1 : 0;
  const level = again || Math.max(page.shownHints || 0, page.hintsSkipped) + 1;
  if (!again && level >= LAST_HINT && page.kind === "train" && !page.ended && !solo.revealed
      && !await ask(t("hint.last.heading"), t("hint.last.train"), t("hint.last.yes"), t("reveal.no"))) return;
  try {
    const h = await api("GET", `${path}?level=${level}`);
    if (!again && !page.ended) solo.hints += 1;  // hints asked for, each counted once
    page.shownHints = h.level;
    keepProgress();
    const told = [t("hint.length", { n: h.optimal_length })];
    if (h.level >= 3) told.push(t("hint.robots", { robots: h.robots.map((c) => t(`colour.${c}`)).join(", ") }));
    else if (h.level >= 2) told.push(t("hint.robots_moved", { n: h.robots_moved }));
    if (h.level >= 4 && h.first_move) {
      told.push(t("hint.first", { robot: t(`robot.${h.first_move.robot}`), arrow: ARROWS[h.first_move.direction] }));
    }
    const skipped = Math.min(page.hintsSkipped, h.level - 1);
    $("hint-text").textContent = t("hint.text", { level: h.level - skipped, total: LAST_HINT - skipped,
                                                  told: told.join(" ") });
    sessionStorage.setItem(`rr-hint:${solo.code}`, String(h.level));
    if (!again) solo.say("");
    if (h.level >= LAST_HINT) {
      if (page.kind === "train" && !page.ended) {  // why the attempt will not be rated, said now and on the card
        page.lastHint = true;
        $("rating").textContent = t("rating.unrated.hint");
      }
      $("hint").disabled = true;
      if (h.first_move) {  // the first move shown on the board's controls too
        solo.select(h.first_move.robot);
        document.querySelector(`.arrow-${h.first_move.direction}`).classList.add("hinted");
      }
    }
  } catch (err) {
    $("hint-text").textContent = t("hint.none", { error: problemText(err) });
  }
}

// -- keys and buttons ----------------------------------------------------------------

function keys(event) {
  if (document.querySelector("dialog[open]") || event.target.closest("select, input, textarea")) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (page.solo && page.solo.key(event)) event.preventDefault();
  else if (event.code === "KeyS") showSolution();
  else if (event.code === "KeyH") showHint();  // no argument: the next level
  else if (event.key === "?") howToPlay("solo", page.facts);
  else return;
  event.preventDefault();
}

function lengths() {
  const params = new URLSearchParams(location.search);
  for (let n = 2; n <= 16; n++) {
    $("length").append(new Option(t("moves.count", { n }), String(n), false, String(n) === (params.get("length") || "6")));
  }
}

document.addEventListener("keydown", keys);
document.addEventListener("visibilitychange", keepProgress);
$("undo").addEventListener("click", () => page.solo && page.solo.undo());
$("reset").addEventListener("click", () => page.solo && page.solo.reset(t("back_to_start")));
$("solution").addEventListener("click", showSolution);
$("hint").addEventListener("click", () => showHint());
$("how-open").addEventListener("click", () => howToPlay("solo", page.facts));
$("result-open").addEventListener("click", () => result(page.attempt, page.record));
$("result-close").addEventListener("click", () => $("result").close());
$("share").addEventListener("click", async () => {
  try {
    $("share-status").textContent = await share($("share-text").textContent);
  } catch {
    $("share-status").textContent = t("share.failed");
  }
});
$("next").addEventListener("click", () => location.assign(page.next));
showStats($("stats"));
countdown([$("countdown"), $("result-countdown")], () => (page.todays ? page.daily.date : null), () => {
  $("turned").hidden = false;  // the day shown is over: today's is a tap away
  $("turned-still").hidden = page.ended;
  page.next = "/";
  if ($("result").open) $("next").hidden = false;
});
archive($("archive"), $("earlier"), api, today()).catch(() => { $("archive-box").hidden = true; });
lengths();
switcher($("language"));
load().catch((e) => {
  $("goal-text").textContent = e.message;
  $("goal").className = "error";
  $("title").textContent = t("load_failed.title");
  $("stage").hidden = true;
  $("recover").hidden = false;
  $("board-words-box").hidden = true;  // nothing of a board that is not there
  document.querySelector("#panel .help").hidden = true;
});
