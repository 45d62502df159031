"""Players: what their attempts made of them (ratings from play, application/ratings.py)."""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint

from application import Problem, ratings

from .common import context
from .declare import Reply, operation
from .schemas import PLAYER_PATTERN, PLAYER_RULE
from .shapes import Player

bp = Blueprint("players", __name__)


@operation(bp, "get /v1/players/<player_id>", "getPlayer", tag="players", errors=(400, 404, 503),
           summary="A player's rating, attempts, wins and daily streak",
           parameters=[{"name": "player_id", "in": "path", "required": True,
                        "description": "the app's own id for its player, as sent to POST /v1/verify",
                        "schema": {"type": "string", "pattern": PLAYER_PATTERN}}],
           replies={200: Reply("The player", Player)})
def player(player_id: str) -> Any:
    if not re.fullmatch(PLAYER_PATTERN, player_id):
        raise Problem("invalid-input", f"player_id {PLAYER_RULE}", field="player_id")
    return ratings.player(context(), player_id)
