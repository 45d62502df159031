"""Schemas (marshmallow) for API bodies and queries; puzzles themselves are
checked by solver.puzzle, which names the bad field the same way."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from solver.production.difficulty import GRADES


class VerifyRequest(Schema):
    """POST /v1/verify: {"puzzle": {...} or {"code": ...}, "moves": [...]}."""

    class Meta:
        unknown = RAISE

    puzzle = fields.Dict(required=True, error_messages={"invalid": "must be a FORMATS.md puzzle or {{\"code\": ...}}"})
    moves = fields.List(fields.Raw(), required=True, validate=validate.Length(max=1000),
                        error_messages={"invalid": "must be a list of moves like {{\"robot\": \"red\", "
                                                   "\"direction\": \"N\"}}"})


class RandomQuery(Schema):
    """GET /v1/puzzles/random: exactly one of length or grade."""

    class Meta:
        unknown = RAISE

    length = fields.Integer(error_messages={"invalid": "must be an integer"})
    grade = fields.String(validate=validate.OneOf(GRADES, error=f"must be one of {', '.join(GRADES)}"))
    robots = fields.Integer(load_default=4, validate=validate.OneOf([4, 5], error="must be 4 or 5"),
                            error_messages={"invalid": "must be 4 or 5"})
    seed = fields.String(validate=validate.Length(1, 100, error="must be 1 to 100 characters"))
    board = fields.String(load_default="random-2013", validate=validate.Length(max=200))


class SheetQuery(Schema):
    """GET /v1/packs/{id}.svg: which sheet, and whether to draw the solutions."""

    class Meta:
        unknown = RAISE

    page = fields.Integer(load_default=1, validate=validate.Range(1, 1000, error="must be from 1 to 1000"),
                          error_messages={"invalid": "must be an integer"})
    solution = fields.Boolean(load_default=False, error_messages={"invalid": "must be true or false"})


class ArchiveQuery(Schema):
    """GET /v1/daily/archive: which published days, a page at a time."""

    class Meta:
        unknown = RAISE

    from_ = fields.Date(data_key="from", attribute="from", error_messages={"invalid": "must be a date, YYYY-MM-DD"})
    to = fields.Date(error_messages={"invalid": "must be a date, YYYY-MM-DD"})
    limit = fields.Integer(load_default=100, validate=validate.Range(1, 366, error="must be from 1 to 366"),
                           error_messages={"invalid": "must be an integer"})


class HintQuery(Schema):
    """GET .../hint: how much to tell (1 length, 2 robot count, 3 robots, 4 first move)."""

    class Meta:
        unknown = RAISE

    level = fields.Integer(load_default=1, validate=validate.Range(1, 4, error="must be from 1 to 4"),
                           error_messages={"invalid": "must be an integer from 1 to 4"})
