// One puzzle played alone, as the play page and the embeddable puzzle both play
// it: the board drawn (BoardView), a robot chosen and slid, undo and reset, the
// answer judged by POST /v1/verify when the active robot reaches the target, and
// the solution shown move by move.  The page around it decides what an ending
// means (records, a result card, messages to a parent page) through `onEnd`.
//
// It writes into the elements of these ids, where the page has them: board,
// board-image, robots, arrows, count, best, status, goal, goal-chip, goal-text,
// board-words.

import { BoardView, COLOURS, DIRS, NAMES, arrowPad, chipName, chipPicture, chooserButton, colourOfKey, goalCell,
         inWords, pause, showChosen, slide, whoName } from "./board.js";
import { capital, t } from "./i18n.js";
import { api, problemText } from "./net.js";

const $ = (id) => document.getElementById(id);

export class Solo {
  // found: a puzzle as the API gives it (FORMATS.md form and `code`); board: its
  // board with step tables; optimal: its optimal length if known; player: the id
  // whose answers are rated; solution: an async function giving the moves of an
  // optimal solution; onReveal(attempt) as soon as the solution is given (before
  // it is played: a reload then cannot hide it); onEnd(attempt, verdict) once it
  // is solved, or shown; onMove(moves) after each move.
  constructor(found, board, { optimal = null, player = null, solution, onReveal = () => {}, onEnd = () => {},
                              onMove = () => {} }) {
    this.puzzle = { board: found.board, robots: found.robots, target: found.target, rules: found.rules };
    this.code = found.code;
    this.board = board;
    this.optimal = optimal;
    this.player = player;
    this.solution = solution;
    this.onReveal = onReveal;
    this.onEnd = onEnd;
    this.onMove = onMove;
    this.start = Object.fromEntries(Object.entries(found.robots).map(([c, cell]) => [c, [...cell]]));
    this.goal = goalCell(board, this.puzzle.target);
    this.chip = { ...this.puzzle.target, colour: this.puzzle.target.colour || null };
    this.busy = false;
    this.revealed = false;
    this.revealing = false;
    this.hints = 0;
    this.seconds = 0;
    this.draw();
  }

  draw() {
    this.view = new BoardView($("board"), this.board, { onSelect: (c) => this.select(c), onMove: (d) => this.go(d) });
    this.view.cells = () => this.cells;
    this.view.setGoal(this.goal, this.chip);
    $("board-image").src = `/v1/boards/${encodeURIComponent(this.puzzle.board)}.svg`;
    $("board-image").alt = t("board.alt", { spec: this.puzzle.board });
    $("board").dataset.code = this.code;
    this.describeGoal();
    const colours = COLOURS.filter((c) => c in this.start);
    this.view.setRobots(colours);
    $("robots").replaceChildren(...colours.map((colour) => chooserButton(colour, () => this.select(colour))));
    arrowPad($("arrows"), (d) => this.go(d));
    this.reset();
    const target = this.chip.colour;
    this.select(target && colours.includes(target) ? target : colours[0]);
  }

  describeGoal() {
    const where = { who: whoName(this.chip), chip: chipName(this.chip) };
    $("goal-chip").replaceChildren(chipPicture(this.chip, 28));
    $("goal-text").textContent = this.optimal ? t("goal.in", { ...where, n: this.optimal }) : t("goal", where);
    if ($("best")) $("best").textContent = this.optimal ? ` / ${this.optimal}` : "";
  }

  // The board in words, kept up to date as the robots move.
  describe() {
    if (!$("board-words")) return;
    $("board-words").replaceChildren(...inWords(this.cells, this.chip, this.goal, this.board).map((line) => {
      const li = document.createElement("li");
      li.textContent = line;
      return li;
    }));
  }

  placeAll() {
    for (const [c, cell] of Object.entries(this.cells)) this.view.place(c, cell);
    this.describe();
  }

  reset(text = "") {
    if (this.busy) return;
    this.cells = Object.fromEntries(Object.entries(this.start).map(([c, cell]) => [c, [...cell]]));
    this.moves = [];
    this.history = [];
    this.placeAll();
    this.say(text);
    this.onMove([]);
  }

  undo() {
    if (!this.history.length || this.busy) return;
    this.cells = this.history.pop();
    this.moves.pop();
    this.placeAll();
    this.say("");
    this.onMove(this.moves.slice());
  }

  // Moves made before (kept over a reload), made again at once; an illegal one ends it.
  replay(moves) {
    for (const m of moves) {
      const path = slide(this.board, this.cells, m.robot, NAMES.indexOf(m.direction));
      if (!path) break;
      this.history.push(this.cells);
      this.moves.push({ robot: m.robot, direction: m.direction });
      this.cells = { ...this.cells, [m.robot]: path[path.length - 1] };
    }
    this.placeAll();
    this.say("");
    this.onMove(this.moves.slice());
  }

  select(colour) {
    this.selected = colour;
    this.view.select(colour);
    showChosen(colour);
  }

  say(text, className = "") {
    $("count").textContent = this.moves.length;
    if ($("check-again")) $("check-again").hidden = true;
    if (text !== undefined) {
      $("status").textContent = text;
      $("status").className = className;
    }
  }

  // The keys every solo page shares: 1-5 choose a robot by colour, arrows move it,
  // U or Backspace undoes, R resets (letters by their place on the keyboard, so
  // that a Russian or German layout works alike).  True when the key was one of these.
  key(event) {
    const chosen = colourOfKey(event.key);
    if (/^[1-5]$/.test(event.key) && chosen in this.cells) this.select(chosen);
    else if (event.key in DIRS) this.go(DIRS[event.key]);
    else if (event.code === "KeyU" || event.key === "Backspace") this.undo();
    else if (event.code === "KeyR") this.reset(t("back_to_start"));
    else return false;
    return true;
  }

  go(direction) {
    if (this.selected && !this.busy) this.move(this.selected, direction);
  }

  async move(colour, direction) {
    const path = slide(this.board, this.cells, colour, direction);
    if (!path) {
      this.say(capital(t("cannot_move", { robot: t(`robot.${colour}`), dir: t(`dir.${NAMES[direction]}`) })));
      return false;
    }
    this.history.push(this.cells);
    this.moves.push({ robot: colour, direction: NAMES[direction] });
    this.cells = { ...this.cells, [colour]: path[path.length - 1] };
    this.say("");
    this.onMove(this.moves.slice());  // kept at once: a reload during the slide keeps the move
    for (const cell of path) {  // cell by cell: a bounce off a barrier shows as a turn
      this.view.place(colour, cell);
      await pause(26);
    }
    this.describe();
    const [gx, gy] = this.goal, [x, y] = path[path.length - 1];
    const target = this.puzzle.target.colour;
    if (x === gx && y === gy && (!target || target === colour) && !this.revealing) await this.reached();
    return true;
  }

  // The active robot is on the target: the server judges the answer (rated for the
  // player, unless the solution was shown).
  async reached() {
    const moves = this.moves.slice();
    try {
      const rated = this.player && !this.revealed ? { player: this.player } : {};
      const v = await api("POST", "/v1/verify", { puzzle: this.puzzle, moves, ...rated });
      if (!v.solved) return this.say(t("not_solved"));
      this.optimal = v.optimal_length ?? this.optimal;
      this.say(v.optimal ? t("solved.optimal", { n: v.length }) : t("solved", { n: v.length }),
               v.optimal ? "success optimal" : "success");
      this.onEnd({ result: this.revealed ? "revealed" : "solved", moves: v.length, optimal: this.optimal,
                   hints: this.hints, seconds: this.seconds, robots: moves.map((m) => m.robot), path: moves }, v);
    } catch (err) {
      this.say(t("check_failed", { error: problemText(err) }));
      this.checkAgain(moves);
    }
  }

  // A check that failed (offline, the server busy) is offered again, and made
  // again by itself when the browser is back online, while the robots still stand so.
  checkAgain(moves) {
    const button = $("check-again");
    const again = () => {
      if (button) button.hidden = true;
      window.removeEventListener("online", again);
      if (JSON.stringify(this.moves) === JSON.stringify(moves)) this.reached();
    };
    if (button) {
      button.hidden = false;
      button.onclick = again;
    }
    window.addEventListener("online", again);
  }

  // The solution, played from the start; the ending is "revealed".
  async reveal() {
    if (this.busy) return;
    this.busy = true;
    try {
      const moves = await this.solution();
      this.optimal = moves.length;
      const first = !this.revealed;
      const attempt = { result: "revealed", moves: null, optimal: moves.length, hints: this.hints,
                        seconds: this.seconds, robots: [], path: moves };
      this.revealed = true;
      if (first) this.onReveal(attempt);
      this.revealing = true;
      this.busy = false;
      this.reset(t("solution.shown", { n: moves.length }));
      this.busy = true;
      for (const m of moves) {
        await this.move(m.robot, NAMES.indexOf(m.direction));
        await pause(220);
      }
      this.say(t("solution.shown", { n: moves.length }));
      await pause(300);
      this.onEnd(attempt, null);
    } catch (err) {
      this.say(t("solution.none", { error: problemText(err) }));
    } finally {
      this.busy = false;
      this.revealing = false;
    }
  }
}
