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

Every answer of a /v1 route says the limits it counts against, as the IETF
draft's structured fields (draft-ietf-httpapi-ratelimit-headers): the policies
in `RateLimit-Policy` (the route's "default" or "search", and on a route that
queues work the client's hourly quota, "solve" or "pack"), what is left of each
and in how many seconds its window turns in `RateLimit`.  The route's state is
read in the same Redis call that counts the request (CountedWindow); a quota's
is on the answers that charge it (or refuse for it), equal to their X-Quota-*.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, current_app, g, has_request_context, request
from flask_limiter import Limiter, RequestLimit
from flask_limiter.util import get_remote_address
from limits import RateLimitItem, parse_many
from limits.storage import RedisStorage
from limits.strategies import STRATEGIES, FixedWindowRateLimiter
from limits.util import WindowStats

from application.clients import RATE_LIMIT_PREFIX, KeyRecord, digest, give_back, issued, take_place
from application.jobs import QUOTA_WINDOW, UNITS

from .declare import Operation, operations_of
from .errors import Problem, problem_response

KEY_CACHE_SECONDS = 30.0
KEY_CACHE_SIZE = 1024  # keys remembered per process (a record is a few hundred bytes)


DEFAULT, SEARCH = "default", "search"  # the routes' policies (RateLimit-Policy names them so)
# What a browser page on another origin may read of an answer (CORS), besides Retry-After.
EXPOSED = ("RateLimit", "RateLimit-Policy", "X-Quota-Kind", "X-Quota-Limit", "X-Quota-Remaining", "X-Quota-Reset")


def register(app: Flask) -> Limiter:
    config = app.config
    # Before the limiter's own check: an unknown key is 401, never a client of its own.
    app.before_request(_identify)

    def limit_for_route() -> str:
        return config["RATE_LIMIT_SEARCH"] if searches() else config["RATE_LIMIT_DEFAULT"]

    def breached(limit: RequestLimit) -> Response:
        name = dict((item, name) for name, item in route_policies()).get(limit.limit, DEFAULT)
        left, reset = _window(limit.key) or (0, limit.limit.get_expiry())
        retry_after = max(1, reset)
        violated: dict[str, Any] = {"violated-policies": [name]}  # a member's name no keyword can spell
        response = problem_response(
            "rate-limited", f"rate limit \"{name}\" of {limit.limit} for this route exceeded: {left} left, the "
            f"window turns in {retry_after} s; retry after {retry_after} s", limit=name, remaining=left,
            reset=retry_after, **violated)
        response.headers["Retry-After"] = str(retry_after)
        return response

    limiter = Limiter(
        client_id,
        app=app,
        storage_uri=config["RATE_LIMIT_STORAGE"][0],  # workers.failover.limiter_storage: Sentinel-aware
        storage_options=config["RATE_LIMIT_STORAGE"][1],
        strategy=COUNTED_WINDOW,
        default_limits=[limit_for_route],
        default_limits_exempt_when=lambda: not request.path.startswith("/v1/"),
        on_breach=breached,
        swallow_errors=True,
        enabled=config["RATE_LIMITS_ENABLED"],
        key_prefix=RATE_LIMIT_PREFIX,
    )
    app.after_request(lambda response: announce(limiter, response))
    return limiter


_ONE_CALL = """
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return {count, redis.call('PTTL', KEYS[1])}
"""


class CountedWindow(FixedWindowRateLimiter):
    """flask-limiter's fixed window, whose hit also learns where the window stands:
    the count and the time left come back from the one Redis call that counts
    the request, and are kept for the answer's RateLimit field (flask-limiter's
    own `remaining` and `reset_at` would ask Redis twice more, per request)."""

    _counts: Any = None  # the registered script, on first use

    def hit(self, item: RateLimitItem, *identifiers: str, cost: int = 1) -> bool:
        key = item.key_for(*identifiers)
        count, reset_at = self._count(key, item.get_expiry(), cost)
        if has_request_context():
            g.setdefault("rate_windows", {})[key] = WindowStats(reset_at, max(0, item.amount - count))
        return count <= item.amount

    def get_window_stats(self, item: RateLimitItem, *identifiers: str) -> WindowStats:
        seen = g.get("rate_windows", {}).get(item.key_for(*identifiers)) if has_request_context() else None
        return seen if seen is not None else super().get_window_stats(item, *identifiers)

    def _count(self, key: str, expiry: int, cost: int) -> tuple[int, float]:
        """The window's count with this hit, and when it turns (epoch seconds)."""
        storage = self.storage
        if not isinstance(storage, RedisStorage):  # the memory store (no Redis): asking it again costs nothing
            return storage.incr(key, expiry, amount=cost), storage.get_expiry(key)
        if self._counts is None:
            self._counts = storage.get_connection().register_script(_ONE_CALL.encode())
        count, ttl_ms = self._counts([storage.prefixed_key(key)], [expiry, cost])
        return int(count), time.time() + (int(ttl_ms) / 1000 if int(ttl_ms) >= 0 else expiry)


COUNTED_WINDOW = "ricochet-counted-fixed-window"
STRATEGIES[COUNTED_WINDOW] = CountedWindow  # flask-limiter makes its strategy by name, from this table


def _window(key: str) -> tuple[int, int] | None:
    """What is left of the window counted under `key` in this request, and the
    whole seconds until it turns (None when this request did not count it)."""
    stats = g.get("rate_windows", {}).get(key)
    if stats is None:
        return None
    return stats.remaining, max(0, math.ceil(stats.reset_time - time.time()))


def route_policies() -> list[tuple[str, RateLimitItem]]:
    """This request's route policies: each limit of its kind ("default", or "search"
    for a route that searches), named by the kind, or with several limits (the
    setting joins them with ';') by the kind and the window, "search-60s"."""
    kind = SEARCH if searches() else DEFAULT
    items = _parsed(current_app.config["RATE_LIMIT_SEARCH" if kind == SEARCH else "RATE_LIMIT_DEFAULT"])
    if len(items) == 1:
        return [(kind, items[0])]
    return [(f"{kind}-{item.get_expiry()}s", item) for item in items]


@functools.lru_cache(maxsize=16)
def _parsed(setting: str) -> list[RateLimitItem]:
    return sorted(parse_many(setting))


def announce(limiter: Limiter, response: Response) -> Response:
    """The RateLimit-Policy and RateLimit fields of a /v1 route's answer (see the
    module's docstring).  A request the limiter did not count (a key refused
    with 401 before it, or the limit store unreachable) is told the policies only."""
    if not request.path.startswith("/v1/") or request.endpoint is None \
            or not current_app.config["RATE_LIMITS_ENABLED"]:
        return response
    route = route_policies()
    policies = [f'"{name}";q={item.amount};w={item.get_expiry()}' for name, item in route]
    charged = charged_quota() if current_app.extensions.get("stores") is not None else None  # no store: nothing charged
    quota = client_quotas().get(charged) if charged is not None else None
    if charged is not None and quota is not None:
        policies.append(f'"{charged}";q={quota};w={QUOTA_WINDOW};ricochet-unit="{UNITS[charged]}"')
    counted = {limit.limit: limit.key for limit in limiter.current_limits}
    state = []
    for name, item in route:
        seen = _window(counted[item]) if item in counted else None
        if seen is not None:
            state.append(f'"{name}";r={seen[0]};t={seen[1]}')
    kind = response.headers.get("X-Quota-Kind")
    if kind is not None:  # the answer charged queued work, or refused it: the same numbers as X-Quota-*
        state.append(f'"{kind}";r={response.headers["X-Quota-Remaining"]};t={response.headers["X-Quota-Reset"]}')
    response.headers["RateLimit-Policy"] = ", ".join(policies)
    if state:
        response.headers["RateLimit"] = ", ".join(state)
    return response


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


def client_quotas() -> dict[str, int]:
    """The hourly quotas this client's queued work is charged to: the deployment's,
    or its key's own; none when limits are off."""
    config = current_app.config
    return {**config["QUOTAS"], **key_quotas()} if config["RATE_LIMITS_ENABLED"] else {}


_known: dict[str, tuple[float, KeyRecord]] = {}


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


def _declared() -> Operation | None:
    """This request's operation, as its view declares it (None for a route declared otherwise)."""
    view = current_app.view_functions.get(request.endpoint or "")
    rule = request.url_rule.rule if request.url_rule is not None else None
    method = "get" if request.method == "HEAD" else request.method.lower()
    declared = operations_of(view) if view is not None else {}
    return next((op for (m, path), op in declared.items() if m == method and path == rule), None)


def searches() -> bool:
    """Whether this request's operation is declared as one that searches."""
    op = _declared()
    return op is not None and op.searches


def charged_quota() -> str | None:
    """The quota this request's operation charges its queued work to, if any."""
    op = _declared()
    return op.quota if op is not None else None


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
