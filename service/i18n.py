"""The pages in the reader's language: one catalogue per language
(service/static/i18n/<lang>.json, every string the pages show), chosen from
?lang=, then the `lang` cookie (a choice made on the page is remembered), then
Accept-Language, then English.

A page's HTML names its strings as {{key}}; the server fills them in (so the
first paint is in the reader's language and `<html lang>` says which), and
hands the page's scripts the whole catalogue as JSON for what they write.  A
key ending in `.html` holds trusted markup (<kbd> and the like) and goes in as
it is; every other string is escaped."""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path

from flask import Request, Response

LANGUAGES = ("en", "de", "ru")
CATALOGUES = Path(__file__).resolve().parent / "static" / "i18n"
COOKIE = "lang"
PLACEHOLDER = re.compile(r"\{\{([a-z0-9_.]+)\}\}")


@functools.cache
def catalogue(lang: str) -> dict[str, object]:
    """A language's strings; a key missing from it falls back to English."""
    english = json.loads((CATALOGUES / "en.json").read_text(encoding="utf-8"))
    if lang == "en":
        return english
    return {**english, **json.loads((CATALOGUES / f"{lang}.json").read_text(encoding="utf-8"))}


def choose(request: Request) -> str:
    """The language to answer in."""
    asked = request.args.get("lang") or request.cookies.get(COOKIE)
    if asked in LANGUAGES:
        return asked
    return request.accept_languages.best_match(LANGUAGES) or "en"


@functools.cache
def _render(page: Path, lang: str) -> str:
    strings = catalogue(lang)

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in strings:
            raise KeyError(f"{page.name} names {key!r}, which en.json does not hold")
        value = str(strings[key])
        return value if key.endswith(".html") else html.escape(value, quote=True)

    text = page.read_text(encoding="utf-8").replace("<!-- nav -->", (CATALOGUES.parent / "nav.html").read_text(
        encoding="utf-8").strip())  # the pages' links to each other, one copy
    text = PLACEHOLDER.sub(fill, text)
    text = text.replace('<html lang="en">', f'<html lang="{lang}">', 1)
    script = json.dumps({"lang": lang, "languages": list(LANGUAGES), "strings": strings}, ensure_ascii=False)
    script = script.replace("</", "<\\/")  # nothing in it may close the script element
    return text.replace("<!-- strings -->", f'<script id="strings" type="application/json">{script}</script>')


def page(request: Request, path: Path, extra_head: str = "", remember: bool = True) -> Response:
    """A page in the reader's language (remembering a ?lang= choice in a cookie,
    unless it is an embed's: another site's choice for its own readers)."""
    lang = choose(request)
    text = _render(path, lang)
    if extra_head:
        text = text.replace("<!-- open graph -->", extra_head)
    response = Response(text, mimetype="text/html")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["Content-Language"] = lang
    response.vary.update(("Accept-Language", "Cookie"))
    if remember and request.args.get("lang") in LANGUAGES:
        response.set_cookie(COOKIE, lang, max_age=365 * 86400, samesite="Lax")
    return response
