"""Errors as RFC 9457 problem+json: what went wrong and what to fix."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, json
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from solver.errors import InvalidInput
from solver.production.generated import NoPuzzleFound
from workers.stores import UNREACHABLE

log = logging.getLogger(__name__)


# Every kind of problem the API answers: its status, its title, and what it means.
# A problem's `type` is /problems/<kind>, a page the service serves itself, so
# that clients branch on `type` (stable) and people read `title` and `detail`.
KINDS: dict[str, tuple[int, str, str]] = {
    "invalid-input": (400, "Invalid input", "A field of the request (body, query, path or header) is not what "
                      "the API takes. `field` names it, `errors` lists every bad field, `detail` says what to send."),
    "invalid-json": (400, "Invalid JSON", "The body is not a JSON document, or nests deeper than any request "
                     "needs. Send Content-Type: application/json and one document."),
    "unauthorized": (401, "Unauthorized", "The request needs a player token: Authorization: Bearer <token>."),
    "forbidden": (403, "Forbidden", "The token given does not allow this."),
    "not-found": (404, "Not found", "Nothing is at this address: no such route, or the resource (job, pack, "
                  "game, day) does not exist or has expired."),
    "not-yet-published": (404, "Not yet published", "A daily puzzle is published at 00:00 UTC on its day; "
                          "nothing of it (puzzle, solution, hint, picture) is served before."),
    "method-not-allowed": (405, "Method not allowed", "The route exists but not for this method; `Allow` "
                           "lists the methods it takes."),
    "conflict": (409, "Conflict", "The request clashes with the resource's state now: a game action out of "
                 "turn, or an Idempotency-Key whose first request is still being created."),
    "not-ready": (409, "Not ready", "The job has not finished; follow it at the job URL given."),
    "gone": (410, "Gone", "The resource expired; create it again (the same request and seed give the same result)."),
    "too-large": (413, "Content too large", "The request body is over the size limit."),
    "uri-too-long": (414, "URI too long", "The request line is over the size limit."),
    "out-of-range": (422, "Out of range", "The request is well formed but asks for what no puzzle can be, or "
                     "what the service does not hold (a length beyond its pools and bank)."),
    "no-puzzle-found": (422, "No puzzle found", "The search for a fitting puzzle gave up within the request's "
                        "budget; try another seed, or make a pack (POST /v1/packs) for slow requests."),
    "unsolvable": (422, "Unsolvable", "The puzzle has no solution, so there is nothing to rate or hint."),
    "needs-a-job": (422, "Needs a longer search", "The puzzle's optimum takes longer to find than a request may "
                    "search; POST /v1/solve queues that search, and the request works once it is solved."),
    "idempotency-key-reused": (422, "Idempotency key reused", "This Idempotency-Key was used with another "
                               "request body; use a new key for a new request."),
    "request-headers-too-large": (431, "Request header fields too large", "The request's headers are over the "
                                  "size limit."),
    "rate-limited": (429, "Too many requests", "This client went over a route's rate limit; retry after "
                     "Retry-After seconds."),
    "quota-exceeded": (429, "Quota exceeded", "This work is over the client's hourly quota; X-Quota-* headers "
                       "and Retry-After say what is left and when it resets."),
    "server-error": (500, "Internal server error", "The server failed; the error is logged."),
    "unavailable": (503, "Service unavailable", "A part the request needs (the store, a worker, a queue with "
                    "room) is not available now; retry after Retry-After seconds."),
}
BY_STATUS = {status: kind for kind, (status, _, _) in reversed(KINDS.items())}  # the first kind per status


def problem_type(kind: str) -> str:
    return f"/problems/{kind}"


class Problem(Exception):
    """A problem of one of KINDS: its status and title come from the kind."""

    def __init__(self, kind: str, detail: str, headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.title, _ = KINDS[kind]
        self.kind, self.detail, self.extra = kind, detail, extra
        self.headers = headers or {}


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


def register(app: Flask) -> None:
    @app.errorhandler(Problem)
    def _problem(e: Problem) -> Response:
        response = problem_response(e.kind, e.detail, **e.extra)
        response.headers.update(e.headers)
        return response

    @app.errorhandler(InvalidInput)
    def _invalid(e: InvalidInput) -> Response:
        extra = {"errors": e.problems()} if e.others else {}
        return problem_response("invalid-input", str(e), field=e.field, **extra)

    @app.errorhandler(NoPuzzleFound)
    def _not_found(e: NoPuzzleFound) -> Response:
        return problem_response("no-puzzle-found", str(e))

    def _redis_down(e: Exception) -> Response:
        log.warning("redis unavailable: %s", e)
        response = problem_response("unavailable", "the store is unreachable; retry shortly")
        response.headers["Retry-After"] = "5"
        return response

    for unreachable in UNREACHABLE:  # the stores' Unavailable, and the broker's client noticing first
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
        response = problem_response(kind or BY_STATUS.get(e.code or 500, "invalid-input"), e.description or e.name,
                                    status=e.code or 500)
        if kind is None:  # an HTTP error without a kind of its own keeps its name
            body = json.loads(response.get_data())
            body["title"] = e.name
            response.set_data(json.dumps(body))
        for name, value in e.get_headers():  # Allow on 405, and the like
            if name.lower() not in ("content-type", "content-length"):
                response.headers[name] = value
        return response

    @app.errorhandler(Exception)
    def _unexpected(e: Exception) -> Response:
        log.exception("unhandled error")
        return problem_response("server-error", "the server failed; the error is logged")
