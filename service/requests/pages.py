"""The pages' and the service's own routes: the play page's query, a room's
page, problem types, the docs' assets."""

from __future__ import annotations

from marshmallow import fields

from ..i18n import LANGUAGES
from . import Count, Lenient, Strict

LANG = fields.String(metadata={
    "description": f"the page's language, one of {', '.join(LANGUAGES)} (remembered in a cookie; another is "
                   "ignored); otherwise the cookie's, then Accept-Language's", "examples": list(LANGUAGES)})


class PageQuery(Lenient):
    """A page's query: its language (read by service/i18n.py)."""

    lang = LANG


class PlayQuery(PageQuery):
    """GET /: a random puzzle of `length` moves instead of the daily one."""

    length = Count(2, 16, "must be an integer from 2 to 16 (or left out for the daily puzzle)", digits=2)


class RoomPage(Strict):
    room_id = fields.String(required=True)


class ProblemPath(Strict):
    kind = fields.String(required=True, metadata={"examples": ["invalid-input", "not-found", "rate-limited"]})


DOCS_ASSETS = ("swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "swagger-ui.css", "index.css",
               "favicon-32x32.png", "favicon-16x16.png")


class AssetPath(Strict):
    name = fields.String(required=True, metadata={"enum": list(DOCS_ASSETS)})  # another is 404, as a page is
