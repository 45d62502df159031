// Playing together: a room by link (POST /v1/rooms, .../players, .../start), then
// the game as at the table: the board and the chip, bids lowest first, the sand
// timer, whose turn it is to show, each solution shown move by move and only then
// its outcome, the chip won, scores and the rounds with their optimum.  Live
// through server-sent events (GET /v1/games/{id}/events), polling when a stream is
// refused.  A seat's token stays in this browser (localStorage), never in the link.

import { BoardView, COLOURS, DIRS, NAMES, arrowPad, chipName, chipPicture, chooserButton, colourOfKey, goalCell,
         inWords, pause, showChosen, slide, whoName } from "./board.js";
import { howToPlay, seenHowToPlay } from "./dialogs.js";
import { capital, switcher, t } from "./i18n.js";
import { api, problemText } from "./net.js";
import { Solo } from "./solo.js";

const $ = (id) => document.getElementById(id);
const SEATS = "rr-seats-v1";   // {roomId: {name, token}}
const NAME = "rr-name";
const EVENTS = ["created", "round", "bid", "timer_started", "verification", "attempt", "round_over", "finished"];
const state = { rid: null, seat: null, room: null, game: null, board: null, view: null, skew: 0, cells: {},
                moves: [], history: [], selected: null, roundStart: null, round: null,
                queue: Promise.resolve(), animating: false, version: 0 };

const say = (text) => { $("message").textContent = text; };

// -- seats -------------------------------------------------------------------------

function seats() {
  try {
    return JSON.parse(localStorage.getItem(SEATS)) || {};
  } catch {
    return {};
  }
}

function keepSeat(rid, seat) {
  localStorage.setItem(SEATS, JSON.stringify({ ...seats(), [rid]: seat }));
  localStorage.setItem(NAME, seat.name);
}

// -- opening a room ------------------------------------------------------------------

function showCreate() {
  $("create").hidden = false;
  $("create-name").value = localStorage.getItem(NAME) || "";
  $("create").addEventListener("submit", async (e) => {
    e.preventDefault();
    const name = $("create-name").value.trim();
    try {
      const { room, token } = await api("POST", "/v1/rooms", roomRequest(name));
      keepSeat(room.id, { name, token });
      history.pushState(null, "", `/r/${room.id}`);
      $("create").hidden = true;
      say("");
      await enterRoom(room.id);
    } catch (err) {
      say(err.status === 400 ? t("error.room_request") : problemText(err));
    }
  });
}

function roomRequest(name) {
  const choice = document.querySelector('input[name="board"]:checked').value;
  const options = {
    timer_seconds: Number($("timer-seconds").value) || 60, exact_bid: $("exact").checked, tie_break: $("tie").value,
    scoring: $("scoring").value, black_robot: $("black").checked, ricochet: $("ricochet").checked ? "turn" : "none",
    void_returns_chip: $("void").checked, solitaire_timer_factor: $("factor").checked ? 2 : 1,
  };
  if ($("chips").value) options.chips_to_win = Number($("chips").value);
  const body = { name, board: choice === "spec" ? $("board-spec").value.trim() : choice, options };
  if (document.querySelector('input[name="mode"]:checked').value === "race") {
    Object.assign(body, { mode: "race", race_seconds: Number($("race-seconds").value) || 180 });
  }
  if ($("seed").value.trim()) body.seed = $("seed").value.trim();
  return body;
}

// -- the room before its game --------------------------------------------------------

async function enterRoom(rid) {
  state.rid = rid;
  state.seat = seats()[rid] || null;
  let room;
  try {
    room = (await api("GET", `/v1/rooms/${rid}`)).room;
  } catch (err) {
    say(err.status === 404 ? t("error.no_room") : problemText(err));
    return;
  }
  if (room.game) return startTable(room.game);
  if (room.race) return startRace(room);
  lobby(room);
  const poll = setInterval(async () => {
    try {
      const now = (await api("GET", `/v1/rooms/${rid}`)).room;
      if (now.game || now.race) {
        clearInterval(poll);
        await (now.game ? startTable(now.game) : startRace(now));
      } else if (now.version !== state.room.version) {
        lobby(now);
      }
    } catch {
      // the next poll tries again
    }
  }, 1000);
}

function lobby(room) {
  state.room = room;
  $("lobby").hidden = false;
  const link = `${location.origin}/r/${room.id}`;
  $("room-link").href = link;
  $("room-link").textContent = link;
  const robots = room.robots || {};
  const host = state.seat && state.seat.name === room.host;
  $("seated").replaceChildren(...room.players.map((name) => {
    const li = document.createElement("li");
    const mine = state.seat && state.seat.name === name;
    li.textContent = mine ? t("player.you", { name }) : name === room.host ? t("player.host", { name })
      : name in robots ? t("player.robot", { name }) : name;
    if (name in robots) {
      li.className = "robot-player";
      if (host) li.append(" ", unseatButton(name));
    }
    return li;
  }));
  $("join").hidden = Boolean(state.seat);
  $("robot-form").hidden = !host || room.mode === "race";
  $("start").hidden = !host;
  $("waiting").textContent = host ? (room.players.length < 2 ? t("waiting.players") : "")
    : state.seat ? t("waiting.host", { host: room.host }) : "";
  if (!state.seat && !$("join-name").value) $("join-name").value = localStorage.getItem(NAME) || "";
  houseRules($("room-rules"), room.options, null);  // before the start, for however many sit down
  if (room.mode === "race") {
    const li = document.createElement("li");
    li.textContent = t("rules.race", { n: room.race_seconds });
    $("room-rules").prepend(li);
  }
}

// The room's rules in words, for whoever came by a link (`players`: how many
// play, or null while the room is still filling).
function houseRules(list, o, players) {
  const lines = [t("rules.timer", { n: o.timer_seconds })];
  if (players === 1) lines.push(t("rules.solitaire"));
  else if (o.scoring === "infinity") lines.push(t("rules.infinity", { n: o.infinity_target }));
  else lines.push(o.chips_to_win ? t("rules.chips", { n: o.chips_to_win }) : t("rules.chips_by_players"));
  lines.push(t(o.exact_bid ? "rules.exact" : "rules.at_most"));
  if (players !== 1) lines.push(t(o.tie_break === "first_bid" ? "rules.tie.first_bid" : "rules.tie.fewer_chips"));
  if (o.black_robot) lines.push(t("rules.black"));
  if (o.ricochet === "turn") lines.push(t("rules.ricochet"));
  if (o.void_returns_chip) lines.push(t("rules.void"));
  list.replaceChildren(...lines.map((text) => {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  }));
}

async function join(e) {
  e.preventDefault();
  const name = $("join-name").value.trim();
  try {
    const { room, token } = await api("POST", `/v1/rooms/${state.rid}/players`, { name });
    state.seat = { name, token };
    keepSeat(state.rid, state.seat);
    say("");
    lobby(room);
  } catch (err) {
    const taken = err.status === 409 && /taken/.test(err.message);
    say(taken ? t("error.name_taken") : err.status === 409 ? t("error.started") : problemText(err));
  }
}

// The host seats a robot of the chosen strength, named in the page's language.
async function addRobot(e) {
  e.preventDefault();
  const strength = $("robot-strength").value;
  const base = t("robot.name", { strength: t(`strength.${strength}`) });
  let name = base;
  for (let n = 2; state.room.players.includes(name); n++) name = `${base} ${n}`;
  try {
    const { room } = await api("POST", `/v1/rooms/${state.rid}/robots`, { strength, name }, state.seat.token);
    say("");
    lobby(room);
  } catch (err) {
    say(problemText(err));
  }
}

// The host's button beside a seated robot: its seat taken away again (before the start).
function unseatButton(name) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "unseat";
  button.textContent = t("robot.remove");
  button.setAttribute("aria-label", t("robot.remove_named", { name }));
  button.addEventListener("click", async () => {
    try {
      const path = `/v1/rooms/${state.rid}/robots/${encodeURIComponent(name)}`;
      const { room } = await api("DELETE", path, undefined, state.seat.token);
      say("");
      lobby(room);
    } catch (err) {
      say(problemText(err));
    }
  });
  return button;
}

async function start() {
  try {
    const started = await api("POST", `/v1/rooms/${state.rid}/start`, null, state.seat.token);
    if (started.room.race) {
      race.skew = started.now - Date.now() / 1000;
      await startRace(started.room);
    } else await startTable(started.room.game);
  } catch (err) {
    say(problemText(err));
  }
}

// -- the table -----------------------------------------------------------------------

async function startTable(gid) {
  if (state.gid) return;
  state.gid = gid;
  say("");  // the lobby's words ("Link copied.") are not the game's
  $("lobby").hidden = true;
  $("table").hidden = false;
  document.body.classList.add("playing");
  const view = await api("GET", `/v1/games/${gid}?since=0`);  // with what happened before this page came
  const spec = view.game.board;
  state.board = await api("GET", `/v1/boards/${encodeURIComponent(spec)}?tables=true`);
  $("board-image").src = `/v1/boards/${encodeURIComponent(spec)}.svg`;
  $("board-image").alt = t("board.alt", { spec });
  state.view = new BoardView($("board"), state.board, { onSelect: select, onMove: (d) => go(d) });
  state.view.cells = () => state.cells;
  const colours = COLOURS.filter((c) => c in view.game.robots);
  state.view.setRobots(colours);
  $("robots").replaceChildren(...colours.map((colour) => chooserButton(colour, () => select(colour))));
  arrowPad($("arrows"), (d) => go(d));
  if (state.seat) $("you").textContent = t("you.label", { name: state.seat.name });
  houseRules($("table-rules-list"), view.game.options, view.game.players.length);
  for (const el of document.querySelectorAll(".points")) el.hidden = view.game.options.scoring !== "infinity";
  show(view);
  for (const event of view.events) log(event);  // a reload keeps "What happened"
  state.version = view.game.version;
  if (view.game.phase !== "finished") follow(gid);  // a finished game has nothing more to tell
  setInterval(tick, 250);
}

// Events as they happen: a stream, or polling when the stream is refused or lost.
function follow(gid) {
  if (!window.EventSource) return poll(gid);
  const stream = new EventSource(`/v1/games/${gid}/events?since=${state.version}`);
  for (const type of EVENTS) {
    stream.addEventListener(type, (message) => heard(JSON.parse(message.data)));
  }
  stream.onerror = () => {
    if (stream.readyState === EventSource.CLOSED) {
      say(t("live.polling"));
      poll(gid);
    }
  };
  state.stream = stream;
}

function poll(gid) {
  const again = async () => {
    try {
      const view = await api("GET", `/v1/games/${gid}?since=${state.version}`);
      for (const event of view.events) heard(event);
      if (view.game.phase === "finished") return;
    } catch {
      // try again
    }
    setTimeout(again, 1000);
  };
  again();
}

// One event: a shown solution is played on the board first, and only then is its
// outcome told; the game is fetched again once every event heard has been played.
function heard(event) {
  if (event.version <= state.version) return;
  state.version = event.version;
  state.queue = state.queue.then(async () => {
    if (event.type === "attempt" && event.moves) await reveal(event);
    log(event);
    if (event.type === "round_over") wonChip(event);
    if (event.type === "finished" && state.stream) state.stream.close();
  }).then(refresh, refresh);
}

async function refresh() {
  if (state.refreshing) {  // one fetch at a time, and one more after it for what was heard meanwhile
    state.stale = true;
    return;
  }
  state.refreshing = true;
  try {
    do {
      state.stale = false;
      show(await api("GET", `/v1/games/${state.gid}`));
    } while (state.stale);
  } finally {
    state.refreshing = false;
  }
}

// The log, in the order things happened (newest last, kept in view).
function log(event) {
  const text = told(event);
  if (!text) return;
  const li = document.createElement("li");
  li.textContent = text;
  $("log").append(li);
  $("log").scrollTop = $("log").scrollHeight;
}

function told(e) {
  switch (e.type) {
    case "bid": return t("ev.bid", { name: e.player, bid: e.moves });
    case "timer_started": return t("ev.timer");
    case "verification": return t("ev.verification", { name: e.order[0].player });
    case "attempt": return e.success ? t("ev.success", { name: e.player, n: e.length })
      : t("ev.failure", { name: e.player, why: why(e) });
    case "round": return t("ev.round", { number: e.number, chip: chipName(e.chip) });
    case "round_over": return e.winner ? t("ev.won", { name: e.winner, chip: chipName(e.chip) }) : t("ev.unclaimed");
    case "finished": return t("ev.finished");
    default: return "";
  }
}

function why(e) {
  if (e.length === null || e.length === undefined) return t("why.timeout");
  if (e.impossible_bid) return t("why.impossible");
  if (e.legal === false) return t("why.illegal");
  if (!e.solved) return t("why.unsolved");
  return state.game && state.game.options.exact_bid ? t("why.not_exact", { n: e.length }) : t("why.too_long", { n: e.length });
}

// The moment a chip is won, said to everyone, and to its winner as theirs.
function wonChip(e) {
  if (!e.winner) return;
  const mine = e.winner === me();
  $("win").textContent = mine ? t("win.you", { chip: chipName(e.chip) }) : t("win.other", { name: e.winner, chip: chipName(e.chip) });
  $("win").className = mine ? "mine" : "";
  $("win").hidden = false;
  clearTimeout(state.winTimer);
  state.winTimer = setTimeout(() => { $("win").hidden = true; }, 6000);
}

// A solution shown, move by move from the robots' markers; a failed one goes back.
async function reveal(event) {
  state.animating = true;
  try {
    state.cells = copy(state.roundStart);
    place();
    await pause(300);
    for (const m of event.moves) {
      const path = slide(state.board, state.cells, m.robot, NAMES.indexOf(m.direction));
      if (!path) break;
      for (const cell of path) {
        if (state.view.robots[m.robot]) state.view.place(m.robot, cell);
        await pause(45);
      }
      state.cells = { ...state.cells, [m.robot]: path[path.length - 1] };
      await pause(200);
    }
    await pause(event.success ? 400 : 900);
    if (!event.success) {
      state.cells = copy(state.roundStart);
      place();
    }
  } finally {
    state.animating = false;
  }
}

const copy = (cells) => Object.fromEntries(Object.entries(cells).map(([c, cell]) => [c, [...cell]]));

function place() {
  for (const [c, cell] of Object.entries(state.cells)) state.view.place(c, cell);
  $("board-words").replaceChildren(...inWords(state.cells, state.chip || {}, state.goal).map((line) => {
    const li = document.createElement("li");
    li.textContent = line;
    return li;
  }));
}

// The game as it stands.
function show(view) {
  const game = view.game;
  if (state.game && game.version < state.game.version) return;  // an answer overtaken by a newer one
  state.game = game;
  state.skew = view.now ? view.now - Date.now() / 1000 : 0;
  const r = game.round;
  const number = r ? r.number : null;
  if (number !== state.round) {  // a new round: the robots stand on their markers, last round's words go
    state.round = number;
    state.selected = null;  // the new chip's robot is chosen, not last round's
    state.roundStart = copy(game.robots);
    state.moves = [];
    state.history = [];
    $("count").textContent = "0";
    $("status").textContent = "";
    $("bid").value = "";
  }
  if (r) {
    state.chip = r.chip;
    state.goal = goalCell(state.board, r.chip);
    state.view.setGoal(state.goal, r.chip);
    $("goal-chip").replaceChildren(chipPicture(r.chip, 28));
    $("goal-text").textContent = t("goal", { who: whoName(r.chip), chip: chipName(r.chip), x: state.goal[0] + 1, y: state.goal[1] + 1 });
    if (!state.selected) select(r.chip.colour in state.view.robots ? r.chip.colour : Object.keys(state.view.robots)[0]);
  }
  if (!state.animating && !state.moves.length) {
    state.cells = copy(game.robots);
    place();
  }
  phase(game);
  $("bids-box").hidden = game.phase === "finished";  // the last round's bids are in the rounds' list
  bids(r);
  scores(game);
  rounds(game);
  tick();
}

const solitaire = () => state.game.players.length === 1;
const myTurn = () => {
  const g = state.game, r = g.round;
  if (!me() || !r || g.phase === "finished") return false;
  if (solitaire()) return g.phase === "bidding";
  return g.phase === "verifying" && r.order.length > 0 && r.order[0].player === me();
};

function phase(game) {
  const r = game.round;
  let text;
  if (game.phase === "finished") {
    text = game.winners && game.winners.length ? t("phase.winners", { names: game.winners.join(", ") }) : t("phase.no_winner");
  } else if (game.phase === "verifying") {
    const first = r.order[0];
    const key = game.options.exact_bid ? "phase.your_turn_exact" : "phase.your_turn";
    text = first.player === me() ? t(key, { n: first.moves }) : t("phase.verifying", { name: first.player, n: first.moves });
  } else {
    text = t(solitaire() ? "phase.solitaire" : "phase.bidding", { number: r.number });
  }
  $("phase").textContent = text;
  const over = game.phase === "finished";
  for (const id of ["goal", "timer-box"]) $(id).hidden = over;
  $("over").hidden = !over;
  if (!me() && !over && !state.told) {
    say(t("watching"));  // came by the link after the start
    state.told = true;
  }
  $("bid-form").hidden = !(me() && game.phase === "bidding" && !solitaire());
  const turn = myTurn(), began = turn && $("show").hidden;
  $("show").hidden = !turn;
  if (began) {  // the keys move robots now: focus leaves the bid field; the board comes into view
    const chosen = document.querySelector(`#robots [data-colour="${state.selected}"]`);
    if (chosen) chosen.focus({ preventScroll: true });
    $("table-head").scrollIntoView({ block: "start" });
    replayKept();
  }
}

// Bids as the table reads them: lowest first, equal bids in the order they came.
function bids(r) {
  const latest = new Map();
  for (const b of r ? r.bids : []) latest.set(b.player, b);  // a player's last bid stands
  const items = [...latest.values()].sort((a, b) => a.moves - b.moves || a.seq - b.seq);
  const list = items.map((b, i) => {
    const li = document.createElement("li");
    li.textContent = t("bid.item", { name: b.player, bid: b.moves });
    if (i === 0) li.className = "lowest";
    return li;
  });
  if (!list.length) {
    const li = document.createElement("li");
    li.className = "none";
    li.textContent = t("bids.none");
    list.push(li);
  }
  $("bids").replaceChildren(...list);
}

function scores(game) {
  const points = game.options.scoring === "infinity";
  $("scores").tBodies[0].replaceChildren(...game.players.map((p) => {
    const tr = document.createElement("tr");
    const values = points ? [p.name, p.chips.length, p.score] : [p.name, p.chips.length];
    for (const [i, value] of values.entries()) {
      const cell = document.createElement(i === 0 ? "th" : "td");
      if (i === 0) cell.scope = "row";
      cell.textContent = String(value);
      tr.append(cell);
    }
    tr.dataset.player = p.name;
    return tr;
  }));
}

function rounds(game) {
  $("history").replaceChildren(...game.history.map((h) => {
    const li = document.createElement("li");
    const optimum = h.optimal_length === null ? t("history.unknown") : t("moves.count", { n: h.optimal_length });
    li.textContent = h.winner
      ? t("history.won", { number: h.number, chip: chipName(h.chip), name: h.winner, moves: t("moves.count", { n: h.length }), optimum })
      : t("history.unclaimed", { number: h.number, chip: chipName(h.chip), optimum });
    return li;
  }));
}

// The sand timer, run down by this page's clock set to the referee's.
function tick() {
  const g = state.game, r = g && g.round;
  const ends = r ? (g.phase === "verifying" ? r.show_ends : r.timer_ends) : null;
  const bar = $("timer-bar");
  if (!ends || g.phase === "finished") {
    bar.value = 0;
    $("timer-text").textContent = g && g.phase === "bidding" ? t("timer.idle") : "";
    return;
  }
  const left = Math.max(0, ends - (Date.now() / 1000 + state.skew));
  const total = g.options.timer_seconds * (solitaire() && g.phase === "bidding" ? g.options.solitaire_timer_factor : 1);
  bar.max = total;
  bar.value = Math.min(total, left);
  const text = t("timer.left", { n: Math.ceil(left) });
  if ($("timer-text").textContent !== text) $("timer-text").textContent = text;
}

// -- bidding and showing -----------------------------------------------------------

async function bid(e) {
  e.preventDefault();
  const n = Number($("bid").value);
  try {
    show(await api("POST", `/v1/games/${state.gid}/bids`, { moves: n }, state.seat.token));
    $("status").textContent = t("bid.done", { bid: n });
  } catch (err) {
    $("status").textContent = err.status === 409 && /only go down/.test(err.message) ? t("bid.lower")
      : err.status === 400 ? t("bid.range") : t("bid.failed", { error: problemText(err) });
  }
}

function select(colour) {
  state.selected = colour;
  state.view.select(colour);
  showChosen(colour);
}

const go = (direction) => { if (state.selected && myTurn()) move(state.selected, direction); };

async function move(colour, direction) {
  if (!myTurn() || state.animating) return;
  const path = slide(state.board, state.cells, colour, direction);
  if (!path) {
    $("status").textContent = capital(t("cannot_move", { robot: t(`robot.${colour}`), dir: t(`dir.${NAMES[direction]}`) }));
    return;
  }
  state.history.push(copy(state.cells));
  state.moves.push({ robot: colour, direction: NAMES[direction] });
  state.cells = { ...state.cells, [colour]: path[path.length - 1] };
  $("count").textContent = state.moves.length;
  $("status").textContent = "";
  keep();
  for (const cell of path) {
    state.view.place(colour, cell);
    await pause(26);
  }
  place();
}

function undo() {
  if (race.solo) return race.solo.undo();
  if (!state.history.length) return;
  state.cells = state.history.pop();
  state.moves.pop();
  $("count").textContent = state.moves.length;
  keep();
  place();
}

function resetMoves() {
  if (race.solo) return race.solo.reset(t("back_to_start"));
  state.cells = copy(state.roundStart);
  state.moves = [];
  state.history = [];
  $("count").textContent = 0;
  keep();
  place();
}

// The moves of a solution being shown, kept in this tab: a reload under the sand
// timer keeps them.
const kept = () => `rr-show:${state.gid}:${state.round}`;
const keep = () => sessionStorage.setItem(kept(), JSON.stringify(state.moves));

function replayKept() {
  const moves = JSON.parse(sessionStorage.getItem(kept()) || "[]");
  for (const m of moves) {
    const path = slide(state.board, state.cells, m.robot, NAMES.indexOf(m.direction));
    if (!path) break;
    state.history.push(copy(state.cells));
    state.moves.push({ robot: m.robot, direction: m.direction });
    state.cells = { ...state.cells, [m.robot]: path[path.length - 1] };
  }
  $("count").textContent = state.moves.length;
  place();
}

async function submit() {
  if (!state.moves.length) {
    $("status").textContent = t("make_moves");
    return;
  }
  const moves = state.moves;
  state.moves = [];
  state.history = [];
  keep();
  $("count").textContent = 0;
  try {
    await api("POST", `/v1/games/${state.gid}/solutions`, { moves }, state.seat.token);
    $("status").textContent = t("submit.done");  // the outcome is told once the table has seen it played
  } catch (err) {
    $("status").textContent = t("submit.failed", { error: problemText(err) });
  }
}

function keys(event) {
  if (document.querySelector("dialog[open]") || event.target.closest("select, input, textarea")) return;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.key === "?") howToPlay("table");
  else if (race.solo) {
    if (!race.solo.key(event)) return;
  } else if (!state.game) return;
  else if (/^[1-5]$/.test(event.key) && colourOfKey(event.key) in state.view.robots) select(colourOfKey(event.key));
  else if (event.key in DIRS) go(DIRS[event.key]);
  else if (event.code === "KeyU" || event.key === "Backspace") undo();
  else if (event.code === "KeyR") resetMoves();
  else if (event.code === "KeyB" && !$("bid-form").hidden) $("bid").focus();
  else return;
  event.preventDefault();
}

switcher($("language"));
$("join").addEventListener("submit", join);
$("robot-form").addEventListener("submit", addRobot);
$("start").addEventListener("click", start);
$("bid-form").addEventListener("submit", bid);
$("undo").addEventListener("click", undo);
$("reset").addEventListener("click", resetMoves);
$("submit").addEventListener("click", submit);
$("how-open").addEventListener("click", () => howToPlay("table"));
$("race-skip").addEventListener("click", () => raceMove(null));
$("copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText($("room-link").href);
    say(t("link.copied"));
  } catch {
    say(t("link.copy_failed"));
  }
});
document.addEventListener("keydown", keys);
const room = location.pathname.match(/^\/r\/([A-Za-z0-9_-]+)$/);
if (room) enterRoom(room[1]);
else showCreate();
if (!seenHowToPlay("table")) howToPlay("table");

// -- a race (a room opened in race mode) ----------------------------------------------
// Everyone plays the same puzzles, each at their own pace, until the race's clock runs
// out: a puzzle is played as on the play page (Solo), its ending sent to the race.  The
// standings and what everyone did come live over the room's stream (GET /v1/rooms/{id}/events).

const race = { solo: null, room: null, skew: 0, at: null, boards: {}, version: 0, timer: null };

class RacePuzzle extends Solo {
  async reached() {
    if (this.sent) return;
    this.sent = true;
    await raceMove(this.moves.slice());
  }
}

async function startRace(room) {
  if (race.room) return;
  race.room = room;
  say("");
  $("lobby").hidden = true;
  $("table").hidden = false;
  document.body.classList.add("playing", "racing");
  for (const id of ["bid-form", "bids-box", "submit", "history", "history-heading"]) if ($(id)) $(id).hidden = true;
  const racing = me() !== null;
  $("show").hidden = !racing;
  $("race-skip").hidden = !racing;
  if (state.seat) $("you").textContent = t("you.label", { name: state.seat.name });
  if (!racing) say(t("watching"));
  houseRules($("table-rules-list"), room.options, room.players.length);
  raceShown(room);
  race.timer = setInterval(raceTick, 250);
  raceFollow();
  if (racing) await nextPuzzle(room);
}

// The seat's name when this browser plays in the room's game or race; null for a watcher.
function me() {
  if (!state.seat) return null;
  const playing = race.room ? state.seat.name in race.room.race.players
    : state.game.players.some((p) => p.name === state.seat.name);
  return playing ? state.seat.name : null;
}

async function nextPuzzle(room) {
  const mine = room.race.players[me()], held = room.race.puzzles[mine.at];
  if (room.race.finished || mine.at === race.at) return;
  if (!held) return void setTimeout(async () => nextPuzzle((await api("GET", `/v1/rooms/${state.rid}`)).room), 1000);
  race.at = mine.at;
  const found = await api("GET", `/v1/puzzles/${held.code}`);
  race.boards[found.board] ||= await api("GET", `/v1/boards/${encodeURIComponent(found.board)}?tables=true`);
  if (race.solo) {  // a fresh board: the last puzzle's robots, target and touch handlers go with it
    const fresh = $("board").cloneNode(false);
    fresh.append($("board-image"));
    $("board").replaceWith(fresh);
  }
  race.solo = new RacePuzzle(found, race.boards[found.board], { solution: async () => [] });
  raceShown(room);
}

async function raceMove(moves) {
  try {
    const { room, result } = await api("POST", `/v1/rooms/${state.rid}/race/solutions`, { moves }, state.seat.token);
    raceShown(room);
    if (moves && !result.success) {
      race.solo.sent = false;
      $("status").textContent = t("race.wrong");
      return;
    }
    await nextPuzzle(room);
    $("status").textContent = moves ? t("race.scored", { points: result.points }) : "";
  } catch (err) {
    if (race.solo) race.solo.sent = false;
    if (err.status === 409) return raceOver();
    $("status").textContent = problemText(err);
  }
}

function raceFollow() {
  const heard = (event) => {
    if (event.version <= race.version) return;
    race.version = event.version;
    const text = event.type === "race_solution" && event.success
      ? t("race.ev.solved", { name: event.player, n: event.index + 1, points: event.points })
      : event.type === "race_skip" ? t("race.ev.skip", { name: event.player, n: event.index + 1 })
        : event.type === "race_over" ? t("race.ev.over") : "";
    if (text) {
      const li = document.createElement("li");
      li.textContent = text;
      $("log").append(li);
      $("log").scrollTop = $("log").scrollHeight;
    }
    api("GET", `/v1/rooms/${state.rid}`).then((v) => raceShown(v.room)).catch(() => {});
  };
  const stream = window.EventSource && new EventSource(`/v1/rooms/${state.rid}/events?since=0`);
  if (!stream) return;
  for (const type of ["race_started", "race_solution", "race_skip", "race_over"]) {
    stream.addEventListener(type, (message) => heard(JSON.parse(message.data)));
  }
  race.stream = stream;
}

function raceShown(room) {
  if (room.race.version < (race.room.race.version || 0)) return;  // overtaken by a newer answer
  race.room = room;
  const r = room.race, mine = me() && r.players[me()];
  const rows = r.standings || Object.entries(r.players).map(([player, p]) => ({ player, ...p }))
    .sort((a, b) => b.points - a.points || b.solved - a.solved);
  $("scores").tHead.rows[0].cells[1].textContent = t("race.solved");
  for (const el of document.querySelectorAll(".points")) el.hidden = false;
  $("scores").tBodies[0].replaceChildren(...rows.map((p) => {
    const tr = document.createElement("tr"), th = document.createElement("th");
    th.scope = "row";
    th.textContent = p.player;
    tr.append(th, ...[p.solved, p.points].map((v) => Object.assign(document.createElement("td"), { textContent: String(v) })));
    tr.dataset.player = p.player;
    return tr;
  }));
  if (r.finished) return raceEnded(room);
  if (mine) $("phase").textContent = t("race.phase", { n: mine.at + 1, points: mine.points });
}

function raceTick() {
  const r = race.room && race.room.race;
  if (!r) return;
  const left = Math.max(0, r.ends - (Date.now() / 1000 + race.skew));
  $("timer-bar").max = r.seconds;
  $("timer-bar").value = left;
  $("timer-text").textContent = t("timer.left", { n: Math.ceil(left) });
  if (left <= 0 && !r.finished) raceOver();
}

async function raceOver() {
  if (race.ending) return;
  race.ending = true;
  for (let i = 0; i < 20; i++) {
    const room = (await api("GET", `/v1/rooms/${state.rid}`)).room;
    if (room.race.finished) return raceShown(room);
    await pause(500);
  }
  race.ending = false;
}

function raceEnded(room) {
  clearInterval(race.timer);
  if (race.stream) race.stream.close();
  race.solo = null;
  const first = room.race.standings.filter((s) => s.place === 1 || s.points === room.race.standings[0].points);
  $("phase").textContent = t("race.over", { names: first.map((s) => s.player).join(", ") });
  for (const id of ["show", "race-skip", "goal", "timer-box"]) $(id).hidden = true;
  $("over").hidden = false;
}
