"""Players: what their attempts made of them (ratings from play, application/ratings/)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from application import ratings

from .common import context
from .declare import Reply, operation
from .requests.players import HistoryQuery, PlayerPath
from .shapes import Player, PlayerHistory

bp = Blueprint("players", __name__)


@operation(bp, "get /v1/players/<player_id>", "getPlayer", tag="players", errors=(400, 404, 503),
           summary="A player's rating, attempts, wins and daily streak",
           path=PlayerPath, replies={200: Reply("The player", Player)})
def player(player_id: str) -> Any:
    return ratings.player(context(), player_id)


@operation(bp, "get /v1/players/<player_id>/attempts", "getPlayerAttempts", tag="players", query=HistoryQuery,
           errors=(400, 404, 503), summary="A player's last attempts, newest first: puzzle, answer, whether it was "
           "rated (and why not), the rating after it", path=PlayerPath,
           replies={200: Reply("The player's history", PlayerHistory)})
def attempts(player_id: str, query: dict[str, Any]) -> Any:
    return ratings.history(context(), player_id, query["limit"])
