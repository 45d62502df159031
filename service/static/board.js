// The board as the pages draw and play it: the geometry of solver/svg.py's
// pictures, the robots as buttons over the API's SVG, and one slide under the
// rules with the board's own step tables (GET /v1/boards/{spec}?tables=true).

import { t } from "./i18n.js";

const CELL = 40, MARGIN = 8;
export const DIRS = { ArrowUp: 0, ArrowRight: 1, ArrowDown: 2, ArrowLeft: 3 };
export const NAMES = "NESW";
export const LETTER = { red: "R", green: "G", blue: "B", yellow: "Y", black: "K" };

// FORMATS.md names a target by its chip ({colour, symbol}, or {symbol: "vortex"});
// the board says where that chip lies.
export function goalCell(board, target) {
  if (target.cell) return target.cell;
  const chip = board.targets.find((c) => c.symbol === target.symbol &&
    (target.symbol === "vortex" || c.colour === target.colour));
  if (!chip) throw new Error("the target is not on this board");
  return chip.cell;
}

// A function that places an element on a cell of the board, in percent.
export function placer(board) {
  const { width, height } = board, w = width * CELL + 2 * MARGIN, h = height * CELL + 2 * MARGIN;
  return (el, [x, y]) => {
    el.style.left = `${(100 * (MARGIN + x * CELL)) / w}%`;
    el.style.top = `${(100 * (MARGIN + y * CELL)) / h}%`;
    el.style.width = `${(100 * CELL) / w}%`;
    el.style.height = `${(100 * CELL) / h}%`;
  };
}

// A chip's name in the reader's language: "the vortex", "the red circle".
export function chipName(chip) {
  if (chip.symbol === "vortex") return t("chip.vortex");
  if (!chip.colour) return t("chip.marked");
  return t("chip.named", { colour: t(`colour.${chip.colour}`), symbol: t(`symbol.${chip.symbol}`) });
}

// One slide under the rules: robots stop at walls and robots; a barrier of
// another colour turns them; they never stop on a barrier.  The cells passed,
// or null when the robot cannot move that way.
export function slide(board, cells, colour, direction) {
  const { width, steps, barriers, deflect } = board;
  const occupied = new Set(Object.entries(cells).filter(([c]) => c !== colour).map(([, [x, y]]) => y * width + x));
  const [sx, sy] = cells[colour];
  const start = sy * width + sx;
  let cell = start, d = direction, limit = 4 * steps[0].length;
  const path = [];
  for (;;) {
    const next = steps[d][cell];
    if (next < 0 || occupied.has(next)) break;
    cell = next;
    path.push(cell);
    const barrier = barriers[String(cell)];
    if (barrier && barrier.colour !== colour) d = deflect[barrier.orientation][d];
    if (--limit < 0) return null;
  }
  if (cell === start || barriers[String(cell)]) return null;
  return path.map((i) => [i % width, Math.floor(i / width)]);
}

// A robot as a button on the board.
export function robotButton(colour, key, onClick) {
  const robot = document.createElement("button");
  robot.type = "button";
  robot.className = `robot ${colour}`;
  robot.dataset.colour = colour;
  robot.innerHTML = `<span aria-hidden="true">${LETTER[colour]}</span>`;
  robot.setAttribute("aria-label", t("robot.key", { robot: t(`robot.${colour}`), key }));
  robot.addEventListener("click", onClick);
  return robot;
}

// A robot's button beside the board (its key, letter and colour's name).
export function chooserButton(colour, key, onClick) {
  const chooser = document.createElement("button");
  chooser.type = "button";
  chooser.className = `chooser ${colour}`;
  chooser.dataset.colour = colour;
  chooser.innerHTML = `<kbd>${key}</kbd> <span class="swatch" aria-hidden="true">${LETTER[colour]}</span> `;
  chooser.append(t(`colour.${colour}`));
  chooser.addEventListener("click", onClick);
  return chooser;
}

// The board's state in words, for those who cannot see it.
export function inWords(cells, chip, goal) {
  const lines = Object.entries(cells).map(([c, [x, y]]) => t("words.robot", { robot: t(`robot.${c}`), x: x + 1, y: y + 1 }));
  lines.push(t("words.target", { chip: chipName(chip), x: goal[0] + 1, y: goal[1] + 1 }));
  return lines;
}

// Swipes on the board, each as a direction (0 N, 1 E, 2 S, 3 W); a tap is not one.
export function swipes(board, onSwipe) {
  let from = null;
  board.addEventListener("pointerdown", (e) => { from = [e.clientX, e.clientY]; });
  board.addEventListener("pointerup", (e) => {
    if (!from) return;
    const dx = e.clientX - from[0], dy = e.clientY - from[1];
    from = null;
    if (Math.max(Math.abs(dx), Math.abs(dy)) < 24) return;
    onSwipe(Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? 1 : 3) : (dy > 0 ? 2 : 0));
  });
}

export const pause = (ms) => new Promise((done) => setTimeout(done, ms));
