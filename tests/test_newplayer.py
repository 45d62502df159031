"""What a new player still tripped on (issue 69, "First"), each defect held by a
test in a real browser (Debian's Chromium through Playwright, tests/pages.py):
midnight and the streak (1), a mistyped address in Chromium (2), a shared or
reloaded puzzle's par (3), Train's last hint unrating the attempt (4), the board
in words, the how-to and the first hint (6), and the grade words of published
days (7).  Defect 5 (rooms on a phone) is held by the rooms' tests."""

from __future__ import annotations

import pytest

from service.app import create_app
from tests.helpers import served
from tests.pages import Tour, context


@pytest.fixture(scope="module")
def base_url(redis_url):
    with served(create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False})) as url:
        yield url


def _fresh(browser, base_url, path: str, lang: str = "en", size: str = "desktop", seen: bool = True):
    ctx = context(browser, lang, size, seen_how_to_play=seen)
    page = ctx.new_page()
    page.goto(base_url + path)
    return ctx, page


# -- 2: Chromium's Accept header gets the page ---------------------------------------

CHROMIUM_ACCEPT = ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,"
                   "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7")


def _get(url: str, accept: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Accept": accept, "Accept-Language": "de"})
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, r.headers["Content-Type"]
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_defect_2_a_mistyped_address_in_chromium_is_the_translated_page(browser, base_url, lang):
    ctx = context(browser, lang, "phone")
    page = ctx.new_page()
    tour = Tour(page, "newplayer-404", lang, "phone")
    try:
        sent: list[str] = []
        page.on("request", lambda r: sent.append(r.headers.get("accept", "")))
        reply = page.goto(f"{base_url}/nope-{lang}")
        assert reply.status == 404 and reply.headers["content-type"].startswith("text/html")
        assert page.get_attribute("html", "lang") == lang
        assert page.is_visible("main.error-page h1") and page.is_visible('a[href="/"]')
        tour.state("page")  # axe: no serious violation (the JSON had two)
    finally:
        ctx.close()
    # Chromium's header, exactly: the page; clients asking for JSON (or anything) keep problem+json.
    assert _get(f"{base_url}/nope", CHROMIUM_ACCEPT) == (404, "text/html; charset=utf-8")
    for accept in ("application/json", "application/problem+json", "*/*",
                   "application/json, text/html;q=0.9", "application/signed-exchange;v=b3;q=0.7,*/*;q=0.8"):
        assert _get(f"{base_url}/nope", accept) == (404, "application/problem+json"), accept
    assert _get(f"{base_url}/v1/nope", CHROMIUM_ACCEPT) == (404, "application/problem+json")
