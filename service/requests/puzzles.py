"""Puzzles' requests: a board or a puzzle in the path, their pictures, random
puzzles, solutions, the export, pictures of a puzzle sent in the body."""

from __future__ import annotations

from marshmallow import fields, validate

from application.puzzles import SOLUTIONS_LIMIT
from solver.model.board import BoardKind
from solver.model.puzzle import Ricochet
from solver.production.difficulty import GRADES
from solver.production.generate import MAX_LENGTH
from solver.production.themes import THEMES
from workers.schemas import text

from . import Lenient, Strict, code, true_or_false, up_to


class BoardPath(Strict):
    spec = fields.String(required=True, metadata={
        "description": "Four section ids clockwise from the top-left, e.g. `green-A,yellow-B,red-B,blue-B`, "
                       "optionally followed by `.svg` or `.png`"})


class BoardQuery(Lenient):
    tables = true_or_false(load_default=False, metadata={
        "description": "true adds `steps` (per direction N E S W, per cell index y * width + x: the next cell, or -1 "
                       "where a wall or the edge stops a robot) and `barriers` (cell index -> colour and "
                       "orientation) and `deflect` (the direction a barrier turns a robot to, by orientation and "
                       "direction), enough for a client to slide robots itself"})


class PuzzlePath(Strict):
    code = code("A puzzle code (URL-safe base64), optionally followed by `.svg` or `.png`",
                r"^[A-Za-z0-9_-]+(\.(svg|png))?$")


class PuzzleQuery(Lenient):
    # Documented as it always was (a string, true or false), so that typed clients keep their types.
    solution = true_or_false(load_default=False, metadata={
        "description": "With `.svg` or `.png`, `true` draws an optimal solution's moves", "type": "string",
        "enum": ["true", "false"], "default": "false"})


class ExportQuery(Strict):
    """GET /v1/puzzles/export: which puzzles, in which format."""

    format = fields.String(load_default="ndjson", validate=validate.OneOf(["csv", "ndjson"],
                                                                          error="must be csv or ndjson"))
    min_length = fields.Integer(load_default=2, validate=validate.Range(2, MAX_LENGTH, error="must be from 2 to "
                                                                         f"{MAX_LENGTH}"),
                                error_messages={"invalid": "must be a whole number"})
    max_length = fields.Integer(load_default=MAX_LENGTH, validate=validate.Range(2, MAX_LENGTH, error="must be "
                                                                                 f"from 2 to {MAX_LENGTH}"),
                                error_messages={"invalid": "must be a whole number"})
    robots = fields.Integer(validate=validate.OneOf([4, 5], error="must be 4 or 5"),
                            error_messages={"invalid": "must be 4 or 5"})
    ricochet = fields.String(validate=validate.OneOf(Ricochet.options(), error="must be turn or none"))
    source = fields.String(validate=validate.Regexp(r"^(bank|daily|pools)(,(bank|daily|pools))*$",
                                                    error="must be bank, daily or pools, or several joined by ','"),
                           metadata={"description": "only these sources, joined by ',' (default all)"})


class SolutionsQuery(Strict):
    """GET /v1/puzzles/{code}/solutions: how many to list."""

    limit = up_to(SOLUTIONS_LIMIT)


class RandomQuery(Strict):
    """GET /v1/puzzles/random: exactly one of length or grade, or a theme (with or without a length)."""

    # 2..MAX_LENGTH is checked by the view: beyond it is 422 (out of range), not 400
    length = fields.Integer(error_messages={"invalid": "must be an integer"}, metadata={
        "minimum": 2, "maximum": MAX_LENGTH,
        "description": "from 21 moves on, puzzles come from the bank of verified long puzzles; 422 when it has none"})
    grade = fields.String(validate=validate.OneOf(GRADES, error=f"must be one of {', '.join(GRADES)}"))
    theme = fields.String(validate=validate.OneOf(list(THEMES), error="must be one of the themes in "
                                                  "GET /v1/themes"), metadata={
        "description": "a puzzle with this theme from the library (GET /v1/themes), alone or with `length`; "
                       "4 robots; 422 when the library holds none that fits"})
    robots = fields.Integer(load_default=4, validate=validate.OneOf([4, 5], error="must be 4 or 5"),
                            error_messages={"invalid": "must be 4 or 5"})
    seed = fields.String(validate=[validate.Length(1, 100, error="must be 1 to 100 characters"), text],
                         metadata={"description": "same seed, same puzzle"})
    board = fields.String(load_default=BoardKind.RANDOM_2013.value, validate=validate.Length(max=200),
                          metadata={"description": "a board spec, random-2013 (default), random-1999 or "
                                                   "random-beginner"})
    solution = fields.Boolean(load_default=True, error_messages={"invalid": "must be true or false"}, metadata={
        "description": "false leaves the solution out and opens a round for this client: a player's first answer "
                       "within it is rated (docs/ratings.md); true (the default) gives it, and answers from this "
                       "client are recorded unrated"})


class PictureQuery(Strict):
    """POST /v1/pictures: which format, and whether to draw the solution."""

    format = fields.String(load_default="svg", validate=validate.OneOf(["svg", "png"], error="must be svg or png"))
    solution = fields.Boolean(load_default=False, error_messages={"invalid": "must be true or false"},
                              metadata={"description": "draw an optimal solution, when one is known or found "
                                                       "within the request's search budget"})
