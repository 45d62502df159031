"""Rate limits per client (Flask-Limiter, counted in Redis when there is one).

Every /v1 route has its own counter per client address.  Routes that search
(solve, difficulty, random puzzles, new packs) get the tighter SEARCH limit;
everything else the DEFAULT.  A breach answers 429 problem+json with
Retry-After: the seconds until the window resets.  Health, metrics and the
documentation are never limited.  If the limit store is unreachable, requests
go through unlimited rather than failing.
"""

from __future__ import annotations

import time

from flask import Flask, Response, request
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address

from .errors import problem_response

SEARCH_ENDPOINTS = frozenset({"api.solve_puzzle", "api.rate", "api.random_puzzle", "api.create_pack"})


def register(app: Flask) -> Limiter:
    config = app.config

    def limit_for_route() -> str:
        return config["RATE_LIMIT_SEARCH"] if request.endpoint in SEARCH_ENDPOINTS else config["RATE_LIMIT_DEFAULT"]

    def breached(limit: RequestLimit) -> Response:
        retry_after = max(1, int(limit.reset_at - time.time()))
        response = problem_response(
            429, "Too Many Requests",
            f"rate limit of {limit.limit} for this route exceeded; retry after {retry_after} s",
            limit=str(limit.limit))
        response.headers["Retry-After"] = str(retry_after)
        return response

    limiter = Limiter(
        get_remote_address,
        app=app,
        storage_uri=config["REDIS_URL"] or "memory://",
        storage_options={"socket_timeout": 1, "socket_connect_timeout": 1},
        strategy="fixed-window",
        default_limits=[limit_for_route],
        default_limits_exempt_when=lambda: not request.path.startswith("/v1/"),
        on_breach=breached,
        swallow_errors=True,
        enabled=config["RATE_LIMITS_ENABLED"],
        key_prefix="ricochet:ratelimit",
    )
    return limiter
