"""The pages and the service's own routes: the play page (with Open Graph tags), problem
types, the contract and its docs, health and readiness."""

from __future__ import annotations

import functools
import html
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, current_app, request

from application.problems import echo
from solver.errors import InvalidInput
from solver.model.puzzle import Puzzle
from solver.play import daily

from . import i18n, security
from .caching import cached
from .common import app_stores, public_root, public_url
from .declare import Reply, operation
from .errors import KINDS, Problem, problem_response
from .requests.pages import DOCS_ASSETS, AssetPath, PageQuery, PlayQuery, ProblemPath, RoomPage
from .shapes import Health, Ready

bp = Blueprint("meta", __name__)

OPENAPI = Path(__file__).resolve().parent / "openapi.yaml"  # the top-level openapi.yaml links here
PAGE = Path(__file__).resolve().parent / "static" / "index.html"
TOGETHER = Path(__file__).resolve().parent / "static" / "together.html"
HTML = Reply("HTML", media={"text/html": {"schema": {"type": "string"}}})
# The inline style blocks of the pages built here, admitted by their hash (service/security.py)
PROBLEMS_STYLE = ("body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto}td{padding:.3rem;"
                  "vertical-align:top;border-bottom:1px solid #ddd}")
DOCS_STYLE = ("body{font-family:system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em}"
              "td{padding:.3em .8em;border-bottom:1px solid #ddd;vertical-align:top}")


def _page(title: str, image: str, description: str) -> Response:
    """The play page with Open Graph tags, so that a shared link unfurls with the board."""
    root = public_root()
    tags = "\n  ".join(
        f'<meta property="{p}" content="{html.escape(v, quote=True)}">'
        for p, v in (("og:type", "website"), ("og:site_name", "Ricochet Robots"), ("og:title", title),
                     ("og:description", description), ("og:image", root + image), ("og:url", root + request.path)))
    tags += '\n  <meta name="twitter:card" content="summary_large_image">'
    oembed = f"{root}/oembed?{urlencode({'url': public_url()})}"
    tags += (f'\n  <link rel="alternate" type="application/json+oembed" href="{html.escape(oembed, quote=True)}" '
             f'title="{html.escape(title, quote=True)}">')
    return i18n.page(request, PAGE, tags)


@operation(bp, "get /", "playPage", tag="service", errors=(400,), replies={200: HTML}, query=PlayQuery,
           summary="A web page to play the daily puzzle (or, with ?length=N, a random one)",
           description="Carries Open Graph tags (og:title, og:image = today's PNG), so a shared link unfurls")
def play_daily(query: dict[str, Any]) -> Response:
    """The play page: today's puzzle (or ?length=N for a random one, drawn by the page: checked here)."""
    today = daily.today()
    record = daily.daily_json(today)
    return _page(f"Ricochet Robots: daily puzzle #{daily.number(today)}, {today.isoformat()}",
                 f"/v1/daily/{today.isoformat()}.png",
                 f"Today's puzzle: {record['optimal_length']} moves ({record['difficulty']['grade']}). "
                 "Can you find the shortest way?")


@operation(bp, "get /together", "togetherPage", tag="service", replies={200: HTML}, query=PageQuery,
           summary="A web page to play together: open a room, send its link, play the game")
@operation(bp, "get /r/<room_id>", "roomPage", tag="service", replies={200: HTML}, path=RoomPage, query=PageQuery,
           summary="The page of a room, by the link its host sent: take a seat, then play")
def together(query: dict[str, Any], room_id: str | None = None) -> Response:
    """The page to play together (a room's, or one to open a room from); the page reads the room itself."""
    return i18n.page(request, TOGETHER)


@operation(bp, "get /p/<code>", "playPuzzle", tag="service", replies={200: HTML}, query=PageQuery,
           summary="The play page for a puzzle, by its code",
           description="Carries Open Graph tags (og:title, og:image = the puzzle's PNG), so a shared link unfurls")
def play_code(code: str, query: dict[str, Any]) -> Response:
    """The play page for any puzzle, by its code (a bad code: the page says so)."""
    try:
        p = Puzzle.from_code(code)
    except InvalidInput:
        return _page("Ricochet Robots", "/v1/boards/green-A,yellow-B,red-B,blue-B.png", "Ricochet Robots puzzles")
    target = p.goal.colour or "any robot"
    return _page(f"Ricochet Robots puzzle {p.code()}", f"/v1/puzzles/{p.code()}.png",
                 f"Bring {target} to its target in as few moves as you can.")


@operation(bp, "get /problems", "problemTypes", tag="service", replies={200: HTML},
           summary="Every problem type, its status, title and meaning (HTML)")
@operation(bp, "get /problems/<kind>", "problemType", tag="service", errors=(404,), replies={200: HTML},
           summary="What one problem type means (the page a problem's `type` URI names)", path=ProblemPath)
def problem_types(kind: str | None = None) -> Response:
    """What each problem `type` means: the page its URI names."""
    if kind is not None and kind not in KINDS:
        raise Problem("not-found", f"no problem type {echo(kind)!r}; /problems lists them")
    rows = "".join(
        f"<tr id={k}><td><a href=/problems/{k}><code>/problems/{k}</code></a></td><td>{status}</td>"
        f"<td>{html.escape(title)}</td><td>{html.escape(text)}</td></tr>"
        for k, (status, title, text) in KINDS.items() if kind in (None, k))
    page = ("<!doctype html><html lang=en><meta charset=utf-8><title>ricochet-service problem types</title>"
            f"<style>{PROBLEMS_STYLE}</style><h1>Problem types</h1><p>Every error is "
            "<code>application/problem+json</code> (RFC 9457); its <code>type</code> is one of these.</p>"
            f"<table><tr><th>type</th><th>status</th><th>title</th><th>meaning</th></tr>{rows}</table></html>")
    response = Response(page, mimetype="text/html")
    response.headers["Cache-Control"] = "public, max-age=86400"
    response.headers[security.CSP] = security.policy(styles=(PROBLEMS_STYLE,))
    return response


@operation(bp, "get /openapi.yaml", "openapi", tag="service", summary="This contract", replies={200: Reply(
    "The OpenAPI document", media={"application/yaml": {"schema": {
        "type": "object", "description": "An OpenAPI 3.1 document (a YAML mapping)"}}})})
def openapi_document() -> Response:
    return Response(OPENAPI.read_text(encoding="utf-8"), mimetype="application/yaml")


@functools.cache
def _swagger_ui() -> tuple[Path, str]:
    """Swagger UI's files as the flask-swagger-ui package installs them (from the
    package registry, never a CDN), and their version."""
    import flask_swagger_ui

    dist = Path(flask_swagger_ui.__file__).resolve().parent / "dist"
    return dist, (dist / "VERSION").read_text(encoding="utf-8").strip()


@functools.cache
def _docs_asset(name: str) -> bytes:
    return (_swagger_ui()[0] / name).read_bytes()


@operation(bp, "get /docs", "docs", tag="service", replies={200: HTML},
           summary="This documentation, interactive (Swagger UI over this document), with a plain list without "
                   "scripts")
def docs() -> Response:
    """The API documentation: Swagger UI over openapi.yaml (try any operation from
    the page), with every operation listed for a browser without scripts."""
    response = Response(_docs_page(), mimetype="text/html")
    response.headers["Cache-Control"] = "no-cache"
    response.headers[security.CSP] = security.policy(any_style=True)  # Swagger UI renders <style> elements
    return response


@functools.cache
def _docs_page() -> str:
    """The /docs page, built once: the contract does not change while the process runs."""
    import yaml

    spec = yaml.safe_load(OPENAPI.read_text(encoding="utf-8"))
    rows = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            codes = ", ".join(str(c) for c in op.get("responses", {}))
            rows.append(f"<tr><td><code>{method.upper()}</code></td><td><code>{html.escape(path)}</code></td>"
                        f"<td>{html.escape(op.get('summary', ''))}</td><td>{codes}</td></tr>")
    _, version = _swagger_ui()
    title = html.escape(f"{spec['info']['title']} {spec['info']['version']}")
    page = (f"<!doctype html><html lang=en><meta charset=utf-8><title>{title} API</title>"
            f'<meta name="generator" content="Swagger UI {html.escape(version)}">'
            '<link rel=stylesheet href=/docs/assets/swagger-ui.css>'
            '<link rel=stylesheet href=/docs/assets/index.css>'
            '<link rel=icon type=image/png href=/docs/assets/favicon-32x32.png sizes=32x32>'
            "<div id=swagger-ui></div>"
            f"<noscript><style>{DOCS_STYLE}</style>"
            f"<h1>{title}</h1><p>{html.escape(spec['info'].get('description', ''))}</p>"
            "<p>The contract: <a href=/openapi.yaml>openapi.yaml</a> (OpenAPI 3.1).</p>"
            "<table><tr><th>method</th><th>path</th><th>what</th><th>responses</th></tr>"
            + "".join(rows) + "</table></noscript>"
            "<script src=/docs/assets/swagger-ui-bundle.js></script>"
            "<script src=/docs/assets/swagger-ui-standalone-preset.js></script>"
            "<script src=/static/docs.js></script></html>")
    return page


@operation(bp, "get /docs/assets/<name>", "docsAsset", tag="service", errors=(304, 404),
           summary="One of Swagger UI's files, served from the installed package (no CDN)",
           path=AssetPath,
           replies={200: Reply("The file, with a strong ETag", cached=True, media={
               "text/javascript": {"schema": {"type": "string"}}, "text/css": {"schema": {"type": "string"}},
               "image/png": {"schema": {"type": "string", "format": "binary"}}})})
def docs_asset(name: str) -> Response:
    """One of Swagger UI's files, from the installed package."""
    if name not in DOCS_ASSETS:
        raise Problem("not-found", f"no docs asset {echo(name)!r}: the page uses {', '.join(DOCS_ASSETS)}")
    mimetype = {"js": "text/javascript", "css": "text/css", "png": "image/png"}[name.rsplit(".", 1)[1]]
    return cached(Response(_docs_asset(name), mimetype=mimetype))


@operation(bp, "get /healthz", "healthz", tag="service", summary="The process is up",
           replies={200: Reply("Up", Health)})
def healthz() -> Any:
    return {"status": "ok"}


READY_FOR = 3.0  # seconds a worker's reply to the readiness ping is trusted


@operation(bp, "get /readyz", "readyz", tag="service", summary="Redis reachable and at least one worker replying",
           errors=(503,), replies={200: Reply("Ready", Ready)})
def readyz() -> Any:
    """Ready when Redis answers and at least one worker replies to a ping."""
    stores = app_stores()
    if stores is None:
        return {"status": "ready", "redis": "not configured", "workers": 0}
    stores.ping()
    # One reply is enough (the broadcast ends at the first), and a reply is good
    # for a few seconds in this process: a busy probe costs no worker a thing.
    cached = current_app.extensions.get("ready_until", 0.0)
    if cached > time.monotonic():
        workers = [True]
    else:
        workers = current_app.extensions["celery"].control.ping(timeout=1.0, limit=1) or []
        if workers:
            current_app.extensions["ready_until"] = time.monotonic() + READY_FOR
    if not workers:
        response = problem_response("unavailable", "no worker replied; start one with `ricochet worker`")
        response.headers["Retry-After"] = "5"
        return response
    return {"status": "ready", "redis": "ok", "workers": len(workers)}
