"""The Flask application factory (no global app: `create_app()` builds one)."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from flask import Flask
from flask_cors import CORS

from application import held_by
from application.solving import SOLVES_PER_CLIENT
from workers import failover, memory
from workers.settings import Settings

from . import errors, limits, metrics, security


def budgets(settings: Settings) -> None:
    """The process's caches within their byte budgets (docs/operations.md lists them),
    and where it keeps the pools it parsed."""
    from solver.production.pools import keep_packed_in

    from .pictures import png

    memory.budget_caches(settings.board_cache_mb)
    png.budget = settings.picture_cache_mb << 20
    keep_packed_in(settings.pool_cache)


MAX_BODY = 1 << 20  # bytes a request body may hold (413 beyond)
SEARCHES_AT_ONCE = 2  # request searches one web process runs at a time
_TRIM_EVERY = 64  # requests between two returns of freed memory to the system
_served = 0


def _hand_back_memory(response: Any) -> Any:
    """Now and then, give back to the system what searches freed (glibc keeps it
    otherwise, and a worker's RSS grows to what its largest searches once took)."""
    global _served
    _served += 1
    if _served % _TRIM_EVERY == 0:
        memory.hand_back()
    return response


_CHANGES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _held_by_replicas(response: Any) -> Any:
    """RICOCHET_WAIT_REPLICAS: a change is acknowledged only once that many
    replicas hold it (Redis WAIT), so a failover cannot lose what a client was
    told is done (a job, a rating, a vote, a room, a game's move); not confirmed
    within RICOCHET_WAIT_MS, 503: the change may or may not survive a failover."""
    from flask import current_app, request

    wanted, stores = current_app.config["WAIT_REPLICAS"], current_app.extensions.get("stores")
    if not wanted or stores is None or request.method not in _CHANGES or response.status_code >= 400:
        return response
    if held_by(stores, wanted, current_app.config["WAIT_MS"]) >= wanted:
        return response
    refused = errors.problem_response(
        "unavailable", f"the change was not confirmed by {wanted} replica(s) within {current_app.config['WAIT_MS']} "
        "ms and may not survive a failover; retry (with the same Idempotency-Key for a pack)")
    refused.headers["Retry-After"] = "1"
    return refused


def warm(app: Flask) -> None:
    """Load what every request may read and nothing changes (the pools, the daily
    calendar), then freeze the heap's objects: gunicorn's master does this before it
    forks (`preload_app`), so that its web processes share these pages rather than
    each holding a copy (about 90 MiB of a web process's 150)."""
    import gc

    from application import catalogue
    from solver.play import daily

    with app.app_context():
        from .common import app_stores, pools

        held = pools()
        for entry in held.entries():
            held.load(entry.id)
        catalogue.index_library(app_stores(), held)  # the themes' index (issue 68)
    daily.load_calendars()

    gc.collect()
    gc.freeze()


def _config(settings: Settings) -> dict[str, Any]:
    """The Flask config the settings give (the views read it, never the environment)."""
    return dict(
        MAX_CONTENT_LENGTH=MAX_BODY,
        SOLVE_TIME_BUDGET=settings.solve_time_budget,
        SOLVE_STATE_BUDGET=settings.solve_state_mb << 20,
        JOB_TIME_BUDGET=settings.job_time_budget,
        REDIS_URL=settings.redis_url,
        WAIT_REPLICAS=settings.wait_replicas,
        WAIT_MS=settings.wait_ms,
        RATE_LIMIT_DEFAULT=settings.rate_limit,
        RATE_LIMIT_SEARCH=settings.rate_limit_search,
        RATE_LIMITS_ENABLED=settings.rate_limits == "on",
        RATING_PRIOR=settings.rating_prior == "on",
        JSON_SORT_KEYS=False,
        CLOCK=time.time,  # the games' clock; tests inject their own
        STORM_SECONDS=180.0,  # a storm run's clock at the start (application/storms.py); tests make it shorter
        GAME_SSE_SECONDS=25.0,
        GAME_STREAMS=settings.game_streams,
        **limits.PLACES,
        TRUSTED_PROXIES=settings.trusted_proxies,
        PUBLIC_URL=settings.public_url,
        QUOTAS={"solve": settings.quota_solve_seconds, "pack": settings.quota_pack_moves,
                "state_bytes_a_day": settings.address_state_kb << 10},
        MAX_QUEUED={"ricochet": settings.max_queued_solves, "packs": settings.max_queued_packs,
                    SOLVES_PER_CLIENT: settings.queued_solves_per_client},
        WEBHOOKS_ALLOW_PRIVATE=settings.webhooks_allow_private == "on",
    )


def create_app(config: dict[str, Any] | None = None, settings: Settings | None = None) -> Flask:
    """The API.  `settings` default to the environment's, checked (SettingsError
    names a bad variable); `config` overrides Flask config keys (tests)."""
    settings = settings or Settings.from_env()
    app = Flask(__name__)
    app.config.update(_config(settings))
    app.config.update(config or {})
    settings = dataclasses.replace(settings, redis_url=app.config["REDIS_URL"])  # the tests' own Redis
    app.config.setdefault("RATE_LIMIT_STORAGE", failover.limiter_storage(settings))
    budgets(settings)
    # Request searches run at most SEARCHES_AT_ONCE at a time in a process: each may
    # take RICOCHET_SOLVE_STATE_MB, and more than the cores would only slow them all.
    app.extensions["searches"] = threading.BoundedSemaphore(SEARCHES_AT_ONCE)
    app.extensions["exports"] = threading.BoundedSemaphore(1)  # a whole export is a CPU's half-minute
    if app.config["TRUSTED_PROXIES"] > 0:
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]
    if app.config["REDIS_URL"]:  # the views' stores are the Celery app's (one factory wires both)
        from workers.app import make_celery

        celery = make_celery(app.config["REDIS_URL"], settings, patient=False)
        app.extensions["celery"], app.extensions["stores"] = celery, celery.stores
    security.register(app)  # first: it runs last, on the final response
    errors.register(app)
    metrics.register(app)
    app.after_request(_hand_back_memory)
    app.after_request(_held_by_replicas)
    limits.register(app)
    # Browser clients (the daily puzzle, verify) call the API from other origins.
    CORS(app, resources={r"/v1/*": {"origins": "*"}, r"/oembed": {"origins": "*"}},
         expose_headers=["Location", "ETag", "Retry-After", "Link", "X-Total-Count", *limits.EXPOSED])
    _blueprints(app)
    return app


def _blueprints(app: Flask) -> None:
    """Every concern's views."""
    from . import daily, embed, games, jobs, meta, packs, players, puzzles, rooms, solving, storms, webhooks

    for blueprint in (meta.bp, puzzles.bp, solving.bp, packs.bp, jobs.bp, daily.bp, players.bp, games.bp, rooms.bp,
                      embed.bp, webhooks.bp, storms.bp):
        app.register_blueprint(blueprint)
