"""Rate limits and work quotas per client (counted in Redis when there is one).

A client is its API key when it sends one (`X-API-Key`, issued with `ricochet
keys create`), else its address (the socket's, or behind
RICOCHET_TRUSTED_PROXIES proxies the forwarded one).  A key the service did not
issue, or revoked, is refused with 401 before anything else: an invented key is
no way around an address's limits.  Keys are looked up in the store and kept
in the process for KEY_CACHE_SECONDS (a revoked key is refused within that).

Event streams and exports are also limited in how many one client holds at
once, over every web process (`hold`, counted in Redis): one client cannot take
every stream or export place of the deployment.

Every /v1 route has its own counter per client.  Routes that search
(declared `searches=True`: solve, difficulty, random puzzles, new packs) get the tighter SEARCH limit;
everything else the DEFAULT.  A breach answers 429 problem+json with
Retry-After: the seconds until the window resets.  Health, metrics and the
documentation are never limited.  If the limit store is unreachable, requests
go through unlimited rather than failing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, current_app, g, request
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address

from application.clients import RATE_LIMIT_PREFIX, digest, give_back, issued, take_place

from .declare import operations_of
from .errors import Problem, problem_response

KEY_CACHE_SECONDS = 30.0
KEY_CACHE_SIZE = 1024  # keys remembered per process (a record is a few hundred bytes)


def register(app: Flask) -> Limiter:
    config = app.config
    # Before the limiter's own check: an unknown key is 401, never a client of its own.
    app.before_request(_identify)

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
        storage_uri=config["RATE_LIMIT_STORAGE"][0],  # workers.failover.limiter_storage: Sentinel-aware
        storage_options=config["RATE_LIMIT_STORAGE"][1],
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
    """Who is asking: the name of the issued key sent, else the client's address."""
    record = g.get("api_key")
    if record is not None:
        return "key:" + record["name"]
    return client_address()


def client_address() -> str:
    """The client's address, whether or not it sent a key."""
    return "addr:" + (get_remote_address() or "unknown")


def key_quotas() -> dict[str, int]:
    """The quotas of the issued key sent, where it has its own."""
    record = g.get("api_key")
    return dict(record["quotas"]) if record is not None else {}


_known: dict[str, tuple[float, dict[str, Any]]] = {}


def _identify() -> None:
    """Check the X-API-Key sent (if any) against the keys issued: 401 unless known."""
    key = request.headers.get("X-API-Key")
    if key is None or not request.path.startswith("/v1/"):
        return
    hashed = digest(key)
    now = time.monotonic()
    cached = _known.get(hashed)
    if cached is not None and cached[0] > now:
        g.api_key = cached[1]
        return
    record = issued(current_app.extensions.get("stores"), key)
    if record is None:
        raise Problem("unauthorized", "this X-API-Key was not issued here, or was revoked: send a key the "
                      "operator issued (ricochet keys create), or none to be limited by your address",
                      headers={"WWW-Authenticate": 'ApiKey header="X-API-Key"'}, field="X-API-Key")
    if len(_known) >= KEY_CACHE_SIZE:
        _known.clear()
    _known[hashed] = (now + KEY_CACHE_SECONDS, record)
    g.api_key = record


def searches() -> bool:
    """Whether this request's operation is declared as one that searches."""
    view = current_app.view_functions.get(request.endpoint or "")
    rule = request.url_rule.rule if request.url_rule is not None else None
    method = "get" if request.method == "HEAD" else request.method.lower()
    return any(op.searches for (m, path), op in operations_of(view).items() if m == method and path == rule)


PLACES = {  # the app's config keys for what `hold` counts
    "STREAMS_PER_CLIENT": 4,  # event streams one client holds at once, over every web process
    "EXPORTS_PER_CLIENT": 1,  # exports one client runs at once, over every web process
    "EXPORTS_AT_ONCE": 2,  # exports the deployment runs at once (each a CPU, and about 85 MiB more of a web process)
}
EVERYONE = "everyone"  # the places every client shares (a client is "key:..." or "addr:...")


def hold(kind: str, most: int, seconds: float, what: str, at_once: int | None = None) -> Callable[[], None]:
    """One of the `most` places of `kind` this client may hold at once over every
    web process (counted in Redis), for at most `seconds`; 429 with Retry-After
    when it holds them all.  With `at_once`, also one of the deployment's places
    (every client's together): 503 with Retry-After when they are all taken.
    Returns what gives the places back (call it once the answer ends: read
    whole, or the client gone)."""
    stores = current_app.extensions.get("stores")
    if stores is None:
        return lambda: None
    who = client_id()
    place, wait = take_place(stores, kind, who, most, seconds)
    retry = {"Retry-After": str(max(1, min(math.ceil(wait), 30)))}
    if place is None:
        raise Problem("rate-limited", f"this client has {most} {what} open already, the most one client may hold "
                      "at once; close one, or retry after Retry-After seconds", headers=retry, limit=f"{most} at once")
    if at_once is None:
        return lambda: give_back(stores, kind, who, place)
    shared, wait = take_place(stores, kind, EVERYONE, at_once, seconds)
    if shared is None:
        give_back(stores, kind, who, place)
        raise Problem("unavailable", f"{at_once} {what} are running in this deployment, the most at once; retry "
                      "after Retry-After seconds", headers={"Retry-After": str(max(1, min(math.ceil(wait), 30)))})

    def both() -> None:
        give_back(stores, kind, who, place)
        give_back(stores, kind, EVERYONE, shared)

    return both
