"""The Flask application factory (no global app: `create_app()` builds one)."""

from __future__ import annotations

import os
import time
from typing import Any

from flask import Flask
from flask_cors import CORS

from . import errors, limits, metrics


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(
        MAX_CONTENT_LENGTH=1 << 20,
        # Seconds a request may solve before the work moves to a job (202 + Location).
        SOLVE_TIME_BUDGET=float(os.environ.get("RICOCHET_SOLVE_TIME_BUDGET", "1.0")),
        # Seconds a queued solve may take.
        JOB_TIME_BUDGET=float(os.environ.get("RICOCHET_JOB_TIME_BUDGET", "300")),
        REDIS_URL=os.environ.get("REDIS_URL"),
        # Per client address and route; "off" turns limiting off (benchmarks).
        RATE_LIMIT_DEFAULT=os.environ.get("RICOCHET_RATE_LIMIT", "1200 per minute"),
        RATE_LIMIT_SEARCH=os.environ.get("RICOCHET_RATE_LIMIT_SEARCH", "120 per minute"),
        RATE_LIMITS_ENABLED=os.environ.get("RICOCHET_RATE_LIMITS", "on") != "off",
        JSON_SORT_KEYS=False,
        CLOCK=time.time,  # the games' clock; tests inject their own
        GAME_SSE_SECONDS=25.0,
        # Event streams one process serves at once (each holds a thread); beyond, 503: poll instead.
        GAME_STREAMS=int(os.environ.get("RICOCHET_GAME_STREAMS", "4")),
        # Proxies in front of the API whose X-Forwarded-For/-Proto/-Host are trusted
        # (0: none, the socket's address is the client's, as without a proxy).
        TRUSTED_PROXIES=int(os.environ.get("RICOCHET_TRUSTED_PROXIES", "0")),
        # Tasks a queue may hold before new work is refused (503, Retry-After).
        # Queued work per client an hour: worker-seconds of solves, puzzle-moves of packs.
        QUOTAS={"solve": int(os.environ.get("RICOCHET_QUOTA_SOLVE_SECONDS", "3600")),
                "pack": int(os.environ.get("RICOCHET_QUOTA_PACK_MOVES", "200000"))},
        MAX_QUEUED={"ricochet": int(os.environ.get("RICOCHET_MAX_QUEUED_SOLVES", "200")),
                    "packs": int(os.environ.get("RICOCHET_MAX_QUEUED_PACKS", "5000"))},
    )
    app.config.update(config or {})
    if app.config["TRUSTED_PROXIES"] > 0:
        from werkzeug.middleware.proxy_fix import ProxyFix

        hops = app.config["TRUSTED_PROXIES"]
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]
    if app.config["REDIS_URL"]:
        from workers.app import make_celery
        from workers.stores import Stores

        app.extensions["stores"] = Stores.from_url(app.config["REDIS_URL"])
        app.extensions["celery"] = make_celery(app.config["REDIS_URL"])
    errors.register(app)
    metrics.register(app)
    limits.register(app)
    # Browser clients (the daily puzzle, verify) call the API from other origins.
    CORS(app, resources={r"/v1/*": {"origins": "*"}},
         expose_headers=["Location", "ETag", "Retry-After", "Link", "X-Total-Count"])
    from . import daily, meta, packs, puzzles, solving
    from .games import games

    for blueprint in (meta.bp, puzzles.bp, solving.bp, packs.bp, daily.bp, games):
        app.register_blueprint(blueprint)
    return app
