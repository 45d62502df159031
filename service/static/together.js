// Playing together: a room by link (POST /v1/rooms, .../players, .../start), then
// the game as at the table: the board and the chip, bids as they come, the sand
// timer, whose turn it is to show, each solution shown move by move, the chip
// won, scores and the rounds with their optimum.  Live through server-sent
// events (GET /v1/games/{id}/events), polling when a stream is refused.
// A seat's token stays in this browser (localStorage), never in the link.

import { DIRS, NAMES, chipName, chooserButton, goalCell, inWords, pause, placer, robotButton, slide, swipes } from "./board.js";
import { switcher, t } from "./i18n.js";

const $ = (id) => document.getElementById(id);
const SEATS = "rr-seats-v1";   // {roomId: {name, token}}
const NAME = "rr-name";
const EVENTS = ["created", "round", "bid", "timer_started", "verification", "attempt", "round_over", "finished"];
const state = { rid: null, seat: null, room: null, game: null, board: null, at: null, skew: 0, robots: {},
                cells: {}, moves: [], history: [], selected: null, roundStart: null, round: null,
                queue: Promise.resolve(), animating: false, version: 0 };

class Failure extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

async function api(method, path, body, token) {
  const headers = body ? { "Content-Type": "application/json" } : {};
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const data = await response.json();
  if (!response.ok) throw new Failure(response.status, data.detail || response.statusText);
  return data;
}

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
      await enterRoom(room.id);
    } catch (err) {
      say(t("error", { error: err.message }));
    }
  });
}

function roomRequest(name) {
  const choice = document.querySelector('input[name="board"]:checked').value;
  const options = {
    timer_seconds: Number($("timer").value) || 60, exact_bid: $("exact").checked, tie_break: $("tie").value,
    scoring: $("scoring").value, black_robot: $("black").checked, ricochet: $("ricochet").checked ? "turn" : "none",
    void_returns_chip: $("void").checked, solitaire_timer_factor: $("factor").checked ? 2 : 1,
  };
  if ($("chips").value) options.chips_to_win = Number($("chips").value);
  const body = { name, board: choice === "spec" ? $("board-spec").value.trim() : choice, options };
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
    say(err.status === 404 ? t("error.no_room") : t("error", { error: err.message }));
    return;
  }
  if (room.game) return startTable(room.game);
  lobby(room);
  const poll = setInterval(async () => {
    try {
      const now = (await api("GET", `/v1/rooms/${rid}`)).room;
      if (now.game) {
        clearInterval(poll);
        await startTable(now.game);
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
  $("seated").replaceChildren(...room.players.map((name) => {
    const li = document.createElement("li");
    const mine = state.seat && state.seat.name === name;
    li.textContent = mine ? t("player.you", { name }) : name === room.host ? t("player.host", { name }) : name;
    return li;
  }));
  const host = state.seat && state.seat.name === room.host;
  $("join").hidden = Boolean(state.seat);
  $("start").hidden = !host;
  $("waiting").textContent = host ? (room.players.length < 2 ? t("waiting.players") : "")
    : state.seat ? t("waiting.host", { host: room.host }) : "";
  if (!state.seat && !$("join-name").value) $("join-name").value = localStorage.getItem(NAME) || "";
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
    say(taken ? t("error.name_taken") : err.status === 409 ? t("error.started") : t("error", { error: err.message }));
  }
}

async function start() {
  try {
    const started = await api("POST", `/v1/rooms/${state.rid}/start`, null, state.seat.token);
    await startTable(started.room.game);
  } catch (err) {
    say(t("error", { error: err.message }));
  }
}

// -- the table -----------------------------------------------------------------------

async function startTable(gid) {
  if (state.gid) return;
  state.gid = gid;
  $("lobby").hidden = true;
  $("table").hidden = false;
  const view = await api("GET", `/v1/games/${gid}`);
  const spec = view.game.board;
  state.board = await api("GET", `/v1/boards/${encodeURIComponent(spec)}?tables=true`);
  $("board-image").src = `/v1/boards/${encodeURIComponent(spec)}.svg`;
  $("board-image").alt = t("board.alt", { spec });
  state.at = placer(state.board);
  state.goalEl = document.createElement("div");
  state.goalEl.className = "goal";
  $("board").append(state.goalEl);
  Object.keys(view.game.robots).forEach((colour, i) => {
    state.robots[colour] = robotButton(colour, i + 1, () => select(colour));
    $("board").append(state.robots[colour]);
    $("robots").append(chooserButton(colour, i + 1, () => select(colour)));
  });
  if (state.seat) $("you").textContent = t("you.label", { name: state.seat.name });
  show(view);
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

// One event: told in the log, a shown solution played on the board, then the
// game fetched again once every event heard so far has been played.
function heard(event) {
  if (event.version <= state.version) return;
  state.version = event.version;
  state.queue = state.queue.then(async () => {
    log(event);
    if (event.type === "attempt" && event.moves) await reveal(event);
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

function log(event) {
  const text = told(event);
  if (!text) return;
  const li = document.createElement("li");
  li.textContent = text;
  $("log").prepend(li);
}

function told(e) {
  switch (e.type) {
    case "bid": return t("ev.bid", { name: e.player, n: e.moves });
    case "timer_started": return t("ev.timer");
    case "verification": return t("ev.verification", { name: e.order[0].player });
    case "attempt": return e.success ? t("ev.success", { name: e.player, n: e.length })
      : t("ev.failure", { name: e.player, why: why(e) });
    case "round": return t("ev.round", { number: e.number, chip: chipName(e.chip) });
    case "round_over": return e.winner ? t("ev.won", { name: e.winner }) : t("ev.unclaimed");
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
        state.robots[m.robot] && state.at(state.robots[m.robot], cell);
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
  for (const [c, cell] of Object.entries(state.cells)) state.at(state.robots[c], cell);
  $("board-words").replaceChildren(...inWords(state.cells, state.chip || { symbol: "vortex" }, state.goal || [0, 0])
    .map((line) => {
      const li = document.createElement("li");
      li.textContent = line;
      return li;
    }));
}

// The game as it stands.
function show(view) {
  const game = view.game;
  state.game = game;
  state.skew = view.now ? view.now - Date.now() / 1000 : 0;
  const r = game.round;
  const number = r ? r.number : null;
  if (number !== state.round) {  // a new round: the robots stand on their markers
    state.round = number;
    state.roundStart = copy(game.robots);
    state.moves = [];
    state.history = [];
  }
  if (r) {
    state.chip = r.chip;
    state.goal = goalCell(state.board, r.chip);
    state.at(state.goalEl, state.goal);
    const who = r.chip.colour ? t(`who.${r.chip.colour}`) : t("who.any");
    $("goal").textContent = t("goal", { who, chip: chipName(r.chip), x: state.goal[0] + 1, y: state.goal[1] + 1 });
    select(state.selected || (r.chip.colour in state.robots ? r.chip.colour : Object.keys(state.robots)[0]));
  }
  if (!state.animating && !state.moves.length) {
    state.cells = copy(game.robots);
    place();
  }
  phase(game);
  bids(r);
  scores(game);
  rounds(game);
  tick();
}

const me = () => state.seat && state.game.players.some((p) => p.name === state.seat.name) ? state.seat.name : null;
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
  $("bid-form").hidden = !(me() && game.phase === "bidding" && !solitaire());
  const turn = myTurn(), began = turn && $("show").hidden;
  $("show").hidden = !turn;
  if (began) {  // the keys move robots now: focus leaves the bid field for the selected robot
    const chosen = document.querySelector(`#robots [data-colour="${state.selected}"]`);
    if (chosen) chosen.focus();
  }
}

function bids(r) {
  const items = r ? r.bids : [];
  const list = items.map((b) => {
    const li = document.createElement("li");
    li.textContent = t("bid.item", { name: b.player, n: b.moves });
    return li;
  });
  if (!list.length) {
    const li = document.createElement("li");
    li.textContent = t("bids.none");
    list.push(li);
  }
  $("bids").replaceChildren(...list);
}

function scores(game) {
  $("scores").tBodies[0].replaceChildren(...game.players.map((p) => {
    const tr = document.createElement("tr");
    for (const [i, value] of [p.name, p.chips.length, p.score].entries()) {
      const cell = document.createElement(i === 0 ? "th" : "td");
      if (i === 0) cell.scope = "row";
      cell.textContent = i === 0 ? value : String(value);
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
      ? t("history.won", { number: h.number, chip: chipName(h.chip), name: h.winner, n: h.length, optimum })
      : t("history.unclaimed", { number: h.number, chip: chipName(h.chip), optimum });
    return li;
  }));
}

// The sand timer, run down by this page's clock set to the referee's.
function tick() {
  const g = state.game, r = g && g.round;
  const ends = r ? (g.phase === "verifying" ? r.show_ends : r.timer_ends) : null;
  if (!ends || g.phase === "finished") {
    $("timer").value = 0;
    $("timer-text").textContent = g && g.phase === "bidding" ? t("timer.idle") : "";
    return;
  }
  const left = Math.max(0, Math.ceil(ends - (Date.now() / 1000 + state.skew)));
  const total = g.options.timer_seconds * (solitaire() ? g.options.solitaire_timer_factor : 1);
  $("timer").max = total;
  $("timer").value = left;
  const text = t("timer.left", { n: left });
  if ($("timer-text").textContent !== text) $("timer-text").textContent = text;
}

// -- bidding and showing -----------------------------------------------------------

async function bid(e) {
  e.preventDefault();
  const n = Number($("bid").value);
  try {
    show(await api("POST", `/v1/games/${state.gid}/bids`, { moves: n }, state.seat.token));
    $("status").textContent = t("bid.done", { n });
  } catch (err) {
    $("status").textContent = err.status === 409 && /only go down/.test(err.message) ? t("bid.lower")
      : t("bid.failed", { error: err.message });
  }
}

function select(colour) {
  state.selected = colour;
  for (const el of document.querySelectorAll("[data-colour]")) {
    el.setAttribute("aria-pressed", String(el.dataset.colour === colour));
  }
}

async function move(colour, direction) {
  if (!myTurn() || state.animating) return;
  const path = slide(state.board, state.cells, colour, direction);
  if (!path) {
    $("status").textContent = t("cannot_move", { robot: t(`robot.${colour}`), dir: t(`dir.${NAMES[direction]}`) });
    return;
  }
  state.history.push(copy(state.cells));
  state.moves.push({ robot: colour, direction: NAMES[direction] });
  state.cells = { ...state.cells, [colour]: path[path.length - 1] };
  $("count").textContent = state.moves.length;
  $("status").textContent = "";
  for (const cell of path) {
    state.at(state.robots[colour], cell);
    await pause(28);
  }
  place();
}

function undo() {
  if (!state.history.length) return;
  state.cells = state.history.pop();
  state.moves.pop();
  $("count").textContent = state.moves.length;
  place();
}

function resetMoves() {
  state.cells = copy(state.roundStart);
  state.moves = [];
  state.history = [];
  $("count").textContent = 0;
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
  $("count").textContent = 0;
  try {
    const view = await api("POST", `/v1/games/${state.gid}/solutions`, { moves }, state.seat.token);
    $("status").textContent = view.result.success ? t("ev.success", { name: state.seat.name, n: view.result.length })
      : t("ev.failure", { name: state.seat.name, why: why(view.result) });
  } catch (err) {
    $("status").textContent = t("submit.failed", { error: err.message });
  }
}

function keys(event) {
  if (!state.game || event.target.closest("select, input, textarea") || event.altKey || event.ctrlKey || event.metaKey) return;
  const colours = Object.keys(state.robots);
  if (/^[1-5]$/.test(event.key) && Number(event.key) <= colours.length) select(colours[Number(event.key) - 1]);
  else if (event.key in DIRS && state.selected && myTurn()) move(state.selected, DIRS[event.key]);
  else if (event.key === "u" || event.key === "Backspace") undo();
  else if (event.key === "r") resetMoves();
  else if (event.key === "b" && !$("bid-form").hidden) $("bid").focus();
  else return;
  event.preventDefault();
}

switcher($("language"));
$("join").addEventListener("submit", join);
$("start").addEventListener("click", start);
$("bid-form").addEventListener("submit", bid);
$("undo").addEventListener("click", undo);
$("reset").addEventListener("click", resetMoves);
$("submit").addEventListener("click", submit);
$("copy").addEventListener("click", async () => {
  await navigator.clipboard.writeText($("room-link").href);
  say(t("link.copied"));
});
document.addEventListener("keydown", keys);
swipes($("board"), (direction) => { if (state.selected) move(state.selected, direction); });
const room = location.pathname.match(/^\/r\/([A-Za-z0-9_-]+)$/);
if (room) enterRoom(room[1]);
else showCreate();
