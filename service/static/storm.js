// Storm: puzzles against the clock the server keeps (POST /v1/storms).  Each
// puzzle is played on the board as the play page plays one (Solo), but an
// answer goes to the run (POST /v1/storms/{id}/answers), never to /v1/verify:
// a check would count as the answer shown.  The clock shown counts down from
// the server's `seconds_left`, set again by every reply.

import { playerId } from "./daily.js";
import { number, switcher, t } from "./i18n.js";
import { api, problemText } from "./net.js";
import { Solo } from "./solo.js";

const $ = (id) => document.getElementById(id);
const run = { id: null, solo: null, ends: 0, timer: null };
const RUN = "rr-storm-run";  // the run in play, kept over a reload (its clock runs on at the server)

// A puzzle of the run: Solo's board and moves, its ending sent to the run.
class StormPuzzle extends Solo {
  async reached() {
    if (this.sent) return;
    this.sent = true;
    await answer(this.index, this.moves.slice());
  }

  async move(colour, direction) {
    const moved = await super.move(colour, direction);
    if (moved && !this.sent && this.optimal && this.moves.length >= this.optimal) {  // it can no longer be solved
      this.sent = true;
      await answer(this.index, this.moves.slice());
    }
    return moved;
  }
}

const clockText = (s) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, "0")}`;

function tick() {
  const left = Math.max(0, (run.ends - performance.now()) / 1000);
  $("storm-clock").textContent = clockText(left);
  if (left <= 0 && run.id) {
    clearInterval(run.timer);
    finish();
  }
}

function show(state) {
  run.ends = performance.now() + state.seconds_left * 1000;
  $("storm-score").textContent = number(state.score);
  $("storm-combo").textContent = number(state.combo);
  tick();
}

async function begin(seeded) {
  $("message").textContent = "";
  try {
    await play(await api("POST", "/v1/storms", { player: playerId(), seeded }));
  } catch (err) {
    $("message").textContent = err.status === 409 ? t("storm.seeded_done") : problemText(err);
  }
}

async function play(state) {
  run.id = state.id;
  localStorage.setItem(RUN, state.id);
  $("storm-start").hidden = true;
  $("storm-summary").hidden = true;
  $("storm-run").hidden = false;
  show(state);
  clearInterval(run.timer);
  run.timer = setInterval(tick, 250);
  await puzzle(state.puzzle);
}

// A run left by a reload: played on while its time lasts, else its summary.
async function resume() {
  const id = localStorage.getItem(RUN);
  if (!id) return false;
  try {
    const state = await api("GET", `/v1/storms/${id}`);
    if (state.over) summary(state);
    else await play(state);
    return true;
  } catch {
    localStorage.removeItem(RUN);
    return false;
  }
}

async function puzzle(found) {
  const board = await api("GET", `/v1/boards/${encodeURIComponent(found.board)}?tables=true`);
  run.solo = new StormPuzzle(found, board, { optimal: found.optimal_length, solution: async () => [] });
  run.solo.index = found.index;
}

async function answer(index, moves) {
  try {
    const state = await api("POST", `/v1/storms/${run.id}/answers`, { puzzle: index, moves });
    const said = state.answer;
    $("storm-change").textContent = said.clock_change ? `${said.clock_change > 0 ? "+" : "−"}${Math.abs(said.clock_change)} s`
      : "";
    $("status").textContent = t(`storm.result.${said.result}`);
    show(state);
    if (state.over) return summary(state);
    await puzzle(state.puzzle);
  } catch (err) {
    if (err.status === 409) return finish();
    $("status").textContent = problemText(err);
  }
}

// The clock shown reached zero, or the run refused an answer (its time was up, or
// another tab answered first): the run as the server has it.
async function finish() {
  if (!run.id) return;
  const id = run.id;
  run.id = null;
  clearInterval(run.timer);
  try {
    const state = await api("GET", `/v1/storms/${id}`);
    if (state.over) summary(state);
    else await play(state);
  } catch (err) {
    $("message").textContent = problemText(err);
  }
}

function figures(list, pairs) {
  list.replaceChildren(...pairs.map(([label, value]) => {
    const div = document.createElement("div"), dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = label;
    dd.textContent = value;
    div.append(dt, dd);
    return div;
  }));
}

function summary(state) {
  run.id = null;
  localStorage.removeItem(RUN);
  clearInterval(run.timer);
  $("storm-clock").textContent = clockText(0);
  $("storm-run").hidden = true;
  $("storm-summary").hidden = false;
  figures($("storm-figures"), [[t("storm.score"), number(state.score)], [t("storm.solves"), number(state.solves)],
    [t("storm.fails"), number(state.fails)], [t("storm.best_combo"), number(state.best_combo)],
    [t("storm.highest"), state.highest_rating === null ? "—" : number(Math.round(state.highest_rating))]]);
  $("storm-review").replaceChildren(...(state.review || []).map((p) => {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `/p/${p.code}`;
    a.textContent = t("storm.review_item", { n: p.optimal_length, result: t(`storm.result.${p.result}`) });
    li.append(a);
    return li;
  }));
  if (state.scores) scores(state.scores);
  $("storm-again").focus();
}

function scores(s) {
  figures($("storm-best"), [[t("storm.best.day"), number(s.best.day)], [t("storm.best.week"), number(s.best.week)],
    [t("storm.best.month"), number(s.best.month)], [t("storm.best.all"), number(s.best.all)]]);
  $("storm-board").replaceChildren(...s.board.top.map((row) => {
    const li = document.createElement("li");
    li.textContent = `${row.player}: ${number(row.score)}`;
    if (row.player === playerId()) li.className = "mine";
    return li;
  }));
}

function keys(event) {
  if (event.target.closest("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
  if (run.solo && run.id && run.solo.key(event)) event.preventDefault();
}

$("storm-go").addEventListener("click", () => begin(false));
$("storm-seeded").addEventListener("click", () => begin(true));
$("storm-again").addEventListener("click", () => {
  $("storm-summary").hidden = true;
  $("storm-start").hidden = false;
  $("storm-go").focus();
});
$("undo").addEventListener("click", () => run.solo && run.solo.undo());
$("reset").addEventListener("click", () => run.solo && run.solo.reset(t("back_to_start")));
document.addEventListener("keydown", keys);
switcher($("language"));
resume().then((resumed) => resumed || api("GET", `/v1/storms/scores?player=${playerId()}`).then(scores))
  .catch(() => {});
