"""Games' requests: a new game, a bid, a solution shown, and the version a
client has seen."""

from __future__ import annotations

from typing import ClassVar

from marshmallow import fields, validate

from workers.schemas import Seed, text

from ..shapes import GameOptions, Move
from . import Count, Lenient, Strict


class NewGame(Strict):
    # Names and options are checked by solver.play.game (with its own messages); the metadata documents them.
    players = fields.List(fields.String(validate=text, metadata={"minLength": 1, "maxLength": 40}), required=True,
                          validate=validate.Length(1, 16), metadata={"uniqueItems": True})
    board = fields.String(load_default="random", validate=validate.Length(max=200))
    options = fields.Dict(load_default=dict, metadata={"shape": GameOptions})
    seed = Seed(metadata={"description": "fixes board, robots and every shuffle; without one the server draws a "
                                         "secret"})


class Bid(Strict):
    moves = fields.Raw(required=True, metadata={"shape": {"type": "integer", "minimum": 1, "maximum": 99}})


class Shown(Strict):
    moves = fields.List(fields.Raw(metadata={"shape": Move}), required=True, validate=validate.Length(max=200))


class SinceQuery(Lenient):
    """The events after a game version (GET /v1/games/{id}, its event stream)."""

    COMPONENT: ClassVar[str] = "Since"
    since = Count(0, 999_999_999, "must be a version number (0 to 999999999)", load_default=0, metadata={
        "description": "a game version: the events after it (Last-Event-ID, when sent, wins for streams)"})


class LastEventHeader(Lenient):
    """A reconnecting event stream's Last-Event-ID: the last version it saw (wins over ?since)."""

    last_event = Count(0, 999_999_999, "must be a version number (0 to 999999999)", data_key="Last-Event-ID",
                       metadata={"description": "the last event a reconnecting stream saw (its id): the events "
                                                "after it"})
