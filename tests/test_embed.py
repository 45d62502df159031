"""The embeddable puzzle (issue 59) as another site uses it: a page on another
origin includes /static/embed.js and a <div data-ricochet="daily">, a person
solves the puzzle inside the frame, and the page hears `solved` with the moves;
oEmbed's answer holds oEmbed 1.0's fields; only the embeds may be framed by any
site.  Screenshots of the embed's states go to build/screenshots/."""

from __future__ import annotations

import html
import json

import pytest
from flask import Flask

from service.app import create_app
from solver.play import daily
from tests.helpers import served
from tests.pages import Tour, axe, context, one_of, play, tours

HOST_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A blog about puzzles</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script src="{base}/static/embed.js" defer></script></head><body><main><h1>Today's puzzle</h1>
<div id="here" data-ricochet="daily" data-lang="{lang}"></div>
<p>Heard: <output id="heard"></output></p></main>
<script>
window.heard = [];
document.addEventListener("ricochet:solved", (e) => {{
  window.heard.push(e.detail);
  document.querySelector("#heard").textContent = "solved";
}});
document.addEventListener("ricochet:moves", (e) => {{ window.moves = e.detail.count; }});
</script></body></html>"""


@pytest.fixture(scope="module")
def base_url(redis_url):
    with served(create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False})) as url:
        yield url


def _host(base_url: str, lang: str):
    """Another site (another origin: a port of its own) whose page embeds the daily puzzle."""
    site = Flask("elsewhere")
    site.add_url_rule("/", "page", lambda: HOST_PAGE.format(base=base_url, lang=lang))
    return served(site)


@pytest.mark.parametrize(("lang", "size"), tours(2))
def test_another_site_embeds_the_daily_and_hears_it_solved(browser, base_url, lang, size):
    moves = daily.daily_json(daily.today())["solution"]
    with _host(base_url, lang) as elsewhere:
        ctx = context(browser, lang, size)
        try:
            page = ctx.new_page()
            tour = Tour(page, "embed", lang, size)
            page.goto(elsewhere + "/")
            frame_element = page.wait_for_selector("#here iframe")
            frame = frame_element.content_frame()
            frame.wait_for_selector(".robot")
            assert frame.url.startswith(base_url + "/embed/daily") and f"lang={lang}" in frame.url
            assert frame.evaluate("document.documentElement.lang") == lang
            page.wait_for_function("document.querySelector('#here iframe').getBoundingClientRect().height > 300")
            tour.state("start")
            _frame_checked(frame, lang)
            with page.expect_request(lambda r: r.url.endswith("/v1/verify") and r.method == "POST") as sent:
                play(frame, moves, touch=size == "phone")
            # The answer is the frame's anonymous player's: rated, and counted in how others did that day.
            assert sent.value.post_data_json["player"].startswith("web-")
            page.wait_for_function("window.heard.length === 1", timeout=20_000)
            heard = page.evaluate("window.heard[0]")
            assert heard["type"] == "solved" and heard["source"] == "ricochet"
            assert heard["moves"] == moves and heard["length"] == heard["optimal"] == len(moves)
            assert page.evaluate("window.moves") == len(moves)
            tour.state("solved")
            _frame_checked(frame, lang)
            assert tour.errors == []
        finally:
            ctx.close()


def _frame_checked(frame, lang: str) -> None:
    if lang in ("en", "ru"):
        assert axe(frame) == []


def test_the_embed_in_the_dark_and_asked_for_a_bad_code(client):
    r = client.get("/embed/daily?theme=dark&lang=ru")
    assert r.status_code == 200 and '<html data-theme="dark" lang="ru">' in r.text
    assert "frame-ancestors *" in r.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in r.headers and "Set-Cookie" not in r.headers  # another site's reader's choice
    code = daily.daily_json(daily.today())["code"]
    assert client.get(f"/embed/{code}").status_code == 200
    for bad in ("/embed/ABCDEFGHIJKLMNO", "/embed/daily?theme=neon", "/embed/daily?lang=xx", "/embed/daily?x=1"):
        r = client.get(bad)
        assert r.status_code == 400 and r.json["detail"], bad


@pytest.fixture(scope="module")
def client(redis_url):
    return create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()


def test_oembed_answers_oembed_1_0_and_pages_link_to_it(client):
    code = daily.daily_json(daily.today() - __import__("datetime").timedelta(days=1))["code"]
    for url, src in (("http://localhost/", "/embed/daily"), (f"http://localhost/p/{code}", f"/embed/{code}"),
                     (f"http://localhost/?day={daily.today().isoformat()}", "/embed/"),
                     ("http://localhost/embed/daily?lang=de", "/embed/daily?lang=de")):
        r = client.get("/oembed", query_string={"url": url, "maxwidth": 360})
        assert r.status_code == 200 and r.mimetype == "application/json", (url, r.json)
        card = r.json
        # oEmbed 1.0, section 2.3: version and type, and for rich: html, width, height.
        assert card["version"] == "1.0" and card["type"] == "rich"
        assert isinstance(card["width"], int) and isinstance(card["height"], int) and card["width"] <= 360
        assert card["html"].startswith("<iframe ") and f'src="http://localhost{src}' in html.unescape(card["html"])
        for optional in ("title", "provider_name", "provider_url", "thumbnail_url"):
            assert isinstance(card[optional], str)
        assert isinstance(card["cache_age"], int) and card["thumbnail_width"] > 0 and card["thumbnail_height"] > 0
    assert client.get("/oembed", query_string={"url": "http://localhost/", "maxheight": 300}).json["height"] <= 300
    assert client.get("/oembed", query_string={"url": "http://localhost/", "format": "xml"}).status_code == 501
    for url in ("http://elsewhere.example/", "http://localhost/p/ABCDEFGHIJKLMNO", "http://localhost/together",
                "http://localhost/?day=2099-01-01"):
        assert client.get("/oembed", query_string={"url": url}).status_code == 404, url
    assert client.get("/oembed").status_code == 400
    assert client.get("/oembed", query_string={"url": "http://localhost/", "maxwidth": "wide"}).status_code == 400
    # Discovery: the puzzle pages name their oEmbed.
    for path in ("/", f"/p/{code}"):
        page = client.get(path).text
        assert 'type="application/json+oembed"' in page and "/oembed?url=" in page


def test_oembed_gives_no_card_whose_frame_the_embed_refuses(client):
    code = daily.daily_json(daily.today())["code"]
    for query in ("lang=xx", "theme=neon", "lang=de&theme=sepia"):
        for page in ("http://localhost/embed/daily", "http://localhost/", f"http://localhost/p/{code}"):
            r = client.get("/oembed", query_string={"url": f"{page}?{query}"})
            assert r.status_code == 404 and r.mimetype == "application/problem+json", (page, query, r.json)
            assert r.json["field"] == "url" and query.split("=")[0] in r.json["detail"], r.json
    for url in ("http://localhost/embed/daily?lang=de&theme=dark", f"http://localhost/p/{code}?theme=light"):
        src = html.unescape(client.get("/oembed", query_string={"url": url}).json["html"]).split('src="')[1]
        assert client.get(src.split('"')[0].removeprefix("http://localhost")).status_code == 200, src
    xml = client.get("/oembed", query_string={"url": "http://localhost/", "format": "xml"})
    assert xml.status_code == 501 and xml.mimetype == "application/problem+json"
    assert xml.json["type"] == "/problems/not-implemented" and "format=json" in xml.json["detail"]


def test_absolute_links_name_the_public_address_not_the_requests_host(redis_url):
    """A request's Host header is the client's to write: with RICOCHET_PUBLIC_URL set,
    Open Graph tags, oEmbed cards and Link headers name the site's own address."""
    from workers.settings import Settings, SettingsError

    site = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False,
                       "PUBLIC_URL": "https://puzzles.example.org"}).test_client()
    forged = {"Host": "evil.example"}
    page = site.get("/", headers=forged).get_data(as_text=True)
    assert 'property="og:url" content="https://puzzles.example.org/"' in page and "evil.example" not in page
    card = site.get("/oembed?url=https://puzzles.example.org/", headers=forged).json
    assert card["provider_url"] == "https://puzzles.example.org/" and "evil.example" not in json.dumps(card)
    assert site.get("/oembed?url=http://evil.example/", headers=forged).status_code == 404
    # first, next, last
    links = site.get("/v1/daily/archive?from=2026-01-01&to=2026-03-31&limit=30", headers=forged).headers["Link"]
    assert links.count("<https://puzzles.example.org/v1/daily/archive?") == links.count("rel=") == 3
    assert "evil.example" not in links
    unset = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()
    assert 'content="http://localhost/"' in unset.get("/").get_data(as_text=True)  # the request's own host
    assert Settings.from_env({"RICOCHET_PUBLIC_URL": "https://puzzles.example.org/"}).public_url == \
        "https://puzzles.example.org"
    for bad in ("puzzles.example.org", "https://puzzles.example.org/play", "ftp://x", "https://x?y=1"):
        with pytest.raises(SettingsError, match="RICOCHET_PUBLIC_URL"):
            Settings.from_env({"RICOCHET_PUBLIC_URL": bad})


CARDS = [(300, 300), (280, None), (480, 650), (None, None), (600, 400)]


@pytest.mark.parametrize("lang", one_of(["en", "ru"], 1))
def test_an_oembed_card_fits_the_box_it_is_asked_for(browser, base_url, redis_url, lang):
    """oEmbed 1.0: a rich card obeys maxwidth and maxheight.  Chromium loads the card's
    iframe at the answer's width x height, and the whole board and every control are
    inside it, nothing scrolled or clipped; the thumbnail is within the bounds too."""
    from tests.pages import SHOTS

    client = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False, "PUBLIC_URL": base_url}).test_client()
    for maxwidth, maxheight in CARDS:
        asked = {"url": base_url + "/", **({"maxwidth": maxwidth} if maxwidth else {}),
                 **({"maxheight": maxheight} if maxheight else {})}
        r = client.get("/oembed", query_string=asked)
        assert r.status_code == 200, (asked, r.json)
        card = r.json
        assert card["width"] <= (maxwidth or 10_000) and card["height"] <= (maxheight or 10_000), card
        assert card["thumbnail_width"] <= (maxwidth or 10_000) and card["thumbnail_height"] <= (maxheight or 10_000)
        picture = client.get(card["thumbnail_url"].removeprefix(base_url))
        assert picture.status_code == 200 and picture.mimetype == "image/png"
        assert _png_size(picture.data) == (card["thumbnail_width"], card["thumbnail_height"])
        src = html.unescape(card["html"].split('src="')[1].split('"')[0])
        ctx = context(browser, lang, "desktop")
        try:
            page = ctx.new_page()
            page.set_viewport_size({"width": card["width"], "height": card["height"]})
            page.goto(src + ("&" if "?" in src else "?") + f"lang={lang}")
            page.wait_for_selector(".robot")
            page.wait_for_timeout(200)
            name = f"embed-oembed-{card['width']}x{card['height']}-{lang}"
            page.screenshot(path=str(SHOTS / f"{name}.png"))
            seen = page.evaluate("""() => {
                const el = document.documentElement;
                const parts = ['#goal', '#board', '#robots', '#arrows', '#undo', '#reset', '#solution', '#count',
                               '#how-open', '#site'];
                return {scroll: [el.scrollWidth, el.scrollHeight], view: [innerWidth, innerHeight],
                        boxes: Object.fromEntries(parts.map(s => {
                          const b = document.querySelector(s).getBoundingClientRect();
                          return [s, [b.left, b.top, b.right, b.bottom]]; }))};
            }""")
            width, height = seen["view"]
            assert (width, height) == (card["width"], card["height"])
            assert seen["scroll"][0] <= width and seen["scroll"][1] <= height, (name, seen)
            for part, (left, top, right, bottom) in seen["boxes"].items():
                assert 0 <= left < right <= width and 0 <= top < bottom <= height, (name, part, seen)
            board = seen["boxes"]["#board"]
            assert board[2] - board[0] >= 144, (name, board)  # 9 px a cell at least
        finally:
            ctx.close()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_oembed_gives_no_card_when_none_fits_and_the_days_card_says_its_length(client):
    for maxwidth, maxheight in ((279, None), (200, 200), (150, None), (480, 287), (None, 100)):
        asked = {"url": "http://localhost/", **({"maxwidth": maxwidth} if maxwidth else {}),
                 **({"maxheight": maxheight} if maxheight else {})}
        r = client.get("/oembed", query_string=asked)
        assert r.status_code == 404 and r.mimetype == "application/problem+json", (asked, r.json)
        assert "280 x 288" in r.json["detail"], r.json
    for bad in ({"maxwidth": 0}, {"maxheight": -3}, {"maxwidth": "wide"}):
        assert client.get("/oembed", query_string={"url": "http://localhost/", **bad}).status_code == 400
    fits = client.get("/oembed", query_string={"url": "http://localhost/", "maxwidth": 280, "maxheight": 288}).json
    assert (fits["width"], fits["height"]) == (280, 288)
    wide = client.get("/oembed", query_string={"url": "http://localhost/", "maxwidth": 5000}).json
    assert wide["width"] == 720 and wide["thumbnail_width"] == 656
    # A published day's card is /embed/daily?day=...: the day's puzzle with its length, as /?day= shows it.
    day = daily.today() - __import__("datetime").timedelta(days=3)
    card = client.get("/oembed", query_string={"url": f"http://localhost/?day={day.isoformat()}"}).json
    assert f"/embed/daily?day={day.isoformat()}" in html.unescape(card["html"])
    assert f"#{daily.number(day)}" in card["title"]
    assert client.get(f"/embed/daily?day={day.isoformat()}").status_code == 200
    for bad, status in (("2099-01-01", 404), ("yesterday", 400)):
        r = client.get(f"/embed/daily?day={bad}")
        assert r.status_code == status and r.json["field"] == "day", r.json
    assert client.get(f"/embed/{card['thumbnail_url'].split('/embed/')[1].split('/')[0]}/thumbnail.png?size=8") \
        .status_code == 400


def test_the_days_embed_says_its_length(browser, base_url):
    day = daily.today() - __import__("datetime").timedelta(days=3)
    length = daily.daily_json(day)["optimal_length"]
    ctx = context(browser, "en", "desktop")
    try:
        page = ctx.new_page()
        page.goto(f"{base_url}/embed/daily?day={day.isoformat()}&lang=en")
        page.wait_for_selector(".robot")
        assert f"in {length} moves" in page.text_content("#goal-text")
        assert page.text_content("#best").strip() == f"/ {length}"
    finally:
        ctx.close()
