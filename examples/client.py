"""A tiny client for the examples: JSON over HTTP with the standard library only."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

BASE = os.environ.get("RICOCHET_URL", "http://127.0.0.1:8000").rstrip("/")


def call(method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    """The JSON answer; a problem+json error is raised with its detail."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:
        problem = json.load(e)
        raise SystemExit(f"{method} {path}: {e.code} {problem.get('title')}: {problem.get('detail')}") from None
    except urllib.error.URLError as e:
        raise SystemExit(f"cannot reach {BASE} ({e.reason}): start the service with `make run`, "
                         "or set RICOCHET_URL") from None
