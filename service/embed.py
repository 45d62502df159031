"""The embeddable puzzle: a page made to sit in another site's iframe (the daily
puzzle or any puzzle by code; no site chrome; light, dark or the reader's; in
the language asked for), the only pages any site may frame; and oEmbed 1.0, so
that a link to a puzzle page unfurls into a playable card.  docs/embed.md says
how a site uses them and which messages the frame posts to its parent."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import resvg_py
from flask import Blueprint, Response, request

from application import Problem
from application.problems import echo
from solver.errors import InvalidInput
from solver.formats.svg import puzzle_svg
from solver.model.puzzle import Puzzle
from solver.play import daily

from . import i18n
from .caching import IMMUTABLE, cached
from .common import public_root
from .declare import Reply, operation
from .meta import HTML
from .pictures import PNG
from .requests.embed import DailyEmbedQuery, EmbedPath, EmbedQuery, OEmbedQuery, ThumbnailQuery
from .shapes import OEmbed

bp = Blueprint("embed", __name__)

EMBED = Path(__file__).resolve().parent / "static" / "embed.html"
# Any site may frame these pages (and only these): they hold no seat, key or token.
EMBED_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors *")
# The card's layout (static/embed.css), measured in Chromium (tests/test_embed.py holds it): the board
# is a square as wide as the card less its padding; the goal line and the controls take CHROME px
# besides (a regular card), COMPACT_CHROME in the compact layout (narrower than REGULAR_WIDTH, or lower
# than REGULAR_HEIGHT), where the board shrinks to what the card's height leaves.
WIDTH = 480  # a card's width when none is asked for
LARGEST = 720  # the widest card offered: a wider board gains nothing
NARROWEST = 280  # the narrowest card whose controls fit, one row each
REGULAR_WIDTH, REGULAR_HEIGHT = 420, 560
CHROME, COMPACT_CHROME = 176, 144  # px above and below the board, the body's padding included (measured: 174, 143)
SMALLEST_BOARD = 144  # 9 px a cell: smaller, the board cannot be read
THUMBNAIL = 656  # the puzzle picture's own size (px): a thumbnail is at most this, and within the card's bounds


@operation(bp, "get /embed/daily", "embedDaily", tag="embed", query=DailyEmbedQuery, errors=(400, 404),
           replies={200: HTML}, summary="Today's puzzle (or a published day's), made to sit in an iframe on any site",
           description="No site chrome; posts `moves`, `solved`, `revealed` and `resize` messages to its parent, "
                       "and fits the frame it is given (docs/embed.md). The only pages another site may frame.")
def embedded_daily(query: dict[str, Any]) -> Response:
    if "day" in query:
        _published_day(query["day"].isoformat(), field="day")
    return _page(query["theme"])


@operation(bp, "get /embed/<code>", "embedPuzzle", tag="embed", query=EmbedQuery, errors=(400,), replies={200: HTML},
           path=EmbedPath, summary="A puzzle by its code, made to sit in an iframe on any site")
def embedded(query: dict[str, Any], code: str) -> Response:
    _puzzle(code)
    return _page(query["theme"])


def _page(theme: str) -> Response:
    response = i18n.page(request, EMBED, remember=False)
    response.set_data(response.get_data(as_text=True).replace("<html ", f'<html data-theme="{theme}" ', 1))
    response.headers["Content-Security-Policy"] = EMBED_POLICY
    return response


def card_size(maxwidth: int | None, maxheight: int | None) -> tuple[int, int]:
    """The card's width and height within maxwidth x maxheight (oEmbed 1.0: never
    larger): up to WIDTH wide (LARGEST when asked), as high as its board and controls
    need, lowered to maxheight (the board shrinking, the controls compact); 404 when
    not even the smallest card fits."""
    width = WIDTH if maxwidth is None else min(maxwidth, LARGEST)
    smallest = SMALLEST_BOARD + COMPACT_CHROME
    if width < NARROWEST or (maxheight is not None and maxheight < smallest):
        raise Problem("not-found", f"no card fits in {maxwidth or 'any width'} x {maxheight or 'any height'} px: "
                      f"the smallest is {NARROWEST} x {smallest} (oEmbed answers 404 when it has no response to "
                      "give)", field="maxwidth" if width < NARROWEST else "maxheight")
    regular = width >= REGULAR_WIDTH and width + CHROME >= REGULAR_HEIGHT
    height = width + (CHROME if regular else COMPACT_CHROME)
    if maxheight is not None and height > maxheight:
        height = maxheight  # the board takes what the controls leave (compact when low)
    return width, height


@operation(bp, "get /oembed", "oembed", tag="embed", query=OEmbedQuery, errors=(400, 404),
           summary="oEmbed 1.0: a puzzle page's address as a playable card (type rich)",
           description="`url` is a page of this site: `/` (today's puzzle), `/?day=YYYY-MM-DD`, `/p/{code}` or an "
                       "`/embed/...` address. The card and its thumbnail are never larger than `maxwidth` x "
                       f"`maxheight` (oEmbed 1.0): a card fits from {NARROWEST} px wide and "
                       f"{SMALLEST_BOARD + COMPACT_CHROME} px high (its board shrinking, its controls compact); a "
                       "smaller box is answered 404, as oEmbed answers a request it has no response for. Only JSON: "
                       "`format=xml` is answered 501, as oEmbed says.",
           replies={200: Reply("The card (application/json, as oEmbed says)", OEmbed),
                    501: "Problem"})
def oembed(query: dict[str, Any]) -> Any:
    if query["format"] != "json":
        raise Problem("not-implemented", "only format=json is offered (oEmbed's JSON; xml is not)", field="format")
    root = public_root()
    src, title, code = _embedded(query["url"], root)
    width, height = card_size(query.get("maxwidth"), query.get("maxheight"))
    side = min(THUMBNAIL, query.get("maxwidth") or THUMBNAIL, query.get("maxheight") or THUMBNAIL)
    frame = (f'<iframe src="{html.escape(src, quote=True)}" width="{width}" height="{height}" '
             f'title="{html.escape(title, quote=True)}" style="border:0;max-width:100%" loading="lazy" '
             'allow="clipboard-write"></iframe>')
    return {"version": "1.0", "type": "rich", "html": frame, "width": width, "height": height, "title": title,
            "provider_name": "Ricochet Robots", "provider_url": root + "/", "cache_age": 3600,
            "thumbnail_url": f"{root}/embed/{code}/thumbnail.png?size={side}", "thumbnail_width": side,
            "thumbnail_height": side}


@operation(bp, "get /embed/<code>/thumbnail.png", "embedThumbnail", tag="embed", path=EmbedPath,
           query=ThumbnailQuery, errors=(400,),
           replies={200: Reply("The picture, `size` px square", media={PNG: {"schema": {"type": "string",
                                                                                         "format": "binary"}}})},
           summary="A puzzle's picture as an oEmbed card's thumbnail, `size` px square (within the card's bounds)")
def thumbnail(code: str, query: dict[str, Any]) -> Response:
    size = query["size"]
    svg = puzzle_svg(_puzzle(code))
    data = bytes(resvg_py.svg_to_bytes(svg_string=svg, width=size, height=size, background="#ffffff"))
    response = Response(data, mimetype=PNG)
    response.headers["Content-Security-Policy"] = EMBED_POLICY  # under /embed/: any site may frame it
    return cached(response, IMMUTABLE)


def _puzzle(code: str) -> Puzzle:
    try:
        return Puzzle.from_code(code)
    except InvalidInput as e:
        raise Problem("invalid-input", f"{e}: the embed's address names a puzzle by its code", field="code") from e


def _embedded(url: str, root: str) -> tuple[str, str, str]:
    """The embed's address, title and puzzle code for a page of this site."""
    parts = urlsplit(url)
    if not _this_site(parts, urlsplit(root)):
        raise Problem("not-found", f"{echo(url)} is not a page of this site ({root}); only its puzzles can be embedded",
                      field="url")
    asked = parse_qs(parts.query)
    keep: dict[str, str] = {k: asked[k][0] for k in ("lang", "theme") if k in asked}
    wrong = EmbedQuery().validate(keep)
    if wrong:
        raise Problem("not-found", f"{echo(url)} asks for no card the embed gives: "
                      + "; ".join(f"{k} {' '.join(v)}" for k, v in sorted(wrong.items())), field="url")
    path = parts.path.rstrip("/") or "/"
    if path.startswith("/embed/"):
        path = "/" if path == "/embed/daily" else "/p/" + path[len("/embed/"):]
    if path == "/" and "day" not in asked:
        today = daily.today()
        return (f"{root}/embed/daily{_query(keep)}", f"Ricochet Robots: daily puzzle #{daily.number(today)}",
                daily.daily_json(today)["code"])
    if path == "/":  # a published day: /embed/daily?day= shows its puzzle with its length, as /?day= does
        day = _published_day(asked["day"][0])
        return (f"{root}/embed/daily{_query({**keep, 'day': day.isoformat()})}",
                f"Ricochet Robots: daily puzzle #{daily.number(day)}", daily.daily_json(day)["code"])
    code = path[len("/p/"):] if path.startswith("/p/") else None
    if code is None:
        raise Problem("not-found", f"{echo(url)} is not a puzzle page: give /, /?day=YYYY-MM-DD or /p/{{code}}",
                      field="url")
    try:
        Puzzle.from_code(code)
    except InvalidInput as e:
        raise Problem("not-found", f"{echo(url)} names no puzzle: {e}", field="url") from e
    return f"{root}/embed/{code}{_query(keep)}", "Ricochet Robots puzzle", code


LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def _this_site(asked: Any, here: Any) -> bool:
    """Whether an address is of this site (its loopback names count as one)."""
    if asked.port != here.port:
        return False
    return asked.hostname == here.hostname or {asked.hostname, here.hostname} <= LOOPBACK


def _published_day(text: str, field: str = "url") -> Any:
    import datetime as dt

    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise Problem("not-found", f"day={echo(text)!r} is not a date (YYYY-MM-DD)", field=field) from None
    if not daily.FIRST_DAY <= day <= min(daily.today(), daily.last_day()):
        raise Problem("not-found", f"no published daily puzzle on {echo(text)}", field=field)
    return day


def _query(params: dict[str, str]) -> str:
    return "?" + urlencode(params) if params else ""
