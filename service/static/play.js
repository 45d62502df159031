// The play page: a living example of the API.  It loads a puzzle (the daily one,
// /p/{code}, or a random one of ?length=N), draws the board from the API's SVG,
// slides robots with the board's own step tables (GET /v1/boards/{spec}?tables=true)
// and asks POST /v1/verify whether an answer is solved and optimal.

import { DIRS, NAMES, chipName, chooserButton, goalCell, inWords, pause, placer, robotButton, slide, swipes } from "./board.js";
import { archive, countdown, playerId, record, share, shareText, showStats, solvedOn } from "./daily.js";
import { date, switcher, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const state = { puzzle: null, board: null, start: {}, robots: {}, moves: [], history: [], selected: null,
                busy: false, solution: null, code: null, optimal: null };

async function api(method, path, body) {
  const response = await fetch(path, {
    method, headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.detail || `${response.status} ${response.statusText}`);
  return data;
}

async function load() {
  const path = location.pathname, params = new URLSearchParams(location.search);
  let found;
  if (path.startsWith("/p/")) {
    const code = decodeURIComponent(path.slice(3));
    found = await api("GET", `/v1/puzzles/${encodeURIComponent(code)}`);
    state.title = t("title.puzzle", { code });
    state.fetchSolution = async () => (await api("POST", "/v1/solve", { code })).moves;
    state.hintPath = (level) => `/v1/puzzles/${encodeURIComponent(code)}/hint?level=${level}`;
  } else if (params.get("length")) {
    found = await api("GET", `/v1/puzzles/random?length=${encodeURIComponent(params.get("length"))}`);
    state.title = t("title.random", { n: found.optimal_length });
    state.optimal = found.optimal_length;
    const moves = found.solution;
    state.fetchSolution = async () => moves;
    state.hintPath = (level) => `/v1/puzzles/${encodeURIComponent(found.code)}/hint?level=${level}`;
    history.replaceState(null, "", `/p/${found.code}`);
  } else if (params.get("train")) {
    found = await train();
  } else {
    const day = params.get("day");
    const daily = await api("GET", day ? `/v1/daily/${encodeURIComponent(day)}` : "/v1/daily");
    state.daily = daily;
    found = { ...daily.puzzle, code: daily.code };
    state.title = t("title.daily", { number: daily.number, date: date(daily.date), grade: t(`grade.${daily.difficulty.grade}`) });
    state.optimal = daily.optimal_length;
    state.fetchSolution = async () => (await api("GET", daily.solution_url)).moves;
    state.hintPath = (level) => `/v1/daily/${daily.date}/hint?level=${level}`;
  }
  state.code = found.code;
  $("board").dataset.code = found.code;
  state.puzzle = { board: found.board, robots: found.robots, target: found.target, rules: found.rules };
  if (typeof found.board !== "string") throw new Error(t("only_real_boards"));
  state.board = await api("GET", `/v1/boards/${encodeURIComponent(found.board)}?tables=true`);
  $("board-image").src = `/v1/boards/${encodeURIComponent(found.board)}.svg`;
  $("board-image").alt = t("board.alt", { spec: found.board });
  for (const [c, cell] of Object.entries(found.robots)) state.start[c] = cell;
  state.goal = goalCell(state.board, state.puzzle.target);
  draw();
  offerShare();
}

// Train mode: the next puzzle near this browser's anonymous player's rating, whose
// answers are rated (POST /v1/verify with "player").
async function train() {
  state.player = playerId();
  const found = await api("GET", `/v1/puzzles/next?player=${state.player}`);
  state.title = t("title.training", { n: found.optimal_length });
  state.optimal = found.optimal_length;
  state.fetchSolution = async () => found.solution;
  state.hintPath = (level) => `/v1/puzzles/${encodeURIComponent(found.code)}/hint?level=${level}`;
  $("training").hidden = false;
  $("daily-box").hidden = true;
  const me = await fetch(`/v1/players/${state.player}`);
  const rating = me.ok ? (await me.json()).rating.value : 1500;
  $("rating").textContent = t("rating", { value: Math.round(rating) });
  return found;
}

function rated(attempt) {
  if (!attempt) return;
  if (attempt.rated) {
    const now = Math.round(attempt.player.value), change = Math.round(attempt.player.change);
    $("rating").textContent = t("rating.change", { before: now - change, after: now, change: `${change >= 0 ? "+" : ""}${change}` });
  }
  $("next").hidden = false;
  $("next").focus();
}

function finishedDaily(v) {
  const daily = state.daily;
  if (!daily || !v.solved) return;
  record(daily.date, v.length, daily.optimal_length);
  showStats($("stats"), today());
  offerShare();
}

// A day solved in this browser offers its share text, after a reload too.
function offerShare() {
  const kept = state.daily && solvedOn(state.daily.date);
  if (!kept) return;
  $("share-text").textContent = shareText(state.daily, kept.moves);
  $("after").hidden = false;
}

const today = () => new Date().toISOString().slice(0, 10);

function draw() {
  const at = placer(state.board);
  const goal = document.createElement("div");
  goal.className = "goal";
  at(goal, state.goal);
  $("board").append(goal);
  const target = state.puzzle.target;
  state.chip = { ...target, colour: target.colour || null };
  const who = target.colour ? t(`who.${target.colour}`) : t("who.any");
  $("title").textContent = state.title;
  const [gx, gy] = state.goal, where = { who, chip: chipName(state.chip), x: gx + 1, y: gy + 1 };
  $("goal").textContent = state.optimal ? t("goal.in", { ...where, n: state.optimal }) : t("goal", where);
  const colours = Object.keys(state.start);
  colours.forEach((colour, i) => {
    state.robots[colour] = robotButton(colour, i + 1, () => select(colour));
    $("board").append(state.robots[colour]);
    $("robots").append(chooserButton(colour, i + 1, () => select(colour)));
  });
  state.place = (colour, cell) => {
    at(state.robots[colour], cell);
    describe();
  };
  resetPositions();
  select(target.colour && colours.includes(target.colour) ? target.colour : colours[0]);
}

// The board in words, kept up to date as the robots move.
function describe() {
  if (!state.cells) return;
  $("board-words").replaceChildren(...inWords(state.cells, state.chip, state.goal).map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
}

function resetPositions() {
  state.cells = {};
  for (const [c, cell] of Object.entries(state.start)) {
    state.cells[c] = [...cell];
    state.place(c, cell);
  }
  state.moves = [];
  state.history = [];
  counter();
}

function select(colour) {
  state.selected = colour;
  for (const el of document.querySelectorAll("[data-colour]")) {
    el.setAttribute("aria-pressed", String(el.dataset.colour === colour));
  }
}

function counter(text) {
  $("count").textContent = state.moves.length;
  if (text !== undefined) $("status").textContent = text;
}

async function move(colour, direction) {
  const path = slide(state.board, state.cells, colour, direction);
  if (!path) {
    counter(t("cannot_move", { robot: t(`robot.${colour}`), dir: t(`dir.${NAMES[direction]}`) }));
    return false;
  }
  state.history.push({ ...state.cells });
  state.moves.push({ robot: colour, direction: NAMES[direction] });
  state.cells = { ...state.cells, [colour]: path[path.length - 1] };
  counter("");
  for (const cell of path) {  // animate cell by cell: deflections show as turns
    state.place(colour, cell);
    await pause(28);
  }
  const [gx, gy] = state.goal, [x, y] = path[path.length - 1];
  const target = state.puzzle.target.colour;
  if (x === gx && y === gy && (!target || target === colour)) await check();
  return true;
}

async function check() {
  if (!state.moves.length) return counter(t("make_moves"));
  try {
    const body = { puzzle: state.puzzle, moves: state.moves, ...(state.player ? { player: state.player } : {}) };
    const v = await api("POST", "/v1/verify", body);
    finishedDaily(v);
    rated(v.attempt);
    if (v.solved) {
      const key = v.optimal ? "solved.optimal" : v.optimal_length ? "solved.best" : "solved";
      counter(t(key, { n: v.length, best: v.optimal_length }));
      $("status").className = v.optimal ? "success optimal" : "success";
    } else {
      counter(t("not_solved"));
      $("status").className = "";
    }
  } catch (e) {
    counter(t("check_failed", { error: e.message }));
  }
}

async function showSolution() {
  if (state.busy) return;
  state.busy = true;
  try {
    const moves = await state.fetchSolution();
    resetPositions();
    counter(t("solution.shown", { n: moves.length }));
    for (const m of moves) {
      await move(m.robot, NAMES.indexOf(m.direction));
      await pause(250);
    }
  } catch (e) {
    counter(t("solution.none", { error: e.message }));
  } finally {
    state.busy = false;
  }
}

// Hints come one level at a time, as DriftingDroids gives them: the optimal length,
// how many robots move, which ones, then the first move.
const ARROWS = { N: "↑", E: "→", S: "↓", W: "←" };
state.hintLevel = 0;

async function showHint() {
  if (state.hintLevel >= 4 || !state.hintPath) return;
  try {
    const h = await api("GET", state.hintPath(state.hintLevel + 1));
    state.hintLevel = h.level;
    const told = [t("hint.length", { n: h.optimal_length })];
    if (h.level >= 3) told.push(t("hint.robots", { robots: h.robots.map((c) => t(`colour.${c}`)).join(", ") }));
    else if (h.level >= 2) told.push(t("hint.robots_moved", { n: h.robots_moved }));
    if (h.level >= 4 && h.first_move) {
      told.push(t("hint.first", { robot: t(`robot.${h.first_move.robot}`), arrow: ARROWS[h.first_move.direction] }));
    }
    $("hint-text").textContent = t("hint.text", { level: h.level, told: told.join(" ") });
    if (h.level >= 4) $("hint").disabled = true;
  } catch (e) {
    $("hint-text").textContent = t("hint.none", { error: e.message });
  }
}

function undo() {
  if (!state.history.length) return;
  state.cells = state.history.pop();
  state.moves.pop();
  for (const [c, cell] of Object.entries(state.cells)) state.place(c, cell);
  counter("");
  $("status").className = "";
}

function keys(event) {
  if (event.target.closest("select, input") || event.altKey || event.ctrlKey || event.metaKey) return;
  const colours = Object.keys(state.cells || {});
  if (/^[1-5]$/.test(event.key) && Number(event.key) <= colours.length) {
    select(colours[Number(event.key) - 1]);
  } else if (event.key in DIRS && state.selected && !state.busy) {
    move(state.selected, DIRS[event.key]);
  } else if (event.key === "u" || event.key === "Backspace") {
    undo();
  } else if (event.key === "r") {
    resetPositions();
    counter(t("back_to_start"));
  } else if (event.key === "c") {
    check();
  } else if (event.key === "s") {
    showSolution();
  } else if (event.key === "h") {
    showHint();
  } else {
    return;
  }
  event.preventDefault();
}

function lengths() {
  const params = new URLSearchParams(location.search);
  for (let n = 2; n <= 16; n++) {
    const option = new Option(String(n), String(n), false, String(n) === (params.get("length") || "8"));
    $("length").append(option);
  }
}

document.addEventListener("keydown", keys);
$("undo").addEventListener("click", undo);
$("reset").addEventListener("click", () => { resetPositions(); counter(t("back_to_start")); });
$("check").addEventListener("click", check);
$("solution").addEventListener("click", showSolution);
$("hint").addEventListener("click", showHint);
$("share").addEventListener("click", async () => {
  try {
    $("share-status").textContent = await share($("share-text").textContent);
  } catch (e) {
    $("share-status").textContent = t("share.failed", { error: e.message });
  }
});
$("next").addEventListener("click", () => location.assign("/?train=1"));
showStats($("stats"), today());
countdown($("countdown"));
archive($("archive"), $("earlier"), api, today()).catch(() => { $("archive-box").hidden = true; });
lengths();
swipes($("board"), (direction) => { if (state.selected) move(state.selected, direction); });
switcher($("language"));
load().catch((e) => { $("goal").textContent = t("load_failed", { error: e.message }); });
