"""Players' requests: a player's id (in a path, a body or a query), a vote,
the next puzzle, a player's history."""

from __future__ import annotations

from typing import Any

from marshmallow import fields, validate

from application.ratings import HISTORY_KEPT, OFFSETS
from solver.production.themes import THEMES

from . import Strict, up_to

PLAYER_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
PLAYER_RULE = "must be 1 to 64 letters, digits, '_' or '-' (the app's own id for its player)"


def player_field(**kwargs: Any) -> fields.String:
    return fields.String(validate=validate.Regexp(PLAYER_PATTERN, error=PLAYER_RULE), metadata={
        "description": "the app's own id for its player (1-64 of A-Z a-z 0-9 _ -), scoped to the API key sent "
                       "(without a key, the public scope)"}, **kwargs)


class JsonBoolean(fields.Boolean):
    """A JSON true or false, nothing else (marshmallow's takes 1, "yes", "on", ...)."""

    def _deserialize(self, value: object, attr: str | None, data: object, **kwargs: object) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class VoteRequest(Strict):
    """POST /v1/puzzles/{code}/vote: {"player": id, "up": true or false}."""

    player = player_field(required=True)
    up = JsonBoolean(required=True, error_messages={"invalid": "must be true or false"})


class NextQuery(Strict):
    """GET /v1/puzzles/next: whose next puzzle, how hard, and of which theme."""

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


class HistoryQuery(Strict):
    """GET /v1/players/{id}/attempts: how many of the last attempts."""

    limit = up_to(HISTORY_KEPT)


class PlayerPath(Strict):
    player_id = fields.String(required=True, validate=validate.Regexp(PLAYER_PATTERN, error=PLAYER_RULE), metadata={
        "description": "the app's own id for its player, as sent to POST /v1/verify"})
