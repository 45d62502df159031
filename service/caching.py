"""HTTP caching for content-addressed responses: a strong ETag from the body,
Cache-Control, and 304 for a request that already holds the same bytes."""

from __future__ import annotations

import hashlib
from typing import cast

from flask import Response, request

IMMUTABLE = "public, max-age=31536000, immutable"  # pictures: fixed by their address
DAY = "public, max-age=86400"  # JSON of a code or spec: fixed, but its shape may gain fields in a release
MINUTE = "public, max-age=60"  # JSON that carries what play changes (a puzzle's rating)


def cached(response: Response, cache_control: str = DAY) -> Response:
    response.set_etag(hashlib.sha256(response.get_data()).hexdigest()[:32])
    response.headers["Cache-Control"] = cache_control
    return cast(Response, response.make_conditional(request))  # it returns self; werkzeug types its base class
