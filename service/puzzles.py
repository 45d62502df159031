"""Boards and puzzles: boards, puzzles by code (JSON and pictures), hints, difficulty and
random puzzles."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace

from flask import Blueprint, Response, current_app, jsonify, request

from solver.board import EDITIONS, all_boards, real_board, sections
from solver.geometry import DEFLECT
from solver.interop import driftingdroids_id
from solver.production.difficulty import difficulty
from solver.production.generate import MAX_LENGTH, generate
from solver.puzzle import Puzzle
from solver.solution import Solution, hint
from solver.svg import board_svg, puzzle_svg
from workers.schemas import load

from .caching import cached
from .common import SVG, answers, pools, puzzle_from, query_choice
from .errors import Problem, json_body
from .pictures import PNG, picture
from .schemas import HintQuery, RandomQuery

bp = Blueprint("puzzles", __name__)

RANDOM_QUERY = RandomQuery()  # schemas are stateless: one instance serves every request
HINT_QUERY = HintQuery()


@bp.get("/v1/boards")
def boards() -> Response:
    """
    ---
    get:
      operationId: listBoards
      summary: Editions, their board counts and the 16 quadrant sections
      responses:
        '200':
          description: Editions and sections
          headers:
            ETag: ETag
            Cache-Control: CacheControl
          content: {application/json: {schema: Boards}}
        '304': NotModified
    """
    return cached(jsonify(
        editions={e: {"boards": sum(1 for _ in all_boards(e)),
                      "sections": [s for s in sections() if e == "2013" or s[-1] in "AB"]}
                  for e in EDITIONS},
        sections=[{"id": s["id"], "colour_marking": s["colour_marking"], "has_vortex": s["has_vortex"],
                   "has_diagonals": s["has_diagonals"]} for s in sections().values()],
        example="green-A,yellow-B,red-B,blue-B",
    ))


@bp.get("/v1/boards/<spec>")
def board(spec: str) -> Response:
    """
    ---
    get:
      operationId: getBoard
      summary: An assembled real board as JSON, or its picture when the spec ends in `.svg` or `.png`
      parameters:
      - name: spec
        in: path
        required: true
        description: Four section ids clockwise from the top-left, e.g. `green-A,yellow-B,red-B,blue-B`, optionally
          followed by `.svg` or `.png`
        schema: {type: string}
      - name: tables
        in: query
        required: false
        description: 'true adds `steps` (per direction N E S W, per cell index y * width + x: the next cell,
          or -1 where a wall or the edge stops a robot) and `barriers` (cell index -> colour and orientation)
          and `deflect` (the direction a barrier turns a robot to, by orientation and direction), enough for
          a client to slide robots itself'
        schema: {type: boolean}
      responses:
        '200':
          description: The board (pictures carry an ETag and Cache-Control public, immutable)
          headers:
            ETag: ETag
            Cache-Control: CacheControl
          content:
            application/json: {schema: BoardObject}
            image/svg+xml: {schema: {type: string}}
            image/png: {schema: {type: string, format: binary}}
        '304': NotModified
        '400': {$ref: '#/components/responses/Problem'}
    """
    for suffix, mimetype in ((".svg", SVG), (".png", PNG)):
        if spec.endswith(suffix):
            return picture(board_svg(real_board(spec[:-4])), mimetype)
    b = real_board(spec)
    body = b.to_object()
    if query_choice("tables", ("true", "false")) == "true":
        # What a client needs to slide robots itself (the web page does): the next
        # cell from each cell in each direction (N E S W, -1 where a wall stops
        # it), and the diagonal barriers by cell index.
        body["steps"] = [list(row) for row in b.steps]
        body["barriers"] = {str(i): {"colour": d.colour, "orientation": d.orientation} for i, d in b.barriers.items()}
        body["deflect"] = {k: list(v) for k, v in DEFLECT.items()}  # new direction by barrier and old direction
    return cached(jsonify(body))


@bp.get("/v1/puzzles/<code>")
def puzzle(code: str) -> Response:
    r"""
    ---
    get:
      operationId: getPuzzle
      summary: A puzzle from its code, or its picture when the code ends in `.svg` or `.png`
      parameters:
      - name: code
        in: path
        required: true
        description: A puzzle code (URL-safe base64), optionally followed by `.svg` or `.png`
        schema: {type: string, pattern: '^[A-Za-z0-9_-]+(\.(svg|png))?$'}
      - name: solution
        in: query
        required: false
        description: With `.svg` or `.png`, `true` draws an optimal solution's moves
        schema: {type: string, enum: ['true', 'false']}
      responses:
        '200':
          description: The puzzle (FORMATS.md form plus `code`, `hash` and `driftingdroids_id`), or its picture
            (with an ETag and Cache-Control public, immutable)
          headers:
            ETag: ETag
            Cache-Control: CacheControl
          content:
            application/json: {schema: PuzzleByCode}
            image/svg+xml: {schema: {type: string}}
            image/png: {schema: {type: string, format: binary}}
        '304': NotModified
        '400': {$ref: '#/components/responses/Problem'}
    """
    drawn = query_choice("solution", ("true", "false")) == "true"  # pictures only
    for suffix, mimetype in ((".svg", SVG), (".png", PNG)):
        if code.endswith(suffix):
            p = Puzzle.from_code(code[:-4])
            known = answers().settled(p) if drawn else None
            solution = known.moves if known is not None and known.status == "optimal" else None
            return picture(puzzle_svg(p, solution), mimetype)
    p = Puzzle.from_code(code)
    return cached(jsonify({**p.to_json(), "code": p.code(), "hash": p.content_hash(),
                           "driftingdroids_id": driftingdroids_id(p)}))


@bp.get("/v1/puzzles/<code>/hint")
def puzzle_hint(code: str) -> Response:
    """A hint from the optimal solution the API serves for this puzzle.

    ---
    get:
      operationId: puzzleHint
      summary: A hint for any puzzle by its code (daily, pack item, random), levels 1 to 4
      parameters:
      - name: code
        in: path
        required: true
        description: a puzzle code (URL-safe base64)
        schema: {type: string, pattern: '^[A-Za-z0-9_-]+$'}
      - HintLevel
      responses:
        '200':
          description: The hint
          headers:
            ETag: ETag
            Cache-Control: CacheControl
          content: {application/json: {schema: CodedHint}}
        '304': NotModified
        '400': {$ref: '#/components/responses/Problem'}
        '422':
          description: 'No hint: the puzzle has no solution, or its optimal solution takes longer than a request
            may search (POST /v1/solve queues that search; hints follow)'
          content: {application/problem+json: {schema: Problem}}
    """
    level = load(HINT_QUERY, request.args.to_dict())["level"]
    p = Puzzle.from_code(code)
    known = answers().settled(p)
    if known is not None and known.status == "unsolvable":
        raise Problem("unsolvable", "the puzzle has no solution, so there is no hint")
    if known is None:
        raise Problem("needs-a-job", "the optimal solution is not known yet (it takes longer than a request "
                      "may search): POST /v1/solve queues the search, and hints follow once it is solved")
    return cached(jsonify({"code": p.code(), **hint(known.moves, level)}))


@bp.post("/v1/difficulty")
def rate() -> Response:
    """
    ---
    post:
      operationId: difficulty
      summary: A puzzle's difficulty report (optimal length, robots moved, solutions, score, grade)
      requestBody:
        required: true
        content:
          application/json: {schema: {$ref: '#/components/schemas/PuzzleRef'}}
      responses:
        '200':
          description: The report
          content: {application/json: {schema: Difficulty}}
        '400': {$ref: '#/components/responses/Problem'}
        '422': {$ref: '#/components/responses/Problem'}
    """
    p = puzzle_from(json_body())
    found, _ = answers().lookup(p)
    if found["length"] is None:
        if found["status"] == "unsolvable":
            raise Problem("unsolvable", "the puzzle has no solution, so it has no difficulty")
        raise Problem("needs-a-job", f"the puzzle needs more than {found['lower_bound'] - 1} moves; solve it first "
                      "with POST /v1/solve")
    answer = Solution.from_json(p, found)
    return jsonify({**difficulty(p, answer, time_budget=current_app.config["SOLVE_TIME_BUDGET"]),
                    "code": p.code()})


RANDOM_TIME_BUDGET = 10.0  # seconds a random-puzzle request may take, answer included
RANDOM_SEARCH_BUDGET = RANDOM_TIME_BUDGET - 1.0  # the search stops early enough to answer within it


# Lengths to try for each grade; the grade of each find is checked before it is served.
GRADE_LENGTHS = {"beginner": (2, 3), "easy": (3, 5), "medium": (5, 8), "hard": (7, 10), "expert": (9, 13),
                 "extreme": (12, 16)}


@bp.get("/v1/puzzles/random")
def random_puzzle() -> Response:
    """
    ---
    get:
      operationId: randomPuzzle
      summary: A generated puzzle of an exact optimal length, or of a difficulty grade
      parameters:
      - {in: query, schema: RandomQuery}
      responses:
        '200':
          description: The puzzle with its solution and difficulty report
          content: {application/json: {schema: RandomPuzzle}}
        '400': {$ref: '#/components/responses/Problem'}
        '422': {$ref: '#/components/responses/Problem'}
    """
    query = load(RANDOM_QUERY, request.args.to_dict())
    length, grade, robots, board = query.get("length"), query.get("grade"), query["robots"], query["board"]
    seed = query.get("seed") or uuid.uuid4().hex
    if (length is None) == (grade is None):
        raise Problem("invalid-input", "give exactly one of length or grade", field="length")
    if length is not None and not 2 <= length <= MAX_LENGTH:
        raise Problem("out-of-range", f"no fair puzzle has {length} moves: ask for a length from 2 to "
                      f"{MAX_LENGTH} (a round solved in one move is void)", field="length")
    if length is not None:
        g = generate(length, board=board, robots=robots, seed=seed, time_budget=RANDOM_SEARCH_BUDGET,
                     pools=pools())
    else:
        lo, hi = GRADE_LENGTHS[grade]
        deadline = time.monotonic() + RANDOM_SEARCH_BUDGET
        for attempt in range(40):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Problem("no-puzzle-found", f"no {grade} puzzle found in time for this seed; try another seed")
            g = generate(min_length=lo, max_length=hi, board=board, robots=robots, seed=f"{seed}:{attempt}",
                         time_budget=remaining, pools=pools())
            if g.difficulty["grade"] == grade:
                break
        else:
            raise Problem("no-puzzle-found", f"no {grade} puzzle found for this seed; try another seed")
    # One solution per puzzle: the one the hints and a solve will show too.
    served = answers().adopt(g.puzzle, g.solution)
    if served.moves != g.solution.moves:
        g = replace(g, solution=served, difficulty=difficulty(g.puzzle, served,
                                                              time_budget=current_app.config["SOLVE_TIME_BUDGET"]))
    return jsonify({**g.to_json(), "seed": seed})
