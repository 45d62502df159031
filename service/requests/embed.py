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


class EmbedPath(Strict):
    code = code("a puzzle code")


class OEmbedQuery(Strict):
    """GET /oembed: oEmbed 1.0's consumer request."""

    url = fields.Url(required=True, require_tld=False, schemes={"http", "https"},
                     error_messages={"invalid": "must be the address of a puzzle page of this site",
                                     "required": "give the address of a puzzle page of this site"},
                     metadata={"description": "a puzzle page of this site: /, /?day=YYYY-MM-DD, /p/{code} or "
                                              "/embed/..."})
    maxwidth = fields.Integer(validate=validate.Range(200, 4000, error="must be from 200 to 4000"),
                              error_messages={"invalid": "must be an integer"})
    maxheight = fields.Integer(validate=validate.Range(260, 4000, error="must be from 260 to 4000"),
                               error_messages={"invalid": "must be an integer"})
    format = fields.String(load_default="json", metadata={"description": "json (xml is answered 501, as oEmbed says)"})
