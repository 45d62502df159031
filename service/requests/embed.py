"""The embeddable puzzle's requests: its language and look, the puzzle by code,
and oEmbed's consumer request."""

from __future__ import annotations

from marshmallow import fields, validate

from ..i18n import LANGUAGES
from . import Strict, code


class EmbedQuery(Strict):
    """GET /embed/...: the embedded puzzle's language and look."""

    lang = fields.String(validate=validate.OneOf(LANGUAGES, error=f"must be one of {', '.join(LANGUAGES)}"),
                         metadata={"description": "the language (default: the reader's Accept-Language)"})
    theme = fields.String(load_default="auto", validate=validate.OneOf(["auto", "light", "dark"],
                                                                      error="must be auto, light or dark"),
                          metadata={"description": "auto follows the reader's system"})


class DailyEmbedQuery(EmbedQuery):
    """GET /embed/daily: today's puzzle, or a published day's."""

    day = fields.Date(metadata={"description": "a published day (YYYY-MM-DD; default today): its puzzle, with its "
                                               "length, as /?day= shows it"},
                      error_messages={"invalid": "must be a date, YYYY-MM-DD"})


class EmbedPath(Strict):
    code = code("a puzzle code")


class OEmbedQuery(Strict):
    """GET /oembed: oEmbed 1.0's consumer request."""

    url = fields.Url(required=True, require_tld=False, schemes={"http", "https"},
                     error_messages={"invalid": "must be the address of a puzzle page of this site",
                                     "required": "give the address of a puzzle page of this site"},
                     metadata={"description": "a puzzle page of this site: /, /?day=YYYY-MM-DD, /p/{code} or "
                                              "/embed/..."})
    # Any positive size is a fair request (oEmbed: the provider must respect it); one no card fits is a 404.
    maxwidth = fields.Integer(validate=validate.Range(1, 100_000, error="must be a positive number of pixels"),
                              error_messages={"invalid": "must be an integer"},
                              metadata={"description": "the card is at most this wide (it fits from 280 px)"})
    maxheight = fields.Integer(validate=validate.Range(1, 100_000, error="must be a positive number of pixels"),
                               error_messages={"invalid": "must be an integer"},
                               metadata={"description": "the card is at most this high (it fits from 260 px)"})
    format = fields.String(load_default="json", metadata={"description": "json (xml is answered 501, as oEmbed says)"})


class ThumbnailQuery(Strict):
    """GET /embed/{code}/thumbnail.png: the picture's side."""

    size = fields.Integer(load_default=656, validate=validate.Range(16, 656, error="must be from 16 to 656"),
                          error_messages={"invalid": "must be an integer"},
                          metadata={"description": "the picture's width and height in px"})
