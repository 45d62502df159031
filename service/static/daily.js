// What brings a player back to the daily puzzle: a spoiler-free share text, the
// player's own statistics and streak (kept in this browser only), a countdown to
// the next day, the archive, and the anonymous player id Train mode rates.

import { date, t } from "./i18n.js";

const STATS = "rr-daily-v1";   // {days: {date: {moves, optimal}}}
const PLAYER = "rr-player";

export function playerId() {
  let id = localStorage.getItem(PLAYER);
  if (!id) {
    id = "web-" + Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
    localStorage.setItem(PLAYER, id);
  }
  return id;
}

function load() {
  try {
    return JSON.parse(localStorage.getItem(STATS)) || { days: {} };
  } catch {
    return { days: {} };
  }
}

// A day is kept with the player's best answer: fewest moves.
export function record(date, moves, optimal) {
  const stats = load();
  const before = stats.days[date];
  if (!before || moves < before.moves) stats.days[date] = { moves, optimal };
  localStorage.setItem(STATS, JSON.stringify(stats));
  return stats;
}

export function solvedOn(date) {
  return load().days[date] || null;
}

const dayBefore = (date) => new Date(Date.parse(date + "T00:00:00Z") - 86400000).toISOString().slice(0, 10);

export function summary(today) {
  const days = load().days, dates = Object.keys(days);
  const optimal = dates.filter((d) => days[d].moves === days[d].optimal).length;
  let streak = 0;
  for (let d = days[today] ? today : dayBefore(today); days[d]; d = dayBefore(d)) streak++;
  const spread = [0, 0, 0, 0];  // moves over the optimum: 0, 1, 2, 3 or more
  for (const d of dates) spread[Math.min(3, days[d].moves - days[d].optimal)]++;
  return { solved: dates.length, optimal, streak, spread };
}

export function shareText(daily, moves) {
  const over = moves - daily.optimal_length;
  const mark = over === 0 ? t("share.optimal") : `+${over}`;
  return `${t("share.text", { number: daily.number, date: daily.date, moves, optimal: daily.optimal_length, mark })}\n` +
    `${location.origin}/`;
}

export async function share(text) {
  if (navigator.share && matchMedia("(pointer: coarse)").matches) {
    try {
      await navigator.share({ text });
      return t("shared");
    } catch {
      // fall back to the clipboard
    }
  }
  await navigator.clipboard.writeText(text);
  return t("copied");
}

export function showStats(el, today) {
  const s = summary(today);
  const labels = [t("spread.optimal"), "+1", "+2", t("spread.more")];
  const most = Math.max(1, ...s.spread);
  el.replaceChildren();
  const figures = document.createElement("p");
  figures.textContent = t("stats", { solved: s.solved, optimal: s.optimal, streak: t("days", { n: s.streak }) });
  figures.id = "stats-figures";
  el.append(figures);
  const list = document.createElement("ul");
  list.className = "spread";
  list.setAttribute("aria-label", t("spread.label"));
  s.spread.forEach((n, i) => {
    const item = document.createElement("li");
    item.innerHTML = `<span>${labels[i]}</span><span class="bar" style="width:${(100 * n) / most}%"></span><b>${n}</b>`;
    list.append(item);
  });
  el.append(list);
  return s;
}

export function countdown(el) {
  const tick = () => {
    const now = new Date();
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    const left = Math.max(0, Math.floor((next - now) / 1000));
    const pad = (n) => String(n).padStart(2, "0");
    el.textContent = t("countdown", { time: `${pad(Math.floor(left / 3600))}:${pad(Math.floor(left / 60) % 60)}:${pad(left % 60)}` });
  };
  tick();
  setInterval(tick, 1000);
}

// The archive, newest first, thirty days at a time ("Earlier days" fetches more).
export async function archive(list, more, api, today) {
  let end = today;
  const page = async () => {
    const start = new Date(Date.parse(end + "T00:00:00Z") - 29 * 86400000).toISOString().slice(0, 10);
    const found = await api("GET", `/v1/daily/archive?from=${start}&to=${end}&limit=30`);
    for (const d of found.items.reverse()) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = `/?day=${d.date}`;
      link.textContent = `#${d.number} · ${date(d.date)} · ${t("moves.count", { n: d.optimal_length })} · ${t(`grade.${d.grade}`)}`;
      item.append(link);
      list.append(item);
    }
    end = dayBefore(start);
    more.hidden = start <= "2026-01-01";
  };
  more.addEventListener("click", page);
  await page();
}
