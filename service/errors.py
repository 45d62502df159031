"""Errors as RFC 9457 problem+json: what went wrong and what to fix."""

from __future__ import annotations

import logging
from typing import Any

import redis
from flask import Flask, Response, json
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from solver.errors import InvalidInput
from solver.production.generated import NoPuzzleFound

log = logging.getLogger(__name__)


class Problem(Exception):
    def __init__(self, status: int, title: str, detail: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail, self.extra = status, title, detail, extra
        self.headers = headers or {}


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
        raise Problem(400, "Invalid JSON", f"the request body nests arrays and objects more than "
                      f"{MAX_JSON_DEPTH} deep; no request of this API needs that")
    body = request.get_json(silent=True)
    if body is None:
        raise Problem(400, "Invalid JSON", "the request body must be a JSON document "
                      "(Content-Type: application/json)")
    return body


def problem_response(status: int, title: str, detail: str, **extra: Any) -> Response:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    return Response(json.dumps(body), status=status, mimetype="application/problem+json")


def register(app: Flask) -> None:
    @app.errorhandler(Problem)
    def _problem(e: Problem) -> Response:
        response = problem_response(e.status, e.title, e.detail, **e.extra)
        response.headers.update(e.headers)
        return response

    @app.errorhandler(InvalidInput)
    def _invalid(e: InvalidInput) -> Response:
        extra = {"errors": e.problems()} if e.others else {}
        return problem_response(400, "Invalid input", str(e), field=e.field, **extra)

    @app.errorhandler(NoPuzzleFound)
    def _not_found(e: NoPuzzleFound) -> Response:
        return problem_response(422, "No puzzle found", str(e))

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    def _redis_down(e: Exception) -> Response:
        log.warning("redis unavailable: %s", e)
        response = problem_response(503, "Service Unavailable", "the store is unreachable; retry shortly")
        response.headers["Retry-After"] = "5"
        return response

    @app.errorhandler(RequestEntityTooLarge)
    def _too_large(e: RequestEntityTooLarge) -> Response:
        limit = app.config["MAX_CONTENT_LENGTH"]
        return problem_response(413, "Content Too Large",
                                f"the request body is larger than the limit of {limit >> 10} KiB "
                                f"({limit / (1 << 20):g} MiB); send one puzzle per request")

    @app.errorhandler(HTTPException)
    def _http(e: HTTPException) -> Response:
        if isinstance(e.response, Response):  # already a problem (the rate limiter builds its own)
            return e.response
        return problem_response(e.code or 500, e.name, e.description or e.name)

    @app.errorhandler(Exception)
    def _unexpected(e: Exception) -> Response:
        log.exception("unhandled error")
        return problem_response(500, "Internal Server Error", "the server failed; the error is logged")
