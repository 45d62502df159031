"""The Flask application factory (no global app: `create_app()` builds one)."""

from __future__ import annotations

import os
from typing import Any

from flask import Flask

from . import errors


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(
        MAX_CONTENT_LENGTH=1 << 20,
        SOLVE_TIME_BUDGET=float(os.environ.get("RICOCHET_SOLVE_TIME_BUDGET", "2.0")),
        JSON_SORT_KEYS=False,
    )
    app.config.update(config or {})
    errors.register(app)
    from .routes import api

    app.register_blueprint(api)
    return app
