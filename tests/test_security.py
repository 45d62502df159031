"""Security headers on every answer (service/security.py): every route of the
app, walked from its URL map, answers with a Content-Security-Policy that admits
no inline script and no framing by other sites, nosniff and a referrer policy;
the embed pages keep their own policy (any site may frame them) and no
X-Frame-Options; and the pages run in Chromium without one CSP violation."""

from __future__ import annotations

import re

import pytest

from service.app import create_app
from solver.play import daily
from tests.helpers import served

EXAMPLES = {"code": None, "day": None, "game_id": "nosuchgame", "room_id": "nosuchroom", "job_id": "nosuchjob",
            "kind": "not-found", "name": "swagger-ui.css", "player_id": "p-nobody", "pack_id": "nosuchpack",
            "filename": "play.js", "level": "1", "theme": "corner"}


@pytest.fixture(scope="module")
def app(redis_url):
    return create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False, "EXPORT_LINES": 5,
                       "GAME_SSE_SECONDS": 0.1})


def _addresses(app) -> list[tuple[str, str]]:
    """(method, path) of every route, its parameters filled with a plausible value."""
    examples = dict(EXAMPLES, code=daily.daily_json(daily.today())["code"], day=daily.today().isoformat())
    found = []
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: examples.get(m.group(1), "x"), rule.rule)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            found.append((method, path))
    return found


def _policy(value: str) -> dict[str, str]:
    return {d.split(" ", 1)[0]: d.split(" ", 1)[1] if " " in d else "" for d in (p.strip() for p in value.split(";"))}


def _check(path: str, headers) -> None:
    assert headers.get("X-Content-Type-Options") == "nosniff", path
    assert headers.get("Referrer-Policy") in ("strict-origin-when-cross-origin", "no-referrer", "same-origin"), path
    policy = _policy(headers.get("Content-Security-Policy", ""))
    assert "'unsafe-inline'" not in policy.get("script-src", "'unsafe-inline'"), (path, policy)
    assert "'unsafe-eval'" not in policy["script-src"], (path, policy)
    if path.startswith("/embed/"):  # any site may frame the embed (docs/embed.md), and nothing else
        assert policy["frame-ancestors"] == "*" and "X-Frame-Options" not in headers, (path, policy)
    else:
        assert policy.get("frame-ancestors") == "'self'", (path, policy)


def test_every_answer_carries_the_security_headers(app):
    """Each route of the URL map, asked by its methods (bodies empty: problems
    too), as a browser and as an API client: every answer, whatever its status
    and type, carries the headers."""
    client = app.test_client()
    kinds = set()
    addresses = _addresses(app)
    assert len(addresses) > 40
    for method, path in addresses:
        for accept in ("text/html", "application/json"):
            r = client.open(path, method=method, headers={"Accept": accept})
            _check(path, r.headers)
            kinds.add(r.mimetype)
            r.close()
    for extra in ("/nowhere", "/v1/nowhere", "/v1/puzzles/ABCDEFG", "/static/nothing.js"):
        r = client.get(extra, headers={"Accept": "text/html"})
        assert r.status_code in (400, 404), extra
        _check(extra, r.headers)
    code = daily.daily_json(daily.today())["code"]
    r = client.get(f"/v1/puzzles/{code}.svg")
    assert r.mimetype == "image/svg+xml"
    _check(r.request.path, r.headers)
    assert {"text/html", "application/json", "application/problem+json", "image/svg+xml"} <= kinds | {r.mimetype}


def test_the_embed_may_be_framed_anywhere_and_nothing_else(app):
    client = app.test_client()
    code = daily.daily_json(daily.today())["code"]
    for path in ("/embed/daily", f"/embed/{code}"):
        r = client.get(path)
        assert r.status_code == 200 and "X-Frame-Options" not in r.headers
        assert _policy(r.headers["Content-Security-Policy"])["frame-ancestors"] == "*"
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    r = client.get("/static/embed.js", headers={"Origin": "https://elsewhere.example"})
    assert r.status_code == 200 and r.mimetype == "text/javascript"  # nosniff needs a script's own type
    r = client.get("/oembed", query_string={"url": "http://localhost/"}, headers={"Origin": "https://x.example"})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] in ("*", "https://x.example")
    for path in ("/", "/together", f"/p/{code}", "/docs", "/problems"):
        r = client.get(path)
        assert r.headers["X-Frame-Options"] == "SAMEORIGIN", path


def test_the_pages_run_under_the_policy(app, browser):
    """The pages in Chromium: no CSP violation reported (an inline script or
    style the policy refuses would be), and each page drew what it draws."""
    code = daily.daily_json(daily.today())["code"]
    with served(app) as url:
        ctx = browser.new_context()
        try:
            for path, drawn in (("/", "#board svg, #board .robot"), (f"/p/{code}", "#board svg, #board .robot"),
                                ("/together", "body"), ("/docs", ".swagger-ui .opblock"), ("/problems", "table"),
                                ("/embed/daily", "#board svg, #board .robot"), ("/nowhere", "body")):
                page = ctx.new_page()
                refused: list[str] = []
                page.on("console", lambda m, refused=refused: refused.append(m.text)
                        if "Content Security Policy" in m.text else None)
                page.goto(url + path)
                page.wait_for_selector(drawn, timeout=15_000)
                page.wait_for_timeout(300)
                assert refused == [], (path, refused)
                page.close()
        finally:
            ctx.close()


def test_headers_over_32_kib_in_all_are_refused_without_the_front(app):
    """gunicorn limits each header (8 KiB), not their sum: the app refuses a head
    over 32 KiB in all with 431 problem+json, as the front does."""
    client = app.test_client()
    many = {f"X-Fill-{i}": "a" * 1000 for i in range(34)}
    r = client.get("/healthz", headers=many)
    assert r.status_code == 431 and r.json["type"] == "/problems/request-headers-too-large", r.status_code
    _check("/healthz", r.headers)
    assert client.get("/healthz", headers={f"X-Fill-{i}": "a" * 1000 for i in range(28)}).status_code == 200
