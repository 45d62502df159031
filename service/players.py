"""Players: what their attempts made of them (ratings from play, application/ratings/)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from application import ratings

from .common import context
from .declare import Reply, operation
from .requests.players import HistoryQuery, PlayerPath
from .shapes import Player, PlayerHistory, ThemeList

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


@operation(bp, "get /v1/themes", "listThemes", tag="players",
           summary="The themes, what each means, and how many puzzles the library holds with each and at which "
                   "ratings (what /v1/puzzles/next?theme= and /v1/puzzles/random?theme= choose from)",
           replies={200: Reply("Every theme", ThemeList)})
def themes() -> Any:
    return ratings.library_themes()
