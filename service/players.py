"""Players: what their attempts made of them (ratings from play, application/ratings.py)."""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint

from application import Problem, ratings

from .common import context
from .declare import Reply, operation
from .schemas import PLAYER_PATTERN, PLAYER_RULE, HistoryQuery
from .shapes import Player, PlayerHistory

bp = Blueprint("players", __name__)


PLAYER_ID = {"name": "player_id", "in": "path", "required": True,
             "description": "the app's own id for its player, as sent to POST /v1/verify",
             "schema": {"type": "string", "pattern": PLAYER_PATTERN}}


def _checked(player_id: str) -> str:
    if not re.fullmatch(PLAYER_PATTERN, player_id):
        raise Problem("invalid-input", f"player_id {PLAYER_RULE}", field="player_id")
    return player_id


@operation(bp, "get /v1/players/<player_id>", "getPlayer", tag="players", errors=(400, 404, 503),
           summary="A player's rating, attempts, wins and daily streak",
           parameters=[PLAYER_ID], replies={200: Reply("The player", Player)})
def player(player_id: str) -> Any:
    return ratings.player(context(), _checked(player_id))


@operation(bp, "get /v1/players/<player_id>/attempts", "getPlayerAttempts", tag="players", query=HistoryQuery,
           errors=(400, 404, 503), summary="A player's last attempts, newest first: puzzle, answer, whether it was "
           "rated (and why not), the rating after it", parameters=[PLAYER_ID],
           replies={200: Reply("The player's history", PlayerHistory)})
def attempts(player_id: str, query: dict[str, Any]) -> Any:
    return ratings.history(context(), _checked(player_id), query["limit"])
