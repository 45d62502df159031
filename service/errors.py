"""Errors as RFC 9457 problem+json: what went wrong and what to fix."""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

from flask import Flask, Response, json, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed, RequestEntityTooLarge

from application import UNAVAILABLE
from application.problems import BY_STATUS, KINDS, Problem, problem_type
from solver.errors import InvalidInput
from solver.production.generated import NoPuzzleFound

log = logging.getLogger(__name__)


def count_in(text: str | None, most: int) -> int | None:
    """The whole number `text` writes in at most `most` ASCII digits, else None:
    str.isdigit() alone lets through digits such as '²' that int() refuses."""
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > most:
        return None
    return int(text)


MAX_JSON_DEPTH = 32  # no request the API takes nests deeper; checked before the document is parsed


def json_depth(raw: bytes) -> int:
    """How deeply arrays and objects nest in a JSON text (strings skipped), in one
    pass over the bytes: a deeply nested body is refused before the parser
    recurses into it."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_JSON_DEPTH:
                    return deepest
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def json_body() -> Any:
    """The request's JSON document, or a 400 problem that says how to send one."""
    from flask import request

    if json_depth(request.get_data(cache=True)) > MAX_JSON_DEPTH:
        raise Problem("invalid-json", f"the request body nests arrays and objects more than "
                      f"{MAX_JSON_DEPTH} deep; no request of this API needs that")
    body = request.get_json(silent=True)
    if body is None:
        raise Problem("invalid-json", "the request body must be a JSON document "
                      "(Content-Type: application/json)")
    return body


def problem_response(kind: str, detail: str, status: int | None = None, **extra: Any) -> Response:
    """A problem+json response of one of KINDS (`status` only for an HTTP error without a kind of its own)."""
    code, title, _ = KINDS[kind]
    status = status or code
    body = {"type": problem_type(kind), "title": title, "status": status, "detail": detail, **extra}
    return Response(json.dumps(body), status=status, mimetype="application/problem+json")


ERROR_PAGE = Path(__file__).resolve().parent / "static" / "error.html"
API_PATHS = ("/v1/", "/oembed", "/openapi", "/metrics", "/healthz", "/readyz", "/static/", "/problems")


JSON_TYPES = ("application/json", "application/problem+json")


def wants_page() -> bool:
    """A person's browser: text/html named outright, at the Accept header's top
    quality, above any JSON.  Werkzeug's `best` prefers a type with parameters
    whatever its quality, so Chromium's `application/signed-exchange;v=b3;q=0.7`
    came out best; `*/*` alone (curl, most clients) names no HTML."""
    accepted = [(value.split(";")[0].strip().lower(), q) for value, q in request.accept_mimetypes]
    html = max((q for value, q in accepted if value == "text/html"), default=0)
    json_q = max((q for value, q in accepted if value in JSON_TYPES), default=0)
    return html > 0 and html > json_q and html >= max(q for _, q in accepted)


def _as_page(response: Response) -> Response:
    """A problem met by a person's browser on a page's address (a mistyped link,
    /?length=99) is answered as a page in the reader's language, with the same
    status; the API's addresses keep answering problem+json."""
    from flask import request

    from . import i18n

    if response.mimetype != "application/problem+json" or request.method != "GET" \
            or request.path.startswith(API_PATHS) or not wants_page():
        return response
    detail = html.escape(str(json.loads(response.get_data()).get("detail", "")))
    page = i18n.page(request, ERROR_PAGE, remember=False)
    text = page.get_data(as_text=True).replace("<!-- status -->", str(response.status_code))
    page.set_data(text.replace("<!-- detail -->", detail))
    page.status_code = response.status_code
    for name in ("Retry-After", "Allow"):
        if name in response.headers:
            page.headers[name] = response.headers[name]
    return page


def register(app: Flask) -> None:
    @app.errorhandler(Problem)
    def _problem(e: Problem) -> Response:
        response = problem_response(e.kind, e.detail, **e.extra)
        response.headers.update(e.headers)
        return response

    @app.errorhandler(InvalidInput)
    def _invalid(e: InvalidInput) -> Response:
        extra: dict[str, Any] = {"errors": e.problems()} if e.others else {}
        return problem_response("invalid-input", str(e), field=e.field, **extra)

    @app.errorhandler(NoPuzzleFound)
    def _not_found(e: NoPuzzleFound) -> Response:
        return problem_response("no-puzzle-found", str(e))

    def _redis_down(e: Exception) -> Response:
        log.warning("redis unavailable: %s", e)
        # The stores' Unavailable says which (unreachable, or full); the broker's errors are an outage.
        response = problem_response("unavailable", getattr(e, "detail", "the store is unreachable; retry shortly"))
        response.headers["Retry-After"] = str(getattr(e, "retry_after", 5))
        return response

    for unreachable in UNAVAILABLE:  # the stores' Unavailable, and the broker's client noticing first
        app.register_error_handler(unreachable, _redis_down)

    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(e: RequestEntityTooLarge) -> Response:
        limit = app.config["MAX_CONTENT_LENGTH"]
        return problem_response("too-large",
                                f"the request body is larger than the limit of {limit >> 10} KiB "
                                f"({limit / (1 << 20):g} MiB); send one puzzle per request")

    @app.errorhandler(HTTPException)
    def _http(e: HTTPException) -> Response:
        if isinstance(e.response, Response):  # already a problem (the rate limiter builds its own)
            return e.response
        kind = {404: "not-found", 405: "method-not-allowed", 413: "too-large", 414: "uri-too-long",
                431: "request-headers-too-large"}.get(e.code or 500)
        detail = e.description or e.name
        if isinstance(e, MethodNotAllowed) and e.valid_methods:  # TRACE, PROPFIND, DELETE /v1/daily, ...
            detail = (f"{request.method} is not a method of {request.path}; "
                      f"it takes {', '.join(e.valid_methods)} (Allow)")
        response = problem_response(kind or BY_STATUS.get(e.code or 500, "invalid-input"), detail,
                                    status=e.code or 500)
        if kind is None:  # an HTTP error without a kind of its own keeps its name
            body = json.loads(response.get_data())
            body["title"] = e.name
            response.set_data(json.dumps(body))
        for name, value in e.get_headers():  # Allow on 405, and the like
            if name.lower() not in ("content-type", "content-length"):
                response.headers[name] = value
        return response

    app.after_request(_as_page)

    @app.errorhandler(Exception)
    def _unexpected(e: Exception) -> Response:
        log.exception("unhandled error")
        return problem_response("server-error", "the server failed; the error is logged")
