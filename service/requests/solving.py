"""Solving's requests: a verify (a solve's body is a puzzle, checked by
solver.model.puzzle, which names the bad field the same way)."""

from __future__ import annotations

from marshmallow import fields, validate

from ..shapes import Move
from . import Strict
from .players import player_field


class VerifyRequest(Strict):
    """POST /v1/verify: {"puzzle": {...} or {"code": ...}, "moves": [...], "player"?: id}."""

    puzzle = fields.Dict(required=True, metadata={"shape": {"$ref": "#/components/schemas/PuzzleRef"}},
                         error_messages={"invalid": "must be a docs/formats.md puzzle or {{\"code\": ...}}"})
    moves = fields.List(fields.Raw(metadata={"shape": Move}), required=True, validate=validate.Length(max=1000),
                        error_messages={"invalid": "must be a list of moves like {{\"robot\": \"red\", "
                                                   "\"direction\": \"N\"}}"})
    player = player_field()
