"""The ways a use case refuses: a Problem of one of KINDS, which the API answers
as RFC 9457 problem+json (service/errors.py) and the CLI prints."""

from __future__ import annotations

from typing import Any

# Every kind of problem the API answers: its status, its title, and what it means.
# A problem's `type` is /problems/<kind>, a page the service serves itself, so
# that clients branch on `type` (stable) and people read `title` and `detail`.
KINDS: dict[str, tuple[int, str, str]] = {
    "invalid-input": (400, "Invalid input", "A field of the request (body, query, path or header) is not what "
                      "the API takes. `field` names it, `errors` lists every bad field, `detail` says what to send."),
    "invalid-json": (400, "Invalid JSON", "The body is not a JSON document, or nests deeper than any request "
                     "needs. Send Content-Type: application/json and one document."),
    "unauthorized": (401, "Unauthorized", "The request needs a player token (Authorization: Bearer <token>), "
                     "or sent an X-API-Key the service did not issue or has revoked."),
    "forbidden": (403, "Forbidden", "The token given does not allow this, or the job is another client's: "
                  "only a client that asked for a job may cancel it."),
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
    "address-not-allowed": (422, "Address not allowed", "A webhook URL that resolves to a private, loopback, "
                            "multicast or reserved address (or does not resolve, or no delivery could send it); "
                            "give a public receiver."),
    "idempotency-key-reused": (422, "Idempotency key reused", "This Idempotency-Key was used with another "
                               "request body; use a new key for a new request."),
    "request-headers-too-large": (431, "Request header fields too large", "The request's headers are over the "
                                  "size limit."),
    "rate-limited": (429, "Too many requests", "This client went over a route's rate limit; retry after "
                     "Retry-After seconds."),
    "quota-exceeded": (429, "Quota exceeded", "This work is over the client's hourly quota; X-Quota-* headers "
                       "and Retry-After say what is left and when it resets."),
    "server-error": (500, "Internal server error", "The server failed; the error is logged."),
    "not-implemented": (501, "Not implemented", "The service does not offer what was asked in this form: "
                        "oEmbed's format=xml (only JSON is offered)."),
    "unavailable": (503, "Service unavailable", "A part the request needs (the store, a worker, a queue with "
                    "room) is not available now; retry after Retry-After seconds."),
}
BY_STATUS = {status: kind for kind, (status, _, _) in reversed(KINDS.items())}  # the first kind per status


ECHO = 64  # what a detail repeats of a request's id, code or address at most (characters)


def echo(text: str, limit: int = ECHO) -> str:
    """`text` as a problem's detail repeats it: its first `limit` characters, then an ellipsis."""
    return text if len(text) <= limit else text[:limit] + "…"


def problem_type(kind: str) -> str:
    return f"/problems/{kind}"


class Problem(Exception):
    """A problem of one of KINDS: its status and title come from the kind."""

    def __init__(self, kind: str, detail: str, headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.title, _ = KINDS[kind]
        self.kind, self.detail, self.extra = kind, detail, extra
        self.headers = headers or {}


