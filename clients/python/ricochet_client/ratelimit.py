"""The limits an answer reports, read from every reply so that a client can slow
down before a 429 rather than after one: the IETF `RateLimit` and
`RateLimit-Policy` fields (draft-ietf-httpapi-ratelimit-headers, structured
fields of RFC 8941; both the named-policy form `"burst";r=5;t=30` and the older
dictionary form `limit=10, remaining=5, reset=30`), the common `X-RateLimit-*`
headers, and the service's hourly quota (`X-Quota-*`)."""

from __future__ import annotations

import base64
import datetime as dt
import email.utils
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Limit", "Quota", "RateLimit", "parse_retry_after", "parse_structured_list"]

Headers = Mapping[str, str] | Any  # anything with a case-insensitive .get(name), as http.client's headers


@dataclass(frozen=True)
class Limit:
    """One limit in force: `policy` names it (None when the server does not), `quota`
    requests per `window` seconds (from RateLimit-Policy), `remaining` of them for
    `reset` more seconds (from RateLimit)."""

    policy: str | None
    remaining: int | None = None
    reset: float | None = None
    quota: int | None = None
    window: float | None = None


@dataclass(frozen=True)
class Quota:
    """The client's quota of queued work (X-Quota-*): `remaining` of `limit` until `reset` (Unix time)."""

    kind: str | None
    limit: int | None
    remaining: int | None
    reset: float | None


@dataclass(frozen=True)
class RateLimit:
    """What one answer said of the limits; empty when it said nothing."""

    limits: tuple[Limit, ...] = ()
    quota: Quota | None = None
    retry_after: float | None = None

    @property
    def tightest(self) -> Limit | None:
        """The limit with the fewest requests left: the one that will refuse first."""
        known = [limit for limit in self.limits if limit.remaining is not None]
        return min(known, key=lambda limit: limit.remaining or 0) if known else None

    @property
    def remaining(self) -> int | None:
        tightest = self.tightest
        return tightest.remaining if tightest else None

    @property
    def reset(self) -> float | None:
        tightest = self.tightest
        return tightest.reset if tightest else None

    @classmethod
    def from_headers(cls, headers: Headers) -> RateLimit:
        return cls(_limits(headers), _quota(headers), parse_retry_after(headers.get("Retry-After")))


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After in seconds: delta-seconds, or an HTTP date (RFC 9110 section 10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _limits(headers: Headers) -> tuple[Limit, ...]:
    policies = parse_structured_list(headers.get("RateLimit-Policy") or "")
    state = parse_structured_list(headers.get("RateLimit") or "")
    if state and all(isinstance(value, tuple) for value, _ in state):
        return (_dictionary_form(dict(value for value, _ in state), policies),)
    by_name: dict[str | None, dict[str, Any]] = {}
    for value, params in policies:
        name = value if isinstance(value, str) else None
        by_name.setdefault(name, {}).update(quota=_int(params.get("q")), window=_float(params.get("w")))
    for value, params in state:
        name = value if isinstance(value, str) else None
        by_name.setdefault(name, {}).update(remaining=_int(params.get("r")), reset=_float(params.get("t")))
    if not by_name and headers.get("X-RateLimit-Remaining") is not None:
        by_name[None] = {"quota": _int(headers.get("X-RateLimit-Limit")),
                         "remaining": _int(headers.get("X-RateLimit-Remaining")),
                         "reset": _float(headers.get("X-RateLimit-Reset"))}
    return tuple(Limit(name, **fields) for name, fields in by_name.items())


def _dictionary_form(fields: dict[str, Any], policies: list[tuple[Any, dict[str, Any]]]) -> Limit:
    """The older draft's `RateLimit: limit=10, remaining=9, reset=1` with `RateLimit-Policy: 10;w=1, 50;w=60`:
    one limit, the closest to exhaustion, whose window is that of the policy with its quota."""
    quota = _int(fields.get("limit"))
    window = next((_float(params.get("w")) for value, params in policies if value == quota), None)
    return Limit(None, _int(fields.get("remaining")), _float(fields.get("reset")), quota, window)


def _quota(headers: Headers) -> Quota | None:
    if headers.get("X-Quota-Limit") is None and headers.get("X-Quota-Remaining") is None:
        return None
    return Quota(headers.get("X-Quota-Kind"), _int(headers.get("X-Quota-Limit")),
                 _int(headers.get("X-Quota-Remaining")), _float(headers.get("X-Quota-Reset")))


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def _float(value: Any) -> float | None:
    try:
        return float(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


# -- RFC 8941 structured fields: a List (or a Dictionary) of bare items with parameters --------

_TOKEN = re.compile(r"[A-Za-z*][A-Za-z0-9:/!#$%&'*+.^_`|~-]*")
_KEY = re.compile(r"[a-z*][a-z0-9_.*-]*")
_NUMBER = re.compile(r"-?[0-9]{1,15}(\.[0-9]{1,3})?")


def parse_structured_list(text: str) -> list[tuple[Any, dict[str, Any]]]:
    """A List or Dictionary field as (value, parameters) pairs; a Dictionary
    member `key=value` comes as the value `(key, value)`.  Inner lists are
    skipped, and a member that does not parse ends the parse (RFC 8941 says
    to ignore the whole field; a client is better served by what parsed)."""
    members: list[tuple[Any, dict[str, Any]]] = []
    for raw in _split_members(text):
        try:
            member, rest = _member(raw.strip())
        except ValueError:
            break
        if member is not None and not rest.strip():
            members.append(member)
    return members


def _split_members(text: str) -> list[str]:
    """Split at the commas outside quoted strings."""
    parts, current, quoted, escaped = [], [], False, False
    for char in text:
        if char == "," and not quoted:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
        if escaped:
            escaped = False
        elif char == "\\" and quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def _member(text: str) -> tuple[tuple[Any, dict[str, Any]] | None, str]:
    if text.startswith("("):
        return None, ""
    key = _KEY.match(text)
    if key and text[key.end():key.end() + 1] == "=":  # a Dictionary member: key=item
        value, rest = _bare(text[key.end() + 1:])
        params, rest = _params(rest)
        return ((key.group(), value), params), rest
    value, rest = _bare(text)
    params, rest = _params(rest)
    return (value, params), rest


def _params(text: str) -> tuple[dict[str, Any], str]:
    params: dict[str, Any] = {}
    text = text.lstrip()
    while text.startswith(";"):
        text = text[1:].lstrip()
        key = _KEY.match(text)
        if not key:
            raise ValueError(f"a parameter's key expected at {text!r}")
        text = text[key.end():]
        if text.startswith("="):
            params[key.group()], text = _bare(text[1:])
        else:
            params[key.group()] = True
        text = text.lstrip()
    return params, text


def _bare(text: str) -> tuple[Any, str]:
    if text.startswith('"'):
        out, i = [], 1
        while i < len(text):
            if text[i] == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 2
                continue
            if text[i] == '"':
                return "".join(out), text[i + 1:]
            out.append(text[i])
            i += 1
        raise ValueError("an unterminated string")
    if text.startswith("?"):
        return text[1:2] == "1", text[2:]
    number = _NUMBER.match(text)
    if number:
        found = number.group()
        return (float(found) if "." in found else int(found)), text[number.end():]
    token = _TOKEN.match(text)
    if token:
        return token.group(), text[token.end():]
    if text.startswith(":"):
        end = text.index(":", 1)
        return base64.b64decode(text[1:end]), text[end + 1:]
    raise ValueError(f"an item expected at {text!r}")
