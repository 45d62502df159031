// The play page: a living example of the API.  It loads a puzzle (the daily one,
// /p/{code}, a random one of ?length=N, or Train's next one), draws the board from
// the API's SVG, slides robots with the board's own step tables
// (GET /v1/boards/{spec}?tables=true), asks POST /v1/verify whether an answer is
// solved and optimal, and ends with a result card: moves against the optimum,
// time, hints, the streak, and a share text.

import { BoardView, COLOURS, DIRS, NAMES, arrowPad, chipName, chipPicture, chooserButton, colourOfKey, goalCell,
         inWords, pause, showChosen, slide, whoName } from "./board.js";
import { archive, clock, countdown, dayHead, finish, markArchive, playerId, progressOf, recordOf, saveProgress, share, shareText,
         showStats, summary, today } from "./daily.js";
import { ask, howToPlay, seenHowToPlay } from "./dialogs.js";
import { date, switcher, t } from "./i18n.js";
import { api, problemText } from "./net.js";

const $ = (id) => document.getElementById(id);
const state = { kind: null, puzzle: null, board: null, view: null, start: {}, cells: {}, moves: [], history: [],
                selected: null, busy: false, optimal: null, hints: 0, seconds: 0, revealed: false, ended: false };

// -- loading a puzzle ----------------------------------------------------------------

async function load() {
  const path = location.pathname, params = new URLSearchParams(location.search);
  let found;
  if (path.startsWith("/p/")) {
    state.kind = "puzzle";
    const code = decodeURIComponent(path.slice(3));
    found = await api("GET", `/v1/puzzles/${encodeURIComponent(code)}`).catch(failed("puzzle"));
    state.title = t("title.puzzle");
    state.optimal = found.optimal_length ?? null;
  } else if (params.get("length")) {
    state.kind = "random";
    found = await api("GET", `/v1/puzzles/random?length=${encodeURIComponent(params.get("length"))}`).catch(failed());
    state.title = t("title.random", { n: found.optimal_length });
    state.optimal = found.optimal_length;
    history.replaceState(null, "", `/p/${found.code}`);
  } else if (params.get("train")) {
    state.kind = "train";
    found = await train();
  } else {
    state.kind = "daily";
    const day = params.get("day");
    const daily = await api("GET", day ? `/v1/daily/${encodeURIComponent(day)}` : "/v1/daily").catch(failed("day"));
    state.daily = daily;
    found = { ...daily.puzzle, code: daily.code };
    state.title = t("title.daily", { number: daily.number, date: date(daily.date), grade: t(`grade.${daily.difficulty.grade}`) });
    state.optimal = daily.optimal_length;
    const kept = progressOf(daily.date);
    state.hints = kept.hints;
    state.seconds = kept.seconds;
  }
  state.code = found.code;
  $("board").dataset.code = found.code;
  state.puzzle = { board: found.board, robots: found.robots, target: found.target, rules: found.rules };
  if (typeof found.board !== "string") throw new Error(t("only_real_boards"));
  state.board = await api("GET", `/v1/boards/${encodeURIComponent(found.board)}?tables=true`).catch(failed());
  $("board-image").src = `/v1/boards/${encodeURIComponent(found.board)}.svg`;
  $("board-image").alt = t("board.alt", { spec: found.board });
  for (const [c, cell] of Object.entries(found.robots)) state.start[c] = cell;
  state.goal = goalCell(state.board, state.puzzle.target);
  draw();
  if (state.kind === "daily") daySoFar();
  if (!seenHowToPlay("solo")) howToPlay("solo");
  setInterval(timeGoesBy, 1000);
}

// A failed call, said in the reader's language and what to do about it.
const failed = (about) => (err) => {
  throw new Error(problemText(err, about));
};

// Train mode: the next puzzle near this browser's anonymous player's rating, whose
// answers are rated (POST /v1/verify with "player").
async function train() {
  state.player = playerId();
  const found = await api("GET", `/v1/puzzles/next?player=${state.player}`).catch(failed());
  state.title = t("title.training", { n: found.optimal_length });
  state.optimal = found.optimal_length;
  $("training").hidden = false;
  $("daily-box").hidden = true;
  $("result-train").hidden = true;
  const me = await fetch(`/v1/players/${state.player}`);
  const rating = me.ok ? (await me.json()).rating.value : 1500;
  $("rating").textContent = t("rating", { value: Math.round(rating) });
  return found;
}

function draw() {
  state.view = new BoardView($("board"), state.board, { onSelect: select, onMove: (d) => go(d) });
  state.view.cells = () => state.cells;
  const target = state.puzzle.target;
  state.chip = { ...target, colour: target.colour || null };
  state.view.setGoal(state.goal, state.chip);
  $("title").textContent = state.title;
  const [gx, gy] = state.goal, where = { who: whoName(state.chip), chip: chipName(state.chip), x: gx + 1, y: gy + 1 };
  $("goal-chip").replaceChildren(chipPicture(state.chip, 28));
  $("goal-text").textContent = state.optimal ? t("goal.in", { ...where, n: state.optimal }) : t("goal", where);
  const colours = COLOURS.filter((c) => c in state.start);
  state.view.setRobots(colours);
  $("robots").replaceChildren(...colours.map((colour) => chooserButton(colour, () => select(colour))));
  arrowPad($("arrows"), (d) => go(d));
  resetPositions();
  select(target.colour && colours.includes(target.colour) ? target.colour : colours[0]);
  $("best").textContent = state.optimal ? ` / ${state.optimal}` : "";
  timeGoesBy(0);
}

// The board in words, kept up to date as the robots move.
function describe() {
  $("board-words").replaceChildren(...inWords(state.cells, state.chip, state.goal).map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
}

function placeAll() {
  for (const [c, cell] of Object.entries(state.cells)) state.view.place(c, cell);
  describe();
}

function resetPositions() {
  state.cells = Object.fromEntries(Object.entries(state.start).map(([c, cell]) => [c, [...cell]]));
  state.moves = [];
  state.history = [];
  placeAll();
  counter("");
}

function select(colour) {
  state.selected = colour;
  state.view.select(colour);
  showChosen(colour);
}

function counter(text) {
  $("count").textContent = state.moves.length;
  if (text !== undefined) {
    $("status").textContent = text;
    $("status").className = "";
  }
}

// The time played, counted while the page is in view and the puzzle not yet ended.
function timeGoesBy(step = 1) {
  if (step && (document.hidden || state.ended || !state.view)) return;
  state.seconds += step;
  $("clock").textContent = clock(state.seconds);
  if (state.kind === "daily" && !recordOf(state.daily.date) && state.seconds % 5 === 0) keepProgress();
}

function keepProgress() {
  if (state.kind === "daily") saveProgress(state.daily.date, { hints: state.hints, seconds: state.seconds });
}

// -- moving --------------------------------------------------------------------------

const go = (direction) => { if (state.selected && !state.busy) move(state.selected, direction); };

async function move(colour, direction) {
  const path = slide(state.board, state.cells, colour, direction);
  if (!path) {
    counter(t("cannot_move", { robot: t(`robot.${colour}`), dir: t(`dir.${NAMES[direction]}`) }));
    return false;
  }
  state.history.push(state.cells);
  state.moves.push({ robot: colour, direction: NAMES[direction] });
  state.cells = { ...state.cells, [colour]: path[path.length - 1] };
  counter("");
  for (const cell of path) {  // cell by cell: a bounce off a barrier shows as a turn
    state.view.place(colour, cell);
    await pause(26);
  }
  describe();
  const [gx, gy] = state.goal, [x, y] = path[path.length - 1];
  const target = state.puzzle.target.colour;
  if (x === gx && y === gy && (!target || target === colour) && !state.revealing) await reached();
  return true;
}

// The active robot is on the target: the server judges the answer.
async function reached() {
  const moves = state.moves.slice();
  try {
    const rated = state.player && !state.revealed ? { player: state.player } : {};
    const v = await api("POST", "/v1/verify", { puzzle: state.puzzle, moves, ...rated });
    if (!v.solved) return counter(t("not_solved"));
    state.optimal = v.optimal_length ?? state.optimal;
    const attempt = { result: state.revealed ? "revealed" : "solved", moves: v.length, optimal: state.optimal,
                      hints: state.hints, seconds: state.seconds, robots: moves.map((m) => m.robot) };
    counter(v.optimal ? t("solved.optimal", { n: v.length }) : t("solved", { n: v.length }));
    $("status").className = v.optimal ? "success optimal" : "success";
    end(attempt, v.attempt);
  } catch (err) {
    counter(t("check_failed", { error: problemText(err) }));
  }
}

function undo() {
  if (!state.history.length || state.busy) return;
  state.cells = state.history.pop();
  state.moves.pop();
  placeAll();
  counter("");
}

// -- ending: solved, or the solution shown ---------------------------------------------

function end(attempt, rating) {
  state.ended = true;
  const kept = state.kind === "daily" ? finish(state.daily.date, attempt) : { record: attempt, first: true };
  state.lastAttempt = attempt;
  state.record = kept.record;
  state.recordIsThis = kept.first;
  if (rating) rated(rating);
  result(attempt, kept.record);
  if (state.kind === "daily") {
    showStats($("stats"));
    markArchive($("archive"));
    daySoFar();
  }
}

function rated(attempt) {
  if (!attempt.rated) {
    state.ratingNote = t("rating.unrated");
    return;
  }
  const now = Math.round(attempt.player.value), change = Math.round(attempt.player.change);
  state.ratingNote = t("rating.change", { before: now - change, after: now, change: `${change >= 0 ? "+" : "−"}${Math.abs(change)}` });
  $("rating").textContent = state.ratingNote;
}

function figure(list, label, value) {
  const item = document.createElement("div"), dt = document.createElement("dt"), dd = document.createElement("dd");
  dt.textContent = label;
  dd.textContent = String(value);
  item.append(dt, dd);
  list.append(item);
}

// The result card: this attempt, and for the daily the day's record and streak.
function result(attempt, record, open = true) {
  const revealed = attempt.result === "revealed", optimal = !revealed && attempt.moves === attempt.optimal;
  $("result-heading").textContent = revealed ? t("result.revealed") : optimal ? t("result.optimal") : t("result.solved");
  $("result").className = revealed ? "revealed" : optimal ? "optimal" : "solved";
  $("result-line").textContent = revealed ? t("result.line.revealed", { n: attempt.optimal })
    : optimal ? t("result.line.optimal", { n: attempt.moves })
    : t("result.line", { moves: t("moves.count", { n: attempt.moves }), n: attempt.optimal });
  const figures = $("result-figures");
  figures.replaceChildren();
  if (!revealed) figure(figures, t("result.moves"), `${attempt.moves} / ${attempt.optimal}`);
  figure(figures, t("result.time"), clock(attempt.seconds));
  figure(figures, t("result.hints"), attempt.hints);
  const notes = [];
  if (state.kind === "daily") {
    figure(figures, t("stats.streak"), summary().streak);
    if (!record.onDay) notes.push(t("result.archive"));
    else if (revealed) notes.push(t("result.streak_ends"));
    if (!state.recordIsThis) notes.push(t("result.first_counts", { moves: recordWords(record) }));
  }
  if (state.kind === "train" && state.ratingNote) notes.push(state.ratingNote);
  $("result-note").textContent = notes.join(" ");
  $("share-text").textContent = state.kind === "daily"
    ? shareText(dayHead(state.daily), record, `${location.origin}/?day=${state.daily.date}`)
    : shareText(t("share.head.puzzle"), attempt, `${location.origin}/p/${state.code}`);
  $("share-status").textContent = "";
  $("result-countdown").hidden = state.kind !== "daily";
  $("next").hidden = state.kind !== "train";
  if (open && !$("result").open) $("result").showModal();
  if (open && state.kind === "train") $("next").focus();
}

const recordWords = (r) => r.result === "revealed" ? t("archive.revealed") : t("moves.count", { n: r.moves });

// The day's record, if there is one, beside the board (and its card a tap away).
function daySoFar() {
  const r = recordOf(state.daily.date);
  $("after").hidden = !r;
  if (!r) return;
  state.ended = true;
  $("after-text").textContent = r.result === "revealed" ? t("day.revealed")
    : t(r.moves === r.optimal ? "day.solved.optimal" : "day.solved", { n: r.moves });
  if (!state.record) {
    state.record = r;
    state.lastAttempt = r;
    state.recordIsThis = true;
  }
}

async function showSolution() {
  if (state.busy) return;
  if (!state.revealed && !(state.kind === "daily" && recordOf(state.daily.date))) {
    const daily = state.kind === "daily";
    const sure = await ask(t("reveal.heading"), t(daily ? "reveal.daily" : state.kind === "train" ? "reveal.train" : "reveal.puzzle"),
                           t("reveal.yes"), t("reveal.no"));
    if (!sure) return;
  }
  state.busy = true;
  state.revealed = true;
  try {
    const moves = state.kind === "daily" ? (await api("GET", state.daily.solution_url)).moves
      : (await api("POST", "/v1/solve", { code: state.code })).moves;
    state.optimal = moves.length;
    if (!state.ended) end({ result: "revealed", moves: null, optimal: moves.length, hints: state.hints,
                            seconds: state.seconds, robots: [] }, null);
    $("result").close();
    state.revealing = true;
    resetPositions();
    counter(t("solution.shown", { n: moves.length }));
    for (const m of moves) {
      await move(m.robot, NAMES.indexOf(m.direction));
      await pause(220);
    }
    state.revealing = false;
    counter(t("solution.shown", { n: moves.length }));
    await pause(300);
    result(state.lastAttempt, state.record);
  } catch (err) {
    counter(t("solution.none", { error: problemText(err) }));
  } finally {
    state.busy = false;
    state.revealing = false;
  }
}

// Hints come one level at a time, as DriftingDroids gives them: the optimal length,
// how many robots move, which ones, then the first move.  Each is counted.
const ARROWS = { N: "↑", E: "→", S: "↓", W: "←" };

async function showHint() {
  if (state.hints >= 4 || state.busy) return;
  const path = state.kind === "daily" ? `/v1/daily/${state.daily.date}/hint` : `/v1/puzzles/${encodeURIComponent(state.code)}/hint`;
  try {
    const h = await api("GET", `${path}?level=${state.hints + 1}`);
    if (!state.ended) state.hints = Math.max(state.hints, h.level);
    keepProgress();
    const told = [t("hint.length", { n: h.optimal_length })];
    if (h.level >= 3) told.push(t("hint.robots", { robots: h.robots.map((c) => t(`colour.${c}`)).join(", ") }));
    else if (h.level >= 2) told.push(t("hint.robots_moved", { n: h.robots_moved }));
    if (h.level >= 4 && h.first_move) {
      told.push(t("hint.first", { robot: t(`robot.${h.first_move.robot}`), arrow: ARROWS[h.first_move.direction] }));
    }
    $("hint-text").textContent = t("hint.text", { level: h.level, told: told.join(" ") });
    if (h.level >= 4) $("hint").disabled = true;
    state.shownHints = h.level;
  } catch (err) {
    $("hint-text").textContent = t("hint.none", { error: problemText(err) });
  }
}

// -- keys and buttons ----------------------------------------------------------------

function keys(event) {
  if (document.querySelector("dialog[open]") || event.target.closest("select, input, textarea")) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const chosen = colourOfKey(event.key);
  if (/^[1-5]$/.test(event.key) && chosen in state.cells) select(chosen);
  else if (event.key in DIRS) go(DIRS[event.key]);
  else if (event.key === "u" || event.key === "Backspace") undo();
  else if (event.key === "r") reset();
  else if (event.key === "s") showSolution();
  else if (event.key === "h") showHint();
  else if (event.key === "?") howToPlay("solo");
  else return;
  event.preventDefault();
}

function reset() {
  if (state.busy) return;
  resetPositions();
  counter(t("back_to_start"));
}

function lengths() {
  const params = new URLSearchParams(location.search);
  for (let n = 2; n <= 16; n++) {
    $("length").append(new Option(t("moves.count", { n }), String(n), false, String(n) === (params.get("length") || "6")));
  }
}

document.addEventListener("keydown", keys);
document.addEventListener("visibilitychange", keepProgress);
$("undo").addEventListener("click", undo);
$("reset").addEventListener("click", reset);
$("solution").addEventListener("click", showSolution);
$("hint").addEventListener("click", showHint);
$("how-open").addEventListener("click", () => howToPlay("solo"));
$("result-open").addEventListener("click", () => result(state.lastAttempt, state.record));
$("result-close").addEventListener("click", () => $("result").close());
$("share").addEventListener("click", async () => {
  try {
    $("share-status").textContent = await share($("share-text").textContent);
  } catch (e) {
    $("share-status").textContent = t("share.failed");
  }
});
$("next").addEventListener("click", () => location.assign("/?train=1"));
showStats($("stats"));
countdown($("countdown"), $("result-countdown"));
archive($("archive"), $("earlier"), api, today()).catch(() => { $("archive-box").hidden = true; });
lengths();
switcher($("language"));
load().catch((e) => {
  $("goal-text").textContent = e.message;
  $("goal").className = "error";
  $("title").textContent = t("load_failed.title");
  $("stage").hidden = true;
  $("recover").hidden = false;
});
