// The player's record of daily puzzles, kept in this browser only: what brings a
// player back (a streak, statistics, a spoiler-free share text, the countdown,
// the archive) and what makes it worth keeping:
//
// - a day's record is its first finished attempt: solved, or revealed (showing
//   the solution is giving up), with the moves, the hints used and the time;
// - a streak counts days solved on their own day, one after another, without
//   the solution shown; archive days count in the statistics, not the streak;
//   a day begun on its day and finished after midnight (UTC) is on its day.
//
// The anonymous player id Train mode rates is here too.

import { date, number, t } from "./i18n.js";

const RECORDS = "rr-daily-v2";   // {days: {date: {result, moves, optimal, hints, seconds, onDay, robots}}}
const OLD_RECORDS = "rr-daily-v1";   // {days: {date: {moves, optimal}}}: the best attempt of a day
const PROGRESS = "rr-progress-v1";   // {date: {hints, seconds, begun}}: a day being played
const PLAYER = "rr-player";
const SQUARES = { red: "🟥", green: "🟩", blue: "🟦", yellow: "🟨", black: "⬛" };

export function playerId() {
  let id = localStorage.getItem(PLAYER);
  if (!id) {
    id = "web-" + Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem(PLAYER, id);
  }
  return id;
}

function read(key, empty) {
  try {
    return JSON.parse(localStorage.getItem(key)) || empty;
  } catch {
    return empty;
  }
}

// The records, the first time with those of the old form brought in: it kept a
// day's best answer and not when it was found, so those days count as solved on
// their day (nothing better can be known of them).
function load() {
  const records = read(RECORDS, null);
  if (records) return records;
  const old = read(OLD_RECORDS, { days: {} });
  const days = {};
  for (const [d, r] of Object.entries(old.days || {})) {
    days[d] = { result: "solved", moves: r.moves, optimal: r.optimal, hints: 0, seconds: null, onDay: true, robots: [] };
  }
  const fresh = { days };
  localStorage.setItem(RECORDS, JSON.stringify(fresh));
  return fresh;
}

export const today = () => new Date().toISOString().slice(0, 10);

export const recordOf = (day) => load().days[day] || null;

// A day finished: kept only if it is the day's first finished attempt.  The
// record as it stands afterwards, and whether this attempt made it.
export function finish(day, result) {
  const records = load();
  const first = !records.days[day];
  if (first) {
    records.days[day] = { ...result, onDay: onItsDay(day) };
    localStorage.setItem(RECORDS, JSON.stringify(records));
    const progress = read(PROGRESS, {});
    delete progress[day];
    localStorage.setItem(PROGRESS, JSON.stringify(progress));
  }
  return { record: records.days[day], first };
}

// Whether a day finished now is finished on its day: today's, or yesterday's
// begun yesterday (the page was open at midnight).
function onItsDay(day) {
  const now = today();
  return day === now || (day === dayBefore(now) && (read(PROGRESS, {})[day] || {}).begun === day);
}

// What a day being played has used so far (hints, seconds played), kept over reloads.
export function progressOf(day) {
  const { hints = 0, seconds = 0 } = read(PROGRESS, {})[day] || {};
  return { hints, seconds };
}

// The day's puzzle shown: the date it was first begun on is kept (a day begun on
// its day still counts when it is finished after midnight).
export function begin(day) {
  const all = read(PROGRESS, {});
  if (all[day] && all[day].begun) return;
  all[day] = { hints: 0, seconds: 0, ...all[day], begun: today() };
  localStorage.setItem(PROGRESS, JSON.stringify(all));
}

export function saveProgress(day, progress) {
  const all = read(PROGRESS, {});
  for (const d of Object.keys(all)) if (d < dayBefore(today())) delete all[d];  // nothing old lingers
  all[day] = { ...all[day], ...progress };
  localStorage.setItem(PROGRESS, JSON.stringify(all));
}

export const dayBefore = (d) => new Date(Date.parse(d + "T00:00:00Z") - 86400000).toISOString().slice(0, 10);

const counts = (r) => r && r.result === "solved" && r.onDay !== false;

export function summary(now = today()) {
  const days = load().days, dates = Object.keys(days).sort();
  const solved = dates.filter((d) => days[d].result === "solved");
  const optimal = solved.filter((d) => days[d].moves === days[d].optimal).length;
  let streak = 0;
  for (let d = days[now] ? now : dayBefore(now); counts(days[d]); d = dayBefore(d)) streak++;
  let best = 0, run = 0, last = null;
  for (const d of dates) {
    run = counts(days[d]) ? (last && dayBefore(d) === last && run ? run + 1 : 1) : 0;
    last = d;
    best = Math.max(best, run);
  }
  const spread = [0, 0, 0, 0];  // moves over the optimum: 0, 1, 2, 3 or more
  for (const d of solved) spread[Math.min(3, Math.max(0, days[d].moves - days[d].optimal))]++;
  return { played: dates.length, solved: solved.length, optimal, revealed: dates.length - solved.length,
           streak, best, spread };
}

export const clock = (seconds) => {
  const s = Math.max(0, Math.round(seconds || 0)), pad = (n) => String(n).padStart(2, "0");
  return s >= 3600 ? `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}` : `${Math.floor(s / 60)}:${pad(s % 60)}`;
};

// One coloured square per move, by the robot that made it: the shape of a
// solution without the solution.
export const squares = (robots) => robots.map((c) => SQUARES[c] || "⬜").join("");

// The share text: a head (the day, or "a puzzle"), the squares, moves against
// the optimum, hints and time, and the link.  A revealed day says so, without squares.
export function shareText(head, r, link) {
  const lines = [head];
  if (r.result !== "solved") lines.push(t("share.revealed", { n: r.optimal }));
  else if (r.moves === r.optimal) lines.push(`${squares(r.robots || [])} ${t("moves.count", { n: r.moves })} ${t("share.optimal")}`);
  else lines.push(`${squares(r.robots || [])} ${t("share.moves", { moves: t("moves.count", { n: r.moves }), optimal: r.optimal })}`);
  const extra = [r.hints ? t("share.hints", { n: r.hints }) : t("share.no_hints")];
  if (r.seconds) extra.push(`⏱ ${clock(r.seconds)}`);
  lines.push(extra.join(" · "), link);
  return lines.join("\n");
}

export const dayHead = (daily) => t("share.head", { number: daily.number, date: date(daily.date) });

export async function share(text) {
  if (navigator.share && matchMedia("(pointer: coarse)").matches) {
    try {
      await navigator.share({ text });
      return t("shared");
    } catch (e) {
      if (e.name === "AbortError") return "";
      // else fall back to the clipboard
    }
  }
  await navigator.clipboard.writeText(text);
  return t("copied");
}

export function showStats(el, now = today()) {
  const s = summary(now);
  const figures = document.createElement("dl");
  figures.className = "figures";
  figures.id = "stats-figures";
  for (const [label, value] of [[t("stats.played"), s.played], [t("stats.solved"), s.solved],
                                [t("stats.optimal"), s.optimal], [t("stats.streak"), s.streak],
                                [t("stats.best"), s.best]]) {
    const item = document.createElement("div");
    const dt = document.createElement("dt"), dd = document.createElement("dd");
    dt.textContent = label;
    dd.textContent = String(value);
    item.append(dt, dd);
    figures.append(item);
  }
  const list = document.createElement("ul");
  list.className = "spread";
  fillSpread(list, s.spread, t("spread.label"));
  el.replaceChildren(figures, list);
  return s;
}

// A chart of counts by moves over the optimum (0, 1, 2, 3 or more) into `list`,
// the row `mine` (if any) marked as the reader's own.
export function fillSpread(list, spread, label, mine = -1) {
  const labels = [t("spread.optimal"), "+1", "+2", t("spread.more")];
  const most = Math.max(1, ...spread);
  list.setAttribute("aria-label", label);
  list.replaceChildren(...spread.map((n, i) => {
    const item = document.createElement("li");
    const name = document.createElement("span"), bar = document.createElement("span"), count = document.createElement("b");
    name.textContent = labels[i];
    bar.className = "bar";
    bar.style.width = `${(100 * n) / most}%`;
    count.textContent = number(n);
    if (i === mine) item.className = "mine";
    item.append(name, bar, count);
    return item;
  }));
}

// Solves by moves ({"9": 14, "10": 6}) as moves over the optimum: 0, 1, 2, 3 or more.
export const spreadOf = (moves, optimal) => Object.entries(moves).reduce((rows, [n, count]) => {
  rows[Math.min(3, Math.max(0, Number(n) - optimal))] += count;
  return rows;
}, [0, 0, 0, 0]);

// The time until the next day's puzzle (00:00 UTC), kept up to date in `els`;
// once the day shown as today's (`shown()`) is over, that a new day began.
export function countdown(els, shown = () => null, onTurn = () => {}) {
  let turned = false;
  const tick = () => {
    const now = new Date(), day = shown();
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    const over = Boolean(day) && day < today();
    const text = over ? t("countdown.turned") : t("countdown", { time: clock((next - now) / 1000) });
    for (const el of els) if (el.textContent !== text) el.textContent = text;
    if (over && !turned) onTurn();
    turned = over;
  };
  tick();
  setInterval(tick, 1000);
}

// The archive, newest first, thirty days at a time ("Earlier days" fetches more),
// each day marked solved, revealed or open in this browser (`markArchive` marks
// them again after a day ends).
export async function archive(list, more, api, now = today()) {
  let end = now;
  const page = async () => {
    const start = new Date(Date.parse(end + "T00:00:00Z") - 29 * 86400000).toISOString().slice(0, 10);
    const found = await api("GET", `/v1/daily/archive?from=${start}&to=${end}&limit=30`);
    for (const d of found.items.reverse()) {
      const item = document.createElement("li");
      item.dataset.date = d.date;
      const link = document.createElement("a");
      link.href = `/?day=${d.date}`;
      const mark = document.createElement("span");
      mark.className = "mark";
      mark.setAttribute("aria-hidden", "true");
      const words = document.createElement("span");
      words.textContent = `#${d.number} · ${date(d.date)} · ${t("moves.count", { n: d.optimal_length })} · ${t(`grade.${d.grade}`)}`;
      const status = document.createElement("span");
      status.className = "status";
      link.append(mark, words, status);
      item.append(link);
      list.append(item);
    }
    markArchive(list);
    end = dayBefore(start);
    more.hidden = start <= "2026-01-01";
  };
  more.addEventListener("click", page);
  await page();
}

export function markArchive(list) {
  const records = load().days;
  for (const item of list.children) {
    const r = records[item.dataset.date];
    const state = !r ? "open" : r.result === "revealed" ? "revealed" : r.moves === r.optimal ? "optimal" : "solved";
    item.className = `day ${state}`;
    item.querySelector(".mark").textContent = { open: "○", revealed: "⚑", optimal: "★", solved: "✓" }[state];
    item.querySelector(".status").textContent = t(`archive.${state}`);
  }
}
