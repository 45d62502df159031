"""Schemas (marshmallow) for API bodies and queries; puzzles themselves are
checked by solver.model.puzzle, which names the bad field the same way."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from application.puzzles import SOLUTIONS_LIMIT
from application.ratings import OFFSETS
from solver.model.board import BoardKind
from solver.model.puzzle import Ricochet
from solver.production.difficulty import GRADES
from solver.production.generate import MAX_LENGTH
from solver.production.themes import THEMES
from workers.schemas import text

from .requests import up_to
from .shapes import Move

PLAYER_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
PLAYER_RULE = "must be 1 to 64 letters, digits, '_' or '-' (the app's own id for its player)"


def player_field(**kwargs: object) -> fields.String:
    return fields.String(validate=validate.Regexp(PLAYER_PATTERN, error=PLAYER_RULE), metadata={
        "description": "the app's own id for its player (1-64 of A-Z a-z 0-9 _ -), scoped to the API key sent "
                       "(without a key, the public scope)"}, **kwargs)


class VerifyRequest(Schema):
    """POST /v1/verify: {"puzzle": {...} or {"code": ...}, "moves": [...], "player"?: id}."""

    class Meta:
        unknown = RAISE

    puzzle = fields.Dict(required=True, metadata={"shape": {"$ref": "#/components/schemas/PuzzleRef"}},
                         error_messages={"invalid": "must be a docs/formats.md puzzle or {{\"code\": ...}}"})
    moves = fields.List(fields.Raw(metadata={"shape": Move}), required=True, validate=validate.Length(max=1000),
                        error_messages={"invalid": "must be a list of moves like {{\"robot\": \"red\", "
                                                   "\"direction\": \"N\"}}"})
    player = player_field()


class JsonBoolean(fields.Boolean):
    """A JSON true or false, nothing else (marshmallow's takes 1, "yes", "on", ...)."""

    def _deserialize(self, value: object, attr: str | None, data: object, **kwargs: object) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class VoteRequest(Schema):
    """POST /v1/puzzles/{code}/vote: {"player": id, "up": true or false}."""

    class Meta:
        unknown = RAISE

    player = player_field(required=True)
    up = JsonBoolean(required=True, error_messages={"invalid": "must be true or false"})


class NextQuery(Schema):
    """GET /v1/puzzles/next: whose next puzzle, how hard, and of which theme."""

    class Meta:
        unknown = RAISE

    player = player_field(required=True)
    difficulty = fields.String(load_default="normal", validate=validate.OneOf(
        list(OFFSETS), error=f"must be one of {', '.join(OFFSETS)}"), metadata={
        "description": "the rating looked for: the player's, 600 or 300 below (easiest, easier) or above (harder, "
                       "hardest)"})
    theme = fields.String(validate=validate.OneOf(list(THEMES), error="must be one of the themes in "
                                                  "docs/ratings.md: " + ", ".join(THEMES)))
    solution = fields.Boolean(load_default=True, error_messages={"invalid": "must be true or false"}, metadata={
        "description": "false leaves the solution out and opens a round: the player's first answer within it is "
                       "rated (docs/ratings.md); true (the default) gives it, and the attempt is recorded unrated"})


class ExportQuery(Schema):
    """GET /v1/puzzles/export: which puzzles, in which format."""

    class Meta:
        unknown = RAISE

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


class SolutionsQuery(Schema):
    """GET /v1/puzzles/{code}/solutions: how many to list."""

    class Meta:
        unknown = RAISE

    limit = up_to(SOLUTIONS_LIMIT)


class RandomQuery(Schema):
    """GET /v1/puzzles/random: exactly one of length or grade."""

    class Meta:
        unknown = RAISE

    # 2..MAX_LENGTH is checked by the view: beyond it is 422 (out of range), not 400
    length = fields.Integer(error_messages={"invalid": "must be an integer"}, metadata={
        "minimum": 2, "maximum": MAX_LENGTH,
        "description": "from 21 moves on, puzzles come from the bank of verified long puzzles; 422 when it has none"})
    grade = fields.String(validate=validate.OneOf(GRADES, error=f"must be one of {', '.join(GRADES)}"))
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


class PictureQuery(Schema):
    """POST /v1/pictures: which format, and whether to draw the solution."""

    class Meta:
        unknown = RAISE

    format = fields.String(load_default="svg", validate=validate.OneOf(["svg", "png"], error="must be svg or png"))
    solution = fields.Boolean(load_default=False, error_messages={"invalid": "must be true or false"},
                              metadata={"description": "draw an optimal solution, when one is known or found "
                                                       "within the request's search budget"})
