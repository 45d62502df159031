"""Storm's requests: a run opened for a player, an answer to the puzzle handed,
a run's id, whose high scores.  None carries a time: the server keeps the clock."""

from __future__ import annotations

from marshmallow import fields, validate

from application.storms import MOST_PUZZLES

from ..shapes import Move
from . import Strict
from .players import JsonBoolean, player_field

RUN_PATTERN = r"^[0-9a-f]{32}$"


class WholeNumber(fields.Integer):
    """A JSON number that is whole (3 or 3.0, as JSON Schema's integer), never a string or true/false."""

    def _deserialize(self, value: object, attr: str | None, data: object, **kwargs: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float) or not float(value).is_integer():
            raise self.make_error("invalid")
        return int(value)


class StormRequest(Strict):
    """POST /v1/storms: {"player": id, "seeded"?: true}."""

    player = player_field(required=True)
    seeded = JsonBoolean(load_default=False, error_messages={"invalid": "must be true or false"}, metadata={
        "description": "true: the day's seeded run (UTC), the same puzzles for everyone, once a player a day, "
                       "on the day's board; false (the default): a run of the player's own, up to its level"})


class StormAnswer(Strict):
    """POST /v1/storms/{id}/answers: {"puzzle": index, "moves": [...]}."""

    puzzle = WholeNumber(required=True, validate=validate.Range(
        0, MOST_PUZZLES - 1, error=f"must be a puzzle's index in the run, from 0 to {MOST_PUZZLES - 1}"),
        error_messages={"invalid": "must be a whole number: the index of the puzzle handed"},
        metadata={"description": "the index of the puzzle answered (the one handed now)"})
    moves = fields.List(fields.Raw(metadata={"shape": Move}), required=True, validate=validate.Length(max=1000),
                        error_messages={"invalid": "must be a list of moves like {{\"robot\": \"red\", "
                                                   "\"direction\": \"N\"}}"})


class StormPath(Strict):
    run_id = fields.String(required=True, validate=validate.Regexp(RUN_PATTERN, error="must be a run's id: 32 "
                                                                   "hexadecimal digits (from POST /v1/storms)"),
                           metadata={"description": "the run's id, from POST /v1/storms"})


class ScoresQuery(Strict):
    """GET /v1/storms/scores: whose."""

    player = player_field(required=True)
