"""Boards and puzzles: boards, puzzles by code (JSON and pictures), hints, difficulty and
random puzzles."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app

from application import Problem, puzzles, ratings
from application import export as exported
from solver.formats.driftingdroids import driftingdroids_id
from solver.formats.svg import board_svg, puzzle_svg
from solver.model.board import EDITIONS, all_boards, real_board, sections
from solver.model.geometry import DEFLECT
from solver.model.puzzle import Puzzle
from solver.production.export import SOURCES, Filter

from . import limits
from .caching import MINUTE
from .common import PUZZLE, SVG, answers, context
from .declare import Reply, operation
from .pictures import PNG, picture
from .requests import CodePath, HintQuery
from .requests.players import NextQuery, VoteRequest
from .requests.puzzles import (
    BoardPath,
    BoardQuery,
    ExportQuery,
    PictureQuery,
    PuzzlePath,
    PuzzleQuery,
    RandomQuery,
    SolutionsQuery,
)
from .shapes import BoardObject, Boards, CodedHint, Difficulty, NextPuzzle, PuzzleByCode, RandomPuzzle, Solutions, Vote
from .shapes import Problem as ProblemShape

bp = Blueprint("puzzles", __name__)

EXPORT_HOLD = 300.0  # seconds an export's place is held at most (a whole export is about half a minute)
PICTURES = {SVG: {"schema": {"type": "string"}}, PNG: {"schema": {"type": "string", "format": "binary"}}}


@operation(bp, "get /v1/boards", "listBoards", tag="puzzles",
           summary="Editions, their board counts and the 16 quadrant sections",
           errors=(304,), replies={200: Reply("Editions and sections", Boards, cached=True)})
def boards() -> Any:
    return {"editions": {e: {"boards": sum(1 for _ in all_boards(e)),
                             "sections": [s for s in sections() if e == "2013" or s[-1] in "AB"]} for e in EDITIONS},
            "sections": [{"id": s["id"], "colour_marking": s["colour_marking"], "has_vortex": s["has_vortex"],
                          "has_diagonals": s["has_diagonals"]} for s in sections().values()],
            "example": "green-A,yellow-B,red-B,blue-B"}


@operation(bp, "get /v1/boards/<spec>", "getBoard", tag="puzzles", errors=(304, 400),
           summary="An assembled real board as JSON, or its picture when the spec ends in `.svg` or `.png`",
           path=BoardPath, query=BoardQuery,
           replies={200: Reply("The board (pictures carry an ETag and Cache-Control public, immutable)", BoardObject,
                               cached=True, media=PICTURES)})
def board(spec: str, query: dict[str, Any]) -> Any:
    for suffix, mimetype in ((".svg", SVG), (".png", PNG)):
        if spec.endswith(suffix):
            return picture(board_svg(real_board(spec[:-4])), mimetype)
    b = real_board(spec)
    body = b.to_object()
    if query["tables"]:
        # What a client needs to slide robots itself (the web page does).
        body["steps"] = [list(row) for row in b.steps]
        body["barriers"] = {str(i): {"colour": d.colour, "orientation": d.orientation} for i, d in b.barriers.items()}
        body["deflect"] = {k: list(v) for k, v in DEFLECT.items()}  # new direction by barrier and old direction
    return body


@operation(bp, "get /v1/puzzles/<code>", "getPuzzle", tag="puzzles", errors=(304, 400),
           summary="A puzzle from its code, or its picture when the code ends in `.svg` or `.png`",
           path=PuzzlePath, query=PuzzleQuery,
           replies={200: Reply("The puzzle (docs/formats.md form plus `code`, `hash` and `driftingdroids_id`; once its "
                               "optimum is known, its `rating`, `popularity` and `themes`), or its picture (with "
                               "an ETag and Cache-Control public, immutable)", PuzzleByCode,
                               cached=MINUTE, media=PICTURES)})
def puzzle(code: str, query: dict[str, Any]) -> Any:
    drawn = query["solution"]  # pictures only
    for suffix, mimetype in ((".svg", SVG), (".png", PNG)):
        if code.endswith(suffix):
            p = Puzzle.from_code(code[:-4])
            known = answers().settled(p) if drawn else None
            solution = known.moves if known is not None and known.status == "optimal" else None
            if solution is not None:
                ratings.reveal(context(), p)
            return picture(puzzle_svg(p, solution), mimetype)
    p = Puzzle.from_code(code)
    return {**p.to_json(), "code": p.code(), "hash": p.content_hash(), "driftingdroids_id": driftingdroids_id(p),
            **puzzles.about(context(), p)}


@operation(bp, "get /v1/puzzles/<code>/hint", "puzzleHint", tag="puzzles", errors=(304, 400),
           summary="A hint for any puzzle by its code (daily, pack item, random), levels 1 to 4",
           path=CodePath, query=HintQuery,
           replies={200: Reply("The hint", CodedHint, cached=True),
                    422: Reply("No hint: the puzzle has no solution, or its optimal solution takes longer than a "
                               "request may search (POST /v1/solve queues that search; hints follow)", ProblemShape,
                               content_type="application/problem+json")})
def puzzle_hint(code: str, query: dict[str, Any]) -> Any:
    return puzzles.puzzle_hint(context(), Puzzle.from_code(code), query["level"])


@operation(bp, "post /v1/difficulty", "difficulty", tag="puzzles", body=PUZZLE, searches=True, errors=(400, 422),
           summary="A puzzle's difficulty report (optimal length, robots moved, solutions, score, grade)",
           replies={200: Reply("The report", Difficulty)})
def rate(body: Puzzle) -> Any:
    return puzzles.rate(context(), body)


@operation(bp, "get /v1/puzzles/random", "randomPuzzle", tag="puzzles", query=RandomQuery, searches=True,
           summary="A generated puzzle of an exact optimal length, or of a difficulty grade", errors=(400, 422),
           description="Give exactly one of `length` and `grade`: neither, or both, is answered 400 naming them.",
           replies={200: Reply("The puzzle with its solution (unless solution=false) and difficulty report",
                               RandomPuzzle)})
def random_puzzle(query: puzzles.RandomQuery) -> Any:
    return puzzles.random_puzzle(context(), query)


@operation(bp, "get /v1/puzzles/next", "nextPuzzle", tag="players", query=NextQuery, searches=True,
           summary="A puzzle the player has not seen, near their rating; with its solution unless solution=false "
                   "(then a round: the player's first answer is rated)",
           errors=(400, 422, 503), replies={200: Reply("The puzzle, in GET /v1/puzzles/random's shape", NextPuzzle)})
def next_puzzle(query: dict[str, Any]) -> Any:
    return ratings.next_puzzle(context(), query["player"], query["difficulty"], query.get("theme"), query["solution"])


@operation(bp, "get /v1/puzzles/<code>/solutions", "puzzleSolutions", tag="puzzles", query=SolutionsQuery,
           searches=True, errors=(400, 422), summary="Every distinct optimal solution of a puzzle",
           path=CodePath,
           replies={200: Reply("How many there are, and the first `limit`", Solutions)})
def solutions(code: str, query: dict[str, Any]) -> Any:
    return puzzles.solutions(context(), Puzzle.from_code(code), query["limit"])


@operation(bp, "post /v1/puzzles/<code>/vote", "votePuzzle", tag="players", body=VoteRequest, errors=(400, 503),
           summary="A player's vote on a puzzle (a later vote replaces theirs): its popularity",
           path=CodePath,
           replies={200: Reply("The puzzle's popularity after the vote", Vote)})
def vote(code: str, body: dict[str, Any]) -> Any:
    return ratings.vote(context(), Puzzle.from_code(code), body["player"], body["up"])


@operation(bp, "get /v1/puzzles/export", "exportPuzzles", tag="puzzles", query=ExportQuery, errors=(400, 422, 503),
           summary="Every puzzle the deployment holds, once: code, position, optimal length, a solution, rating, "
                   "popularity, plays, themes (CSV or NDJSON, streamed; CC0)",
           replies={200: Reply("The puzzles, one per line (CSV with a header row)", None, media={
               "text/csv": {"schema": {"type": "string"}}, "application/x-ndjson": {"schema": {"type": "string"}}})})
def export(query: dict[str, Any]) -> Response:
    if query["min_length"] > query["max_length"]:
        raise Problem("out-of-range", "min_length must not exceed max_length", field="min_length")
    config = current_app.config
    give_back = limits.hold("export", config["EXPORTS_PER_CLIENT"], EXPORT_HOLD, "exports", config["EXPORTS_AT_ONCE"])
    room = current_app.extensions["exports"]
    if not room.acquire(blocking=False):
        give_back()
        raise Problem("unavailable", "an export is running on this server process; retry shortly",
                      headers={"Retry-After": "30"})
    wanted = Filter(query["min_length"], query["max_length"], query.get("robots"), query.get("ricochet"),
                    tuple(query["source"].split(",")) if "source" in query else SOURCES)

    def stream() -> Iterator[str]:  # runs after the view returned: no app context here
        try:
            yield from itertools.islice(exported.lines(ctx, query["format"], wanted), most)
        finally:
            room.release()
            give_back()

    ctx = context()
    most = current_app.config.get("EXPORT_LINES")  # tests cut the export short: a whole one is half a minute
    media = "text/csv" if query["format"] == "csv" else "application/x-ndjson"
    return Response(stream(), mimetype=media, headers={
        "Content-Disposition": f"attachment; filename=ricochet-puzzles.{query['format']}"})


@operation(bp, "post /v1/pictures", "drawPuzzle", tag="puzzles", body=PUZZLE, query=PictureQuery, errors=(400,),
           summary="A picture of any puzzle sent in the body (custom boards whose codes are too long for a URL)",
           replies={200: Reply("The picture: SVG, or PNG with ?format=png", media=PICTURES)})
def draw(body: Puzzle, query: dict[str, Any]) -> Response:
    known = answers().settled(body) if query["solution"] else None
    solution = known.moves if known is not None and known.status == "optimal" else None
    if solution is not None:
        ratings.reveal(context(), body)
    return picture(puzzle_svg(body, solution), PNG if query["format"] == "png" else SVG, "private, max-age=3600")
