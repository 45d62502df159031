"""Rate limits and work quotas per client (counted in Redis when there is one).

A client is its API key when it sends one (`X-API-Key`), else its address (the
socket's, or behind RICOCHET_TRUSTED_PROXIES proxies the forwarded one).

Every /v1 route has its own counter per client.  Routes that search
(solve, difficulty, random puzzles, new packs) get the tighter SEARCH limit;
everything else the DEFAULT.  A breach answers 429 problem+json with
Retry-After: the seconds until the window resets.  Health, metrics and the
documentation are never limited.  If the limit store is unreachable, requests
go through unlimited rather than failing.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from flask import Flask, Response, current_app, request
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address

from .errors import Problem, problem_response

SEARCH_ENDPOINTS = frozenset({"solving.solve_puzzle", "puzzles.rate", "puzzles.random_puzzle", "packs.create_pack"})


def register(app: Flask) -> Limiter:
    config = app.config

    def limit_for_route() -> str:
        return config["RATE_LIMIT_SEARCH"] if request.endpoint in SEARCH_ENDPOINTS else config["RATE_LIMIT_DEFAULT"]

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
        key_prefix="ricochet:ratelimit",
    )
    return limiter


def client_id() -> str:
    """Who is asking: a hash of the API key sent, else the client's address."""
    key = request.headers.get("X-API-Key")
    if key:
        return "key:" + hashlib.sha256(key.encode()).hexdigest()[:32]
    return "addr:" + (get_remote_address() or "unknown")


def charge(kind: str, cost: int) -> dict[str, str]:
    """Charge queued work to the client's quota for this hour: `solve` in
    worker-seconds (a queued solve's whole budget), `pack` in puzzle-moves
    (count x max_length).  Over the quota: 429 with Retry-After until the window
    turns.  Returns the headers that announce what is left."""
    config = current_app.config
    limit = config["QUOTAS"][kind]
    stores = current_app.extensions.get("stores")
    if stores is None or not config["RATE_LIMITS_ENABLED"]:
        return {}
    used, reset = stores.quotas.charge(kind, client_id(), cost, limit)
    headers = {"X-Quota-Kind": kind, "X-Quota-Limit": str(limit), "X-Quota-Remaining": str(max(0, limit - used)),
               "X-Quota-Reset": str(reset)}
    if used > limit:
        unit = "worker-seconds" if kind == "solve" else "puzzle-moves"
        raise Problem("quota-exceeded", f"this work ({cost} {unit}) is over your quota of {limit} {unit} "
                      f"an hour ({max(0, limit - used + cost)} left); retry after {reset} s",
                      headers={**headers, "Retry-After": str(reset)}, quota=kind)
    return headers


def announce(response: Response, headers: dict[str, Any]) -> Response:
    response.headers.update(headers)
    return response
