"""HTTP with urllib: one request, its reply typed by the caller and decoded by its
Content-Type, the limits it reported, and every failure as an `ApiError`.

The generated operations (`_generated.py`) and the hand-written helpers both go
through `Transport.request`, so the API key, the timeout, the limits read and
the errors raised are the same whichever a program calls."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from .errors import ApiError, Unreachable, error_for
from .ratelimit import RateLimit

__all__ = ["Reply", "Transport", "links", "quote_path"]

T = TypeVar("T")

_TEXT = re.compile(r"^(text/|image/svg\+xml|application/(x-ndjson|yaml|xml))")


@dataclass
class Reply(Generic[T]):
    """One successful answer: `data` (JSON parsed, text as str, anything else as
    bytes), its `status`, its `headers` and the `rate_limit` it reported."""

    status: int
    data: T
    headers: Any = field(repr=False)
    rate_limit: RateLimit = field(default_factory=RateLimit)

    @property
    def location(self) -> str | None:
        return self.headers.get("Location")

    @property
    def retry_after(self) -> float | None:
        return self.rate_limit.retry_after

    @property
    def links(self) -> dict[str, str]:
        """The RFC 8288 `Link` header by relation (first, prev, next, last)."""
        return links(self.headers.get("Link") or "")

    def lines(self) -> Iterator[Any]:
        """An NDJSON answer's records (`data` read as one JSON document a line)."""
        text = self.data.decode() if isinstance(self.data, bytes) else str(self.data)
        for line in text.splitlines():
            if line.strip():
                yield json.loads(line)


class Transport:
    """The service at `base_url`: `api_key` sent as X-API-Key, `timeout` seconds for each request."""

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 60.0,
                 user_agent: str = "ricochet-client (python)") -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.user_agent = user_agent
        self.last_rate_limit: RateLimit | None = None

    def request(self, method: str, path: str, *, query: Mapping[str, Any] | None = None, body: Any = None,
                headers: Mapping[str, Any] | None = None, token: str | None = None) -> Reply[Any]:
        """One request: `query` and a JSON object `body` without their None values, `token` as
        Authorization Bearer (a player's); an error answer raised as its `ApiError`."""
        with self._open(method, path, query, body, headers, token) as response:
            raw = response.read()
            return Reply(response.status, _decode(raw, response.headers), response.headers,
                         self._note(response.headers))

    def stream(self, method: str, path: str, *, query: Mapping[str, Any] | None = None) -> Iterator[Any]:
        """An NDJSON answer's records as they arrive (an export of every puzzle is
        read a line at a time, never held whole)."""
        with self._open(method, path, query, None, {"Accept": "application/x-ndjson"}, None) as response:
            self._note(response.headers)
            for line in response:
                if line.strip():
                    yield json.loads(line)

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        url = path if path.startswith(("http://", "https://")) else self.base_url + path
        pairs = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        return url + ("&" if "?" in url else "?") + urllib.parse.urlencode(pairs) if pairs else url

    def _open(self, method: str, path: str, query: Mapping[str, Any] | None, body: Any,
              headers: Mapping[str, Any] | None, token: str | None) -> Any:
        sent = {"Accept": "application/json", "User-Agent": self.user_agent}
        sent.update({k: str(v) for k, v in (headers or {}).items() if v is not None})
        data = None
        if body is not None:
            if isinstance(body, dict):
                body = {k: v for k, v in body.items() if v is not None}
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        if self.api_key:
            sent["X-API-Key"] = self.api_key
        if token:
            sent["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.url(path, query), data=data, method=method, headers=sent)
        try:
            return urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            error = _problem(e)
            self.last_rate_limit = error.rate_limit
            raise error from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            raise Unreachable(0, {"title": "Unreachable", "detail": f"cannot reach {self.base_url} ({reason})"}) \
                from None

    def _note(self, headers: Any) -> RateLimit:
        self.last_rate_limit = RateLimit.from_headers(headers)
        return self.last_rate_limit


def quote_path(value: Any) -> str:
    """A path parameter, escaped (a board spec's commas and a picture's `.png` kept)."""
    return urllib.parse.quote(str(value), safe=",.")


def links(header: str) -> dict[str, str]:
    return {rel: url for url, rel in re.findall(r'<([^>]+)>\s*;\s*rel="?([^";,]+)"?', header)}


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def _decode(raw: bytes, headers: Any) -> Any:
    kind = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if not raw and kind == "":
        return None
    if kind == "application/json" or kind.endswith("+json"):
        return json.loads(raw)
    if _TEXT.match(kind):
        return raw.decode(headers.get_content_charset() or "utf-8") if hasattr(headers, "get_content_charset") \
            else raw.decode()
    return raw


def _problem(e: urllib.error.HTTPError) -> ApiError:
    raw = e.read()
    try:
        problem = json.loads(raw)
        if not isinstance(problem, dict):
            raise ValueError("not a problem document")
    except ValueError:
        problem = {"title": str(e.reason), "status": e.code, "detail": raw.decode(errors="replace")[:200]}
    return error_for(e.code, problem, e.headers)
