"""Players' requests: a player in the path, how much of its history."""

from __future__ import annotations

from marshmallow import fields, validate

from application.ratings import HISTORY_KEPT

from ..schemas import PLAYER_PATTERN, PLAYER_RULE
from . import Strict, up_to


class PlayerPath(Strict):
    player_id = fields.String(required=True, validate=validate.Regexp(PLAYER_PATTERN, error=PLAYER_RULE), metadata={
        "description": "the app's own id for its player, as sent to POST /v1/verify"})


class HistoryQuery(Strict):
    """GET /v1/players/{id}/attempts: how many of the last attempts."""

    limit = up_to(HISTORY_KEPT)
