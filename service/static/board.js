// The board as every page draws and plays it: the geometry of solver/formats/svg.py's
// pictures, the robots and the target over the API's SVG, the face-up chip on the
// centrepiece, one slide under the rules with the board's own step tables
// (GET /v1/boards/{spec}?tables=true), and the controls: a tap near a robot chooses
// it, a swipe moves it, four arrow buttons move it, and keys 1-5 (by colour, the
// same on every page) and the arrow keys do the same.

import { capital, t } from "./i18n.js";

const CELL = 40, MARGIN = 8;
const SVG = "http://www.w3.org/2000/svg";
export const DIRS = { ArrowUp: 0, ArrowRight: 1, ArrowDown: 2, ArrowLeft: 3 };
export const NAMES = "NESW";
const ARROWS = "↑→↓←";
// One keyboard map on every page: a robot's key is its colour's place here.
export const COLOURS = ["red", "green", "blue", "yellow", "black"];
export const keyOf = (colour) => COLOURS.indexOf(colour) + 1;
export const colourOfKey = (key) => COLOURS[Number(key) - 1];
// The pictures' colours (svg.py), for the chip drawn over the centrepiece.
const FILL = { red: "#d7263d", green: "#1b998b", blue: "#2e5eaa", yellow: "#f4c20d", black: "#3a3a3a" };
const DARK = { red: "#8c1020", green: "#0f5f56", blue: "#1a3a70", yellow: "#9a7a00", black: "#000000" };

// FORMATS.md names a target by its chip ({colour, symbol}, or {symbol: "vortex"});
// the board says where that chip lies.
export function goalCell(board, target) {
  if (target.cell) return target.cell;
  const chip = board.targets.find((c) => c.symbol === target.symbol &&
    (target.symbol === "vortex" || c.colour === target.colour));
  if (!chip) throw new Error("the target is not on this board");
  return chip.cell;
}

// A chip's name in the reader's language: "the vortex", "the red circle".
export function chipName(chip) {
  if (chip.symbol === "vortex") return t("chip.vortex");
  if (!chip.symbol || !chip.colour) return t("chip.marked");
  return t(`chip.${chip.symbol}`, { colour: t(`colour.${chip.colour}`) });  // the words agree with the shape's noun
}

// Who must reach the target, in words.
export const whoName = (chip) => chip.colour ? t(`who.${chip.colour}`) : t("who.any");

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

// The board's state in words, for those who cannot see it: the robots, the
// target and, given the board (docs/formats.md's form), what stops a robot.
export function inWords(cells, chip, goal, board = null) {
  const lines = Object.entries(cells).map(([c, [x, y]]) =>
    capital(t("words.robot", { robot: t(`robot.${c}`), key: keyOf(c), x: x + 1, y: y + 1 })));
  if (goal) lines.push(t("words.target", { chip: chipName(chip), x: goal[0] + 1, y: goal[1] + 1 }));
  return board ? lines.concat(stopsInWords(board)) : lines;
}

// The walls row by row (each wall once, as the right or lower side of a cell),
// the blocked centre and the diagonals: enough to solve by ear.
export function stopsInWords(board) {
  const rows = new Map();
  const add = (x, y, side) => {
    if (x < 0 || y < 0 || (side === "E" && x >= board.width - 1) || (side === "S" && y >= board.height - 1)) return;
    if (!rows.has(y)) rows.set(y, new Set());
    rows.get(y).add(`${x}${side}`);
  };
  for (const [x, y, side] of board.walls || []) {
    if (side === "N") add(x, y - 1, "S");
    else if (side === "W") add(x - 1, y, "E");
    else add(x, y, side);
  }
  const lines = [t("words.edge")];
  const blocked = board.blocked || [];
  if (blocked.length) {
    const xs = blocked.map((c) => c[0] + 1), ys = blocked.map((c) => c[1] + 1);
    lines.push(t("words.blocked", { x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) }));
  }
  for (const y of [...rows.keys()].sort((a, b) => a - b)) {
    const walls = [...rows.get(y)].map((w) => [Number.parseInt(w, 10), w.slice(-1)])
      .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
      .map(([x, side]) => t(`words.wall.${side}`, { x: x + 1 }));
    lines.push(t("words.walls", { y: y + 1, walls: walls.join(", ") }));
  }
  for (const d of board.diagonals || []) {
    lines.push(t("words.diagonal", { colour: t(`colour.${d.colour}`), x: d.cell[0] + 1, y: d.cell[1] + 1,
                                     way: t(`words.way.${d.orientation === "/" ? "rising" : "falling"}`) }));
  }
  return lines;
}

// A chip as a small picture: its symbol in its colour, or the vortex.
export function chipPicture(chip, size = 24) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", "-12 -12 24 24");
  svg.setAttribute("width", size);
  svg.setAttribute("height", size);
  svg.setAttribute("aria-hidden", "true");
  svg.classList.add("chip-picture");
  svg.dataset.symbol = chip.symbol || "marked";
  const shape = (name, attrs) => {
    const el = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    svg.append(el);
    return el;
  };
  const r = 10;
  const paint = chip.colour ? { fill: FILL[chip.colour], stroke: DARK[chip.colour], "stroke-width": 1.5 } : {};
  if (chip.symbol === "vortex") {
    ["red", "green", "blue", "yellow"].forEach((c, k) => {
      const a0 = (Math.PI / 2) * k, a1 = a0 + Math.PI / 2;
      shape("path", { d: `M0,0 L${r * Math.cos(a0)},${r * Math.sin(a0)} A${r},${r} 0 0 1 ${r * Math.cos(a1)},${r * Math.sin(a1)} z`,
                      fill: FILL[c] });
    });
  } else if (chip.symbol === "circle") {
    shape("circle", { r: r * 0.85, ...paint });
  } else if (chip.symbol === "square") {
    shape("rect", { x: -r * 0.75, y: -r * 0.75, width: r * 1.5, height: r * 1.5, ...paint });
  } else if (chip.symbol === "triangle") {
    shape("polygon", { points: `0,${-r} ${r * 0.95},${r * 0.7} ${-r * 0.95},${r * 0.7}`, ...paint });
  } else if (chip.symbol === "hexagon") {
    const pts = [0, 1, 2, 3, 4, 5].map((k) => `${(r * Math.cos((Math.PI / 3) * k)).toFixed(2)},${(r * Math.sin((Math.PI / 3) * k)).toFixed(2)}`);
    shape("polygon", { points: pts.join(" "), ...paint });
  } else {
    shape("circle", { r: r * 0.8, fill: "none", stroke: FILL[chip.colour] || "#555", "stroke-width": 3,
                      "stroke-dasharray": "4 3" });
  }
  return svg;
}

// The board on a page: its picture, the target ring, the chip face up on the
// centrepiece, the robots, and the ways to move them.
export class BoardView {
  constructor(el, board, { onSelect, onMove }) {
    this.el = el;
    this.board = board;
    this.onSelect = onSelect;
    this.onMove = onMove;
    this.robots = {};
    const { width, height } = board;
    this.size = [width * CELL + 2 * MARGIN, height * CELL + 2 * MARGIN];
    this.goal = this.layer("goal");
    this.chip = this.layer("centre-chip");
    this.chip.hidden = true;
    this.pointer();
  }

  layer(className) {
    const el = document.createElement("div");
    el.className = className;
    el.setAttribute("aria-hidden", "true");
    this.el.append(el);
    return el;
  }

  // Cells [x0, y0] to [x1, y1] (inclusive) as a box in percent of the picture,
  // `grow` pixels larger on every side.
  box(el, [x0, y0], [x1, y1] = [x0, y0], grow = 0) {
    const [w, h] = this.size;
    const at = (pct, px) => (px ? `calc(${pct}% ${px > 0 ? "+" : "-"} ${Math.abs(px)}px)` : `${pct}%`);
    el.style.left = at((100 * (MARGIN + x0 * CELL)) / w, -grow);
    el.style.top = at((100 * (MARGIN + y0 * CELL)) / h, -grow);
    el.style.width = at((100 * (x1 - x0 + 1) * CELL) / w, 2 * grow);
    el.style.height = at((100 * (y1 - y0 + 1) * CELL) / h, 2 * grow);
  }

  setRobots(colours) {
    for (const colour of colours) {
      if (this.robots[colour]) continue;
      const robot = this.layer(`robot ${colour}`);
      robot.dataset.colour = colour;
      const disc = document.createElement("span");
      disc.className = "disc";
      disc.textContent = String(keyOf(colour));
      robot.append(disc);
      this.robots[colour] = robot;
    }
  }

  place(colour, cell) {
    this.box(this.robots[colour], cell);
  }

  select(colour) {
    for (const [c, el] of Object.entries(this.robots)) el.classList.toggle("selected", c === colour);
  }

  // The target: a ring around its cell that leaves the symbol in view, and the
  // chip drawn large on the centrepiece (where the printed game lays it).
  setGoal(cell, chip) {
    this.box(this.goal, cell, cell, 4);  // the ring lies outside the cell: its symbol stays in view
    this.goal.dataset.cell = cell.join(",");
    const blocked = this.board.blocked || [];
    this.chip.replaceChildren();
    if (!blocked.length) {
      this.chip.hidden = true;
      return;
    }
    const xs = blocked.map((c) => c[0]), ys = blocked.map((c) => c[1]);
    this.box(this.chip, [Math.min(...xs), Math.min(...ys)], [Math.max(...xs), Math.max(...ys)]);
    this.chip.append(chipPicture(chip, "100%"));
    this.chip.hidden = false;
  }

  // The cell under a point of the screen, in cells (fractional).
  cellAt(clientX, clientY) {
    const rect = this.el.getBoundingClientRect(), [w, h] = this.size;
    return [((clientX - rect.left) * w) / rect.width / CELL - MARGIN / CELL,
            ((clientY - rect.top) * h) / rect.height / CELL - MARGIN / CELL];
  }

  // The robot nearest a point, if it is within a cell and a half of it: robots are
  // small on a phone, so a tap near one is enough.
  robotNear(clientX, clientY, cells) {
    const [px, py] = this.cellAt(clientX, clientY);
    let best = null, nearest = 1.5;
    for (const [colour, [x, y]] of Object.entries(cells)) {
      const d = Math.hypot(px - (x + 0.5), py - (y + 0.5));
      if (d < nearest) [best, nearest] = [colour, d];
    }
    return best;
  }

  // A tap on or near a robot chooses it; a swipe (from anywhere) moves the chosen
  // robot that way, and a swipe that starts on a robot chooses it first.
  pointer() {
    let from = null;
    this.el.addEventListener("pointerdown", (e) => {
      from = [e.clientX, e.clientY];
      const near = this.cells && this.robotNear(e.clientX, e.clientY, this.cells());
      if (near) this.onSelect(near);
    });
    this.el.addEventListener("pointerup", (e) => {
      if (!from) return;
      const dx = e.clientX - from[0], dy = e.clientY - from[1];
      from = null;
      if (Math.max(Math.abs(dx), Math.abs(dy)) < 20) return;
      this.onMove(Math.abs(dx) > Math.abs(dy) ? (dx > 0 ? 1 : 3) : (dy > 0 ? 2 : 0));
    });
    this.el.addEventListener("pointercancel", () => { from = null; });
  }
}

// The buttons beside the board: one per robot (its key, colour and name), and
// four arrows that move the chosen robot.
export function chooserButton(colour, onClick) {
  const chooser = document.createElement("button");
  chooser.type = "button";
  chooser.className = `chooser ${colour}`;
  chooser.dataset.colour = colour;
  chooser.setAttribute("aria-keyshortcuts", String(keyOf(colour)));
  const key = document.createElement("kbd"), name = document.createElement("span");
  key.textContent = String(keyOf(colour));
  name.className = "name";
  name.textContent = t(`colour.${colour}`);
  chooser.append(key, " ", name);  // its name is what it shows (in a group named "Robots")
  chooser.addEventListener("click", onClick);
  return chooser;
}

export function arrowPad(el, onMove) {
  const keys = ["ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft"];
  el.replaceChildren(...[3, 0, 2, 1].map((d) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `arrow arrow-${NAMES[d]}`;
    button.textContent = ARROWS[d];
    button.setAttribute("aria-label", t(`move.${NAMES[d]}`));
    button.setAttribute("aria-keyshortcuts", keys[d]);
    button.addEventListener("click", () => onMove(d));
    return button;
  }));
}

// Marks the chosen robot everywhere it is shown.
export function showChosen(colour) {
  for (const el of document.querySelectorAll(".chooser[data-colour]")) {
    el.setAttribute("aria-pressed", String(el.dataset.colour === colour));
  }
}

export const pause = (ms) => new Promise((done) => setTimeout(done, ms));
