"""Every answer that is not a success, as an exception that carries the
problem+json document (RFC 9457) the service sent: a program branches on the
class (chosen by status) or on `.kind` (the last part of the problem's `type`),
and reads `.detail` for what to fix and `.rate_limit` for the limits then."""

from __future__ import annotations

from typing import Any

from .ratelimit import RateLimit

__all__ = ["ApiError", "Conflict", "Forbidden", "Gone", "InvalidInput", "NotFound", "RateLimited", "ServerError",
           "TooLarge", "Unauthorized", "Unavailable", "Unprocessable", "Unreachable", "error_for"]

Json = dict[str, Any]


class ApiError(Exception):
    """A problem+json answer: `status`, the `problem` document, its `kind`, `title`,
    `detail` and `field`; `retry_after` (seconds) and `rate_limit` from its headers."""

    def __init__(self, status: int, problem: Json, headers: Any = None) -> None:
        self.status = status
        self.problem = problem
        self.type: str = problem.get("type", "about:blank")
        self.kind = self.type.rsplit("/", 1)[-1]
        self.title: str = problem.get("title", "")
        self.detail: str = problem.get("detail", "")
        self.field: str | None = problem.get("field")
        self.headers = headers
        self.rate_limit = RateLimit.from_headers(headers) if headers is not None else RateLimit()
        self.retry_after = self.rate_limit.retry_after
        super().__init__(f"{status} {self.title}: {self.detail}")


class InvalidInput(ApiError):
    """400: a field is wrong; `.field` names it (`.problem["errors"]` lists each when several are)."""


class Unauthorized(ApiError):
    """401: an API key not issued or revoked, or a player's token missing or wrong."""


class Forbidden(ApiError):
    """403: not yours (another client's job, a room you do not host)."""


class NotFound(ApiError):
    """404 (also a daily puzzle not yet published: `.kind == "not-yet-published"`)."""


class Conflict(ApiError):
    """409: out of turn in a game, or a job not finished yet."""


class Gone(ApiError):
    """410: kept no longer (an expired pack)."""


class TooLarge(ApiError):
    """413: a request body over the service's limit."""


class Unprocessable(ApiError):
    """422: well formed but impossible (out of range, unsolvable, needs a longer search)."""


class RateLimited(ApiError):
    """429: a rate limit or quota; `.retry_after` says when to try again, `.rate_limit` which limit."""

    @property
    def limit(self) -> str | None:
        """The limit exceeded, as the problem names it."""
        return self.problem.get("limit")


class ServerError(ApiError):
    """500: the service failed; the problem says no more than that."""


class Unavailable(ApiError):
    """503: Redis, a worker or queue room is missing now; `.retry_after` says when to try again."""


class Unreachable(ApiError):
    """No HTTP answer at all (connection refused, timeout): `status` is 0."""


_BY_STATUS: dict[int, type[ApiError]] = {400: InvalidInput, 401: Unauthorized, 403: Forbidden, 404: NotFound,
                                         409: Conflict, 410: Gone, 413: TooLarge, 422: Unprocessable,
                                         429: RateLimited, 500: ServerError, 503: Unavailable}


def error_for(status: int, problem: Json, headers: Any = None) -> ApiError:
    """The exception for an answer's status (ApiError itself for one without a class of its own)."""
    return _BY_STATUS.get(status, ApiError)(status, problem, headers)
