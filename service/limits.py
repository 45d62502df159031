"""Rate limits and work quotas per client (counted in Redis when there is one).

A client is its API key when it sends one (`X-API-Key`), else its address (the
socket's, or behind RICOCHET_TRUSTED_PROXIES proxies the forwarded one).

Every /v1 route has its own counter per client.  Routes that search
(declared `searches=True`: solve, difficulty, random puzzles, new packs) get the tighter SEARCH limit;
everything else the DEFAULT.  A breach answers 429 problem+json with
Retry-After: the seconds until the window resets.  Health, metrics and the
documentation are never limited.  If the limit store is unreachable, requests
go through unlimited rather than failing.
"""

from __future__ import annotations

import hashlib
import time

from flask import Flask, Response, current_app, request
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address

from workers.stores.quotas import RATE_LIMIT_PREFIX

from .declare import operations_of
from .errors import problem_response


def register(app: Flask) -> Limiter:
    config = app.config

    def limit_for_route() -> str:
        return config["RATE_LIMIT_SEARCH"] if searches() else config["RATE_LIMIT_DEFAULT"]

    def breached(limit: RequestLimit) -> Response:
        retry_after = max(1, int(limit.reset_at - time.time()))
        response = problem_response(
            "rate-limited", f"rate limit of {limit.limit} for this route exceeded; retry after {retry_after} s",
            limit=str(limit.limit))
        response.headers["Retry-After"] = str(retry_after)
        return response

    limiter = Limiter(
        client_id,
        app=app,
        storage_uri=config["REDIS_URL"] or "memory://",
        storage_options={"socket_timeout": 1, "socket_connect_timeout": 1},
        strategy="fixed-window",
        default_limits=[limit_for_route],
        default_limits_exempt_when=lambda: not request.path.startswith("/v1/"),
        on_breach=breached,
        swallow_errors=True,
        enabled=config["RATE_LIMITS_ENABLED"],
        key_prefix=RATE_LIMIT_PREFIX,
    )
    return limiter


def client_id() -> str:
    """Who is asking: a hash of the API key sent, else the client's address."""
    key = request.headers.get("X-API-Key")
    if key:
        return "key:" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return "addr:" + (get_remote_address() or "unknown")


def searches() -> bool:
    """Whether this request's operation is declared as one that searches."""
    view = current_app.view_functions.get(request.endpoint or "")
    rule = request.url_rule.rule if request.url_rule is not None else None
    method = "get" if request.method == "HEAD" else request.method.lower()
    return any(op.searches for (m, path), op in operations_of(view).items() if m == method and path == rule)
