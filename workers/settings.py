"""The deployment's settings: one typed object, read once from the environment
(`REDIS_URL` and every `RICOCHET_*` variable) and checked at start.

A bad value stops `ricochet serve`, the worker and the API with one line that
names the variable and what it accepts.  Code asks a `Settings`, never
`os.environ`; the configuration table in the README is generated from
`VARIABLES` (`python -m workers.settings README.md`), and tests/test_settings.py fails when
the code reads a variable the table does not name.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """A variable set to a value it does not accept."""


@dataclass(frozen=True)
class Setting:
    variable: str
    default: str
    accepts: str
    parse: Callable[[str], Any]
    doc: str


def _number(kind: type, low: float, high: float) -> Callable[[str], Any]:
    def parse(raw: str) -> Any:
        value = kind(raw.strip())
        if not low <= value <= high:
            raise ValueError
        return value
    return parse


def _choice(*options: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in options:
            raise ValueError
        return raw
    return parse


_RATE = re.compile(r"\s*\d+\s*(/|per)\s*(\d+\s*)?(second|minute|hour|day|month|year)s?\s*", re.IGNORECASE)


def _rates(raw: str) -> str:
    """flask-limiter's notation: '1200 per minute', several joined by ';'."""
    if not all(_RATE.fullmatch(part) for part in raw.split(";")):
        raise ValueError
    return raw


def _bind(raw: str) -> str:
    host, _, port = raw.rpartition(":")
    if raw.startswith("unix:") or (host and port.isdigit() and 0 < int(port) < 65536):
        return raw
    raise ValueError


def _redis_url(raw: str) -> str | None:
    if raw == "":
        return None
    if not re.match(r"(redis|rediss|unix)://", raw):
        raise ValueError
    return raw


def _text(raw: str) -> str:
    return raw


def _folder_or_off(raw: str) -> Path | None:
    """A folder (created when first written), '' for ~/.cache/ricochet/pools, or 'off'."""
    raw = raw.strip()
    if raw == "off":
        return None
    try:
        return Path(raw).expanduser() if raw else Path.home() / ".cache" / "ricochet" / "pools"
    except RuntimeError:  # no home to find (HOME unset, a uid without a passwd entry): no cache
        return None


def _public_url(raw: str) -> str:
    """'https://host[:port]', no path, query or fragment, or empty (the request's own host)."""
    if raw and not re.fullmatch(r"https?://[A-Za-z0-9.-]+(:\d{1,5})?/?", raw):
        raise ValueError
    return raw.rstrip("/")


def _sentinels(raw: str) -> tuple[tuple[str, int], ...]:
    """'HOST:PORT,HOST:PORT' -> ((host, port), ...); empty: no Sentinel."""
    found = []
    for part in filter(None, (p.strip() for p in raw.split(","))):
        host, _, port = part.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError
        found.append((host.strip("[]"), int(port)))
    return tuple(found)


def _name(raw: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", raw):
        raise ValueError
    return raw


def _web_workers_default() -> str:
    return str((os.cpu_count() or 1) * 2 + 1)


VARIABLES: dict[str, Setting] = {s.variable: s for s in (
    Setting("REDIS_URL", "", "a redis://, rediss:// or unix:// URL, or empty", _redis_url,
            "The Redis that is broker, result backend, cache and store. Unset: `ricochet serve` starts a private "
            "one; the API alone then runs without a store (no jobs, packs or games)."),
    Setting("RICOCHET_SENTINELS", "", "HOST:PORT of each Sentinel, joined by commas, or empty", _sentinels,
            "Redis Sentinels that say which server is the primary (set: every process, the API's, the workers', the "
            "beat's, asks them, and follows a failover; REDIS_URL then gives only the password and database, its "
            "host is not used)."),
    Setting("RICOCHET_SENTINEL_SERVICE", "ricochet", "a name of letters, digits, '.', '_' or '-'", _name,
            "The name the Sentinels monitor the primary under (`sentinel monitor NAME ...`)."),
    Setting("RICOCHET_SENTINEL_PASSWORD", "", "a password, or empty", _text,
            "The Sentinels' own password (their requirepass), if they have one; the servers' is in REDIS_URL."),
    Setting("RICOCHET_WAIT_REPLICAS", "0", "a whole number from 0 to 5", _number(int, 0, 5),
            "Replicas that must hold a write before the API acknowledges it (Redis WAIT): every POST, PUT, PATCH "
            "or DELETE answered below 400 (jobs, packs, ratings, votes, rooms, games), issued keys, and a worker's "
            "writes before its task is acknowledged. 0: none (a lone Redis)."),
    Setting("RICOCHET_WAIT_MS", "1000", "milliseconds, a whole number from 1 to 60000", _number(int, 1, 60000),
            "How long a write waits for RICOCHET_WAIT_REPLICAS replicas; not confirmed by then, the API answers 503 "
            "(the write may or may not survive a failover: retry, with an Idempotency-Key for packs)."),
    Setting("RICOCHET_BIND", "0.0.0.0:8000", "HOST:PORT or unix:PATH", _bind,
            "Where gunicorn listens (`ricochet serve` passes its own --host/--port)."),
    Setting("RICOCHET_WEB_WORKERS", _web_workers_default(), "a whole number from 1 to 64", _number(int, 1, 64),
            "gunicorn worker processes (default: two per core, plus one)."),
    Setting("RICOCHET_WEB_THREADS", "8", "a whole number from 1 to 256", _number(int, 1, 256),
            "Threads per gunicorn worker; a game's event stream holds one for up to 25 s."),
    Setting("RICOCHET_ACCESS_LOG", "-", "a file path, '-' for standard output, or empty for none", _text,
            "gunicorn's access log (`ricochet serve` turns it off unless set)."),
    Setting("RICOCHET_SOLVE_TIME_BUDGET", "1.0", "seconds, a number from 0.01 to 60", _number(float, 0.01, 60),
            "How long a request may solve before the work moves to a job (202 + Location)."),
    Setting("RICOCHET_JOB_TIME_BUDGET", "300", "seconds, a number from 1 to 600", _number(float, 1, 600),
            "How long a queued solve may search."),
    Setting("RICOCHET_RATE_LIMITS", "on", "on or off", _choice("on", "off"),
            "Rate limits and quotas on or off (off for benchmarks)."),
    Setting("RICOCHET_RATE_LIMIT", "1200 per minute", "a limit such as '1200 per minute' (several joined by ';')",
            _rates, "Requests per client and route, for routes that do not search."),
    Setting("RICOCHET_RATE_LIMIT_SEARCH", "120 per minute",
            "a limit such as '120 per minute' (several joined by ';')", _rates,
            "Requests per client and route for the routes that search (solve, difficulty, random, new packs)."),
    Setting("RICOCHET_QUOTA_SOLVE_SECONDS", "3600", "a whole number from 0 to 10**9", _number(int, 0, 10**9),
            "Worker-seconds of queued solves per client an hour."),
    Setting("RICOCHET_QUOTA_PACK_MOVES", "200000", "a whole number from 0 to 10**9", _number(int, 0, 10**9),
            "Puzzle-moves (count x max_length) of packs per client an hour."),
    Setting("RICOCHET_MAX_QUEUED_SOLVES", "200", "a whole number from 1 to 10**6", _number(int, 1, 10**6),
            "Solves waiting for a worker (queued, not yet started) before new solves are refused (503, "
            "Retry-After)."),
    Setting("RICOCHET_MAX_QUEUED_PACKS", "5000", "a whole number from 1 to 10**7", _number(int, 1, 10**7),
            "Tasks the pack queue may hold before new packs are refused (503, Retry-After)."),
    Setting("RICOCHET_QUEUED_SOLVES_PER_CLIENT", "2", "a whole number from 1 to 1000", _number(int, 1, 1000),
            "Queued solves one client may have waiting or running at once; beyond, a new one is refused (429, "
            "Retry-After), so that one client's solves cannot hold every worker while another's wait."),
    Setting("RICOCHET_QUEUED_CHUNKS_PER_CLIENT", "2", "a whole number from 1 to 1000", _number(int, 1, 1000),
            "Chunks of one client's packs waiting in the pack queue at once; the rest wait in Redis and are "
            "queued as workers take these, so another client's pack is queued behind this few, not behind the "
            "whole of a big pack (more: fewer idle moments for many workers, a longer wait for other clients)."),
    Setting("RICOCHET_GAME_STREAMS", "4", "a whole number from 0 to 1000", _number(int, 0, 1000),
            "Game event streams one web process serves at once; beyond, 503 (clients poll instead)."),
    Setting("RICOCHET_ADDRESS_STATE_KB", "4096", "KiB, a whole number from 1 to 10**7", _number(int, 1, 10**7),
            "Games and rooms (their state, events and seats, as JSON) one address without an API key may add to "
            "Redis a day (UTC); beyond, creating, joining and playing answer 429 until midnight."),
    Setting("RICOCHET_PUBLIC_URL", "", "http(s)://HOST[:PORT] with no path, or empty", _public_url,
            "The address people reach the site at: the absolute links of pages' Open Graph tags, oEmbed cards and "
            "Link headers use it, whatever Host a request names (empty: the request's own Host, as a front "
            "such as `ricochet serve`'s passes it on; set it where the Host header is not one the front checks)."),
    Setting("RICOCHET_TRUSTED_PROXIES", "0", "a whole number from 0 to 10", _number(int, 0, 10),
            "Proxies in front of the API whose X-Forwarded-For/-Proto/-Host are trusted (0: none)."),
    Setting("RICOCHET_VISIBILITY_TIMEOUT", "1800", "seconds, a whole number from 1 to 86400",
            _number(int, 1, 86400),
            "Seconds before the broker hands an unacknowledged task to another worker; outlasts the longest task."),
    Setting("RICOCHET_JOB_THREADS", "2", "a whole number from 1 to 8", _number(int, 1, 8),
            "Search threads of a queued solve."),
    Setting("RICOCHET_POOL_THREADS", "2", "a whole number from 1 to 8", _number(int, 1, 8),
            "Threads of a whole-board analysis (a pool build, about 4 GiB)."),
    Setting("RICOCHET_SOLVE_STATE_MB", "48", "a whole number of MiB from 16 to 65536", _number(int, 16, 65536),
            "Memory a request's own search may take for its tables, in MiB (a web process runs two at once); "
            "a puzzle that needs more is queued as a job, like one that needs more time."),
    Setting("RICOCHET_JOB_STATE_MB", "512", "a whole number of MiB from 64 to 65536", _number(int, 64, 65536),
            "Memory one search in a worker process may take for its tables (a queued solve, a pack's puzzle), in "
            "MiB; the 24- and 25-move puzzles need 160, the bank's 26-move ones up to 512. A search that needs more "
            "ends as state_limit."),
    Setting("RICOCHET_BOARD_CACHE_MB", "32", "a whole number of MiB from 1 to 65536", _number(int, 1, 65536),
            "Compiled boards each process keeps, in MiB (a board and its searches' tables: 30 KiB to 2 MiB)."),
    Setting("RICOCHET_PICTURE_CACHE_MB", "12", "a whole number of MiB from 0 to 65536", _number(int, 0, 65536),
            "PNG pictures each web process keeps, in MiB (0: none)."),
    Setting("RICOCHET_RATING_PRIOR", "on", "on or off", _choice("on", "off"),
            "Puzzles start rated from their optimal length (on), or all at 1500 like new players (off: to measure "
            "what ratings learn from play alone)."),
    Setting("RICOCHET_POOLS", "0", "a whole number from 0 to 10000", _number(int, 0, 10_000),
            "Pools per ricochet option the beat grows beyond the starter set, one analysis at a time."),
    Setting("RICOCHET_POOL_CACHE", "", "a folder, 'off', or empty for ~/.cache/ricochet/pools", _folder_or_off,
            "Where each process keeps the pools it has parsed, packed (about 30 MB for the shipped ones), so the "
            "next one to start reads them in under a second, not five; off: each parses the pools' files."),
    Setting("RICOCHET_WEBHOOKS_ALLOW_PRIVATE", "off", "on or off", _choice("on", "off"),
            "Webhook URLs that resolve to private, loopback or link-local addresses: refused (off, 422) or "
            "allowed (on: tests, a receiver on the same network)."),
    Setting("RICOCHET_WEBHOOKS_RETRY", "5", "seconds, a number from 0.01 to 3600", _number(float, 0.01, 3600),
            "A webhook delivery's second attempt is due this long after its first, each next wait 4 times the "
            "last (with 5 s: attempts at 0, 5 s, 25 s, 105 s, 7 min ... 30 h), each within 10% either side."),
    Setting("RICOCHET_WEBHOOKS_ATTEMPTS", "9", "a whole number from 1 to 20", _number(int, 1, 20),
            "Attempts of a webhook delivery before it is given up as failed."),
    Setting("RICOCHET_WEBHOOKS_CONNECT_TIMEOUT", "3", "seconds, a number from 0.5 to 30", _number(float, 0.5, 30),
            "How long a webhook attempt waits for the receiver's connection."),
    Setting("RICOCHET_WEBHOOKS_TIMEOUT", "5", "seconds, a number from 0.5 to 30", _number(float, 0.5, 30),
            "How long a webhook receiver may take to answer one attempt once connected (its whole answer)."),
    Setting("RICOCHET_WEBHOOKS_DISABLE_AFTER", "432000", "seconds, a whole number from 1 to 2592000",
            _number(int, 1, 2_592_000),
            "A webhook endpoint whose attempts all failed for this long (5 days), none succeeding, is disabled; "
            "the key's other endpoints are sent `webhook.disabled`."),
)}


def _field(variable: str) -> Any:
    return dataclasses.field(metadata={"variable": variable})


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = _field("REDIS_URL")
    sentinels: tuple[tuple[str, int], ...] = _field("RICOCHET_SENTINELS")
    sentinel_service: str = _field("RICOCHET_SENTINEL_SERVICE")
    sentinel_password: str = _field("RICOCHET_SENTINEL_PASSWORD")
    wait_replicas: int = _field("RICOCHET_WAIT_REPLICAS")
    wait_ms: int = _field("RICOCHET_WAIT_MS")
    bind: str = _field("RICOCHET_BIND")
    web_workers: int = _field("RICOCHET_WEB_WORKERS")
    web_threads: int = _field("RICOCHET_WEB_THREADS")
    access_log: str = _field("RICOCHET_ACCESS_LOG")
    solve_time_budget: float = _field("RICOCHET_SOLVE_TIME_BUDGET")
    job_time_budget: float = _field("RICOCHET_JOB_TIME_BUDGET")
    rate_limits: str = _field("RICOCHET_RATE_LIMITS")
    rate_limit: str = _field("RICOCHET_RATE_LIMIT")
    rate_limit_search: str = _field("RICOCHET_RATE_LIMIT_SEARCH")
    quota_solve_seconds: int = _field("RICOCHET_QUOTA_SOLVE_SECONDS")
    quota_pack_moves: int = _field("RICOCHET_QUOTA_PACK_MOVES")
    max_queued_solves: int = _field("RICOCHET_MAX_QUEUED_SOLVES")
    max_queued_packs: int = _field("RICOCHET_MAX_QUEUED_PACKS")
    queued_solves_per_client: int = _field("RICOCHET_QUEUED_SOLVES_PER_CLIENT")
    queued_chunks_per_client: int = _field("RICOCHET_QUEUED_CHUNKS_PER_CLIENT")
    game_streams: int = _field("RICOCHET_GAME_STREAMS")
    address_state_kb: int = _field("RICOCHET_ADDRESS_STATE_KB")
    public_url: str = _field("RICOCHET_PUBLIC_URL")
    trusted_proxies: int = _field("RICOCHET_TRUSTED_PROXIES")
    visibility_timeout: int = _field("RICOCHET_VISIBILITY_TIMEOUT")
    job_threads: int = _field("RICOCHET_JOB_THREADS")
    pool_threads: int = _field("RICOCHET_POOL_THREADS")
    pools: int = _field("RICOCHET_POOLS")
    pool_cache: Path | None = _field("RICOCHET_POOL_CACHE")
    rating_prior: str = _field("RICOCHET_RATING_PRIOR")
    solve_state_mb: int = _field("RICOCHET_SOLVE_STATE_MB")
    job_state_mb: int = _field("RICOCHET_JOB_STATE_MB")
    board_cache_mb: int = _field("RICOCHET_BOARD_CACHE_MB")
    picture_cache_mb: int = _field("RICOCHET_PICTURE_CACHE_MB")
    webhooks_allow_private: str = _field("RICOCHET_WEBHOOKS_ALLOW_PRIVATE")
    webhooks_retry: float = _field("RICOCHET_WEBHOOKS_RETRY")
    webhooks_attempts: int = _field("RICOCHET_WEBHOOKS_ATTEMPTS")
    webhooks_connect_timeout: float = _field("RICOCHET_WEBHOOKS_CONNECT_TIMEOUT")
    webhooks_timeout: float = _field("RICOCHET_WEBHOOKS_TIMEOUT")
    webhooks_disable_after: int = _field("RICOCHET_WEBHOOKS_DISABLE_AFTER")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Every setting from `environ` (the process's environment), checked:
        SettingsError names the first variable set to a value it does not accept."""
        environ = os.environ if environ is None else environ
        values = {}
        for f in dataclasses.fields(cls):
            setting = VARIABLES[f.metadata["variable"]]
            raw = environ.get(setting.variable, setting.default)
            try:
                values[f.name] = setting.parse(raw)
            except (ValueError, TypeError):
                raise SettingsError(f"{setting.variable}={raw!r} is not accepted: it takes "
                                    f"{setting.accepts}") from None
        return cls(**values)


def settings_or_exit(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings, or exit 2 with the one-line reason (a process's start)."""
    try:
        return Settings.from_env(environ)
    except SettingsError as e:
        print(f"ricochet: {e}", file=sys.stderr)
        raise SystemExit(2) from None


TABLE_START = "<!-- settings table: generated by `python -m workers.settings` -->\n"
TABLE_END = "<!-- end of settings table -->"


def table() -> str:
    """The configuration table (Markdown), as the README shows it."""
    rows = ["| variable | default | accepts | what it sets |", "|---|---|---|---|"]
    for s in VARIABLES.values():
        default = f"`{s.default}`" if s.default else "unset"
        if s.variable == "RICOCHET_WEB_WORKERS":
            default = "2 x cores + 1"  # the machine's, not this one's
        rows.append(f"| `{s.variable}` | {default} | {s.accepts} | {s.doc} |")
    return "\n".join(rows) + "\n"


def with_table(document: str) -> str:
    """`document` with the table between its markers replaced by today's."""
    head, _, rest = document.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    return head + TABLE_START + table() + TABLE_END + tail


if __name__ == "__main__":  # print the table; with a path (README.md), write it into that file
    if len(sys.argv) > 1:
        with open(sys.argv[1], encoding="utf-8") as f:
            text = f.read()
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(with_table(text))
    else:
        sys.stdout.write(table())
