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

from flask import Blueprint, Response, request

from application import Problem
from application.problems import echo
from solver.errors import InvalidInput
from solver.model.puzzle import Puzzle
from solver.play import daily

from . import i18n
from .common import public_root
from .declare import Reply, operation
from .meta import HTML
from .requests.embed import EmbedPath, EmbedQuery, OEmbedQuery
from .shapes import OEmbed

bp = Blueprint("embed", __name__)

EMBED = Path(__file__).resolve().parent / "static" / "embed.html"
# Any site may frame these pages (and only these): they hold no seat, key or token.
EMBED_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors *")
WIDTH, CONTROLS = 480, 170  # a card's default width, and the height its controls add below the square board


@operation(bp, "get /embed/daily", "embedDaily", tag="embed", query=EmbedQuery, errors=(400,), replies={200: HTML},
           summary="Today's puzzle, made to sit in an iframe on any site",
           description="No site chrome; posts `moves`, `solved`, `revealed` and `resize` messages to its parent "
                       "(docs/embed.md). The only pages another site may frame.")
@operation(bp, "get /embed/<code>", "embedPuzzle", tag="embed", query=EmbedQuery, errors=(400,), replies={200: HTML},
           path=EmbedPath, summary="A puzzle by its code, made to sit in an iframe on any site")
def embedded(query: dict[str, Any], code: str | None = None) -> Response:
    if code is not None:
        try:
            Puzzle.from_code(code)
        except InvalidInput as e:
            raise Problem("invalid-input", f"{e}: the embed's address names a puzzle by its code", field="code") from e
    response = i18n.page(request, EMBED, remember=False)
    theme = query["theme"]
    response.set_data(response.get_data(as_text=True).replace("<html ", f'<html data-theme="{theme}" ', 1))
    response.headers["Content-Security-Policy"] = EMBED_POLICY
    return response


@operation(bp, "get /oembed", "oembed", tag="embed", query=OEmbedQuery, errors=(400, 404),
           summary="oEmbed 1.0: a puzzle page's address as a playable card (type rich)",
           description="`url` is a page of this site: `/` (today's puzzle), `/?day=YYYY-MM-DD`, `/p/{code}` or an "
                       "`/embed/...` address. Only JSON: `format=xml` is answered 501, as oEmbed says.",
           replies={200: Reply("The card (application/json, as oEmbed says)", OEmbed),
                    501: "Problem"})
def oembed(query: dict[str, Any]) -> Any:
    if query["format"] != "json":
        raise Problem("not-implemented", "only format=json is offered (oEmbed's JSON; xml is not)", field="format")
    root = public_root()
    src, title, thumbnail = _embedded(query["url"], root)
    width = min(query.get("maxwidth") or WIDTH, WIDTH * 2)
    height = width + CONTROLS
    if query.get("maxheight") and height > query["maxheight"]:
        height = query["maxheight"]
        width = max(200, height - CONTROLS)
    frame = (f'<iframe src="{html.escape(src, quote=True)}" width="{width}" height="{height}" '
             f'title="{html.escape(title, quote=True)}" style="border:0;max-width:100%" loading="lazy" '
             'allow="clipboard-write"></iframe>')
    return {"version": "1.0", "type": "rich", "html": frame, "width": width, "height": height, "title": title,
            "provider_name": "Ricochet Robots", "provider_url": root + "/", "cache_age": 3600,
            "thumbnail_url": root + thumbnail, "thumbnail_width": 656, "thumbnail_height": 656}


def _embedded(url: str, root: str) -> tuple[str, str, str]:
    """The embed's address, title and picture for a page of this site."""
    parts = urlsplit(url)
    if not _this_site(parts, urlsplit(root)):
        raise Problem("not-found", f"{echo(url)} is not a page of this site ({root}); only its puzzles can be embedded",
                      field="url")
    asked = parse_qs(parts.query)
    keep = {k: asked[k][0] for k in ("lang", "theme") if k in asked}
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
                f"/v1/daily/{today.isoformat()}.png")
    code = None
    if path.startswith("/p/"):
        code = path[len("/p/"):]
    elif path == "/" and "day" in asked:
        day = _published_day(asked["day"][0])
        code = daily.daily_json(day)["code"]
    if code is None:
        raise Problem("not-found", f"{echo(url)} is not a puzzle page: give /, /?day=YYYY-MM-DD or /p/{{code}}",
                      field="url")
    try:
        Puzzle.from_code(code)
    except InvalidInput as e:
        raise Problem("not-found", f"{echo(url)} names no puzzle: {e}", field="url") from e
    return f"{root}/embed/{code}{_query(keep)}", "Ricochet Robots puzzle", f"/v1/puzzles/{code}.png"


LOOPBACK = {"localhost", "127.0.0.1", "::1"}


def _this_site(asked: Any, here: Any) -> bool:
    """Whether an address is of this site (its loopback names count as one)."""
    if asked.port != here.port:
        return False
    return asked.hostname == here.hostname or {asked.hostname, here.hostname} <= LOOPBACK


def _published_day(text: str) -> Any:
    import datetime as dt

    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise Problem("not-found", f"day={echo(text)!r} is not a date (YYYY-MM-DD)", field="url") from None
    if not daily.FIRST_DAY <= day <= min(daily.today(), daily.last_day()):
        raise Problem("not-found", f"no published daily puzzle on {echo(text)}", field="url")
    return day


def _query(params: dict[str, str]) -> str:
    return "?" + urlencode(params) if params else ""
