"""A typed Python client for ricochet-service, with the standard library only.

    from ricochet_client import Client

    api = Client("http://127.0.0.1:8000", api_key=None)
    today = api.daily()
    verdict = api.verify(today.puzzle, api.daily_solution(today.date), player="ann")
    pack = api.pack(count=20, min_length=14, max_length=16, seed="s").wait()
    for puzzle in pack.puzzles():
        ...
    api.api.get_player("ann").data["rating"]     # every operation, typed (see _generated.py)
    api.last_rate_limit                           # what the last answer said of the limits

`Client` has the flows apps use most, with results as small dataclasses (the
JSON they came from in `.raw`); `Client.api` has every operation of the
contract (generated from openapi.yaml), each returning a `Reply` with typed
`data`, its headers and its `rate_limit`.  Failures raise an `ApiError`
subclass carrying the problem+json document: `InvalidInput` (with `.field`),
`NotFound`, `Conflict`, `Unprocessable`, `RateLimited` (with `.retry_after`),
`Unavailable`, ...; `Unreachable` when there is no server at all.
`verify_webhook` checks a webhook delivery's signature (Standard Webhooks).
"""

from __future__ import annotations

import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from . import _generated as schema
from ._generated import OPERATIONS, WEBHOOK_EVENTS, Operations, WebhookPayload
from .errors import (
    ApiError,
    Conflict,
    Forbidden,
    Gone,
    InvalidInput,
    NotFound,
    RateLimited,
    ServerError,
    TooLarge,
    Unauthorized,
    Unavailable,
    Unprocessable,
    Unreachable,
)
from .ratelimit import Limit, Quota, RateLimit
from .transport import Reply, Transport
from .webhooks import WebhookVerificationError, sign_webhook, verify_webhook

__all__ = ["OPERATIONS", "WEBHOOK_EVENTS", "Answer", "ApiError", "Client", "Conflict", "Daily", "Forbidden", "Game",
           "Generated", "Gone", "Hint", "InvalidInput", "Job", "Limit", "NotFound", "Operations", "Quota",
           "RateLimit", "RateLimited", "Reply", "ServerError", "TooLarge", "Transport", "Unauthorized", "Unavailable",
           "Unprocessable", "Unreachable", "Verdict", "WebhookPayload", "WebhookVerificationError", "schema",
           "sign_webhook", "verify_webhook"]

__version__ = "0.2.0"

Json = dict[str, Any]


# -- results -------------------------------------------------------------------------


@dataclass
class Daily:
    number: int
    date: str
    code: str
    puzzle: Json
    optimal_length: int
    grade: str
    difficulty: Json
    driftingdroids_id: str | None
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Any) -> Daily:
        return cls(raw["number"], raw["date"], raw["code"], raw["puzzle"], raw["optimal_length"],
                   raw["difficulty"]["grade"], raw["difficulty"], raw.get("driftingdroids_id"), raw)


@dataclass
class Answer:
    status: str  # optimal, unsolvable, timeout, ...
    length: int | None
    moves: list[Json]
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Any) -> Answer:
        return cls(raw["status"], raw.get("length"), raw.get("moves") or [], raw)


@dataclass
class Verdict:
    legal: bool
    solved: bool
    length: int
    optimal: bool
    optimal_length: int | None
    optimality: str  # proven or unknown
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Any) -> Verdict:
        return cls(raw["legal"], raw["solved"], raw["length"], raw["optimal"], raw.get("optimal_length"),
                   raw.get("optimality", "unknown"), raw)

    @property
    def attempt(self) -> Json | None:
        """With a player: whether the attempt was rated, and the ratings after it."""
        return self.raw.get("attempt")


@dataclass
class Hint:
    level: int
    optimal_length: int
    robots_moved: int | None
    robots: list[str] | None
    first_move: Json | None
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Any) -> Hint:
        return cls(raw["level"], raw["optimal_length"], raw.get("robots_moved"), raw.get("robots"),
                   raw.get("first_move"), raw)


@dataclass
class Generated:
    """A made puzzle (random, next, or a pack item) with its report, and its solution unless it was withheld."""

    code: str
    optimal_length: int
    solution: list[Json]
    difficulty: Json
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Any) -> Generated:
        return cls(raw["code"], raw["optimal_length"], raw.get("solution") or [], raw["difficulty"], raw)

    @property
    def puzzle(self) -> Json:
        return {k: self.raw[k] for k in ("board", "robots", "target", "rules") if k in self.raw}


@dataclass
class Job:
    """A queued job (a slow solve or a pack); `wait()` follows it to the end."""

    client: Client = field(repr=False)
    id: str
    kind: str
    state: str
    progress: float
    raw: Json = field(repr=False)
    location: str | None = field(default=None, repr=False)  # where the 202 said to poll
    retry_after: float | None = field(default=None, repr=False)  # what the last answer asked to wait

    @classmethod
    def of(cls, client: Client, raw: Any, reply: Reply[Any] | None = None) -> Job:
        return cls(client, raw["id"], raw["kind"], raw["state"], raw.get("progress", 0.0), raw,
                   reply.location if reply else None, reply.retry_after if reply else None)

    @property
    def done(self) -> bool:
        return self.state in ("succeeded", "failed", "cancelled")

    def refresh(self) -> Job:
        reply = self.client.transport.request("GET", self.location or f"/v1/jobs/{urllib.parse.quote(self.id)}")
        self.state, self.progress, self.raw = reply.data["state"], reply.data.get("progress", 0.0), reply.data
        self.retry_after = reply.retry_after
        return self

    def wait(self, timeout: float = 3600, every: float = 0.5,
             progress: Callable[[Job], None] | None = None) -> Job:
        """Poll until the job settles, as often as `every` seconds but never sooner than
        the service's Retry-After asks (a 429 or 503 on the way is waited out, not
        raised); raises TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self.done:
            pause = max(every, self.retry_after or 0.0)
            if time.monotonic() + pause > deadline:
                raise TimeoutError(f"job {self.id} still {self.state} after {timeout} s")
            time.sleep(pause)
            try:
                self.refresh()
            except (RateLimited, Unavailable) as e:
                self.retry_after = e.retry_after or every
                continue
            if progress:
                progress(self)
        return self

    def cancel(self) -> Job:
        self.raw = self.client.api.cancel_job(self.id).data
        self.state = self.raw["state"]
        return self

    @property
    def result(self) -> Any:
        return self.raw.get("result")

    def puzzles(self) -> list[Generated]:
        """A finished pack's puzzles, in order."""
        pack = self.client.api.get_pack(self.raw.get("pack_id") or self.id).data
        return [Generated.of(p) for p in pack["puzzles"]]

    def stream(self) -> Iterator[Generated]:
        """The pack's puzzles made so far (also while it runs), read as NDJSON a line at a time."""
        for line in self.client.transport.stream("GET", f"/v1/packs/{urllib.parse.quote(self.id)}",
                                                 query={"format": "ndjson"}):
            yield Generated.of(line)

    def book(self, *, paper: str | None = None, per_page: int | None = None, solutions: bool | None = None) -> bytes:
        """The finished pack as a printable book (PDF bytes)."""
        return self.client.api.get_pack_book(self.raw.get("pack_id") or self.id, paper=paper, per_page=per_page,
                                             solutions=solutions).data

    def sheet(self, page: int = 1, *, solution: bool = False) -> str:
        """One SVG sheet of the finished pack's puzzles."""
        return self.client.api.get_pack_sheet(self.raw.get("pack_id") or self.id, page=page, solution=solution).data


@dataclass
class Game:
    """A multiplayer game as one player sees it (`token` is that player's)."""

    client: Client = field(repr=False)
    id: str
    state: Json
    tokens: dict[str, str] = field(default_factory=dict, repr=False)

    def look(self, since: int | None = None) -> Json:
        answer = self.client.api.get_game(self.id, since=since).data
        self.state = answer["game"]
        return answer

    def bid(self, player: str, moves: int) -> Json:
        answer = self.client.api.bid(self.id, moves=moves, token=self.tokens[player]).data
        self.state = answer["game"]
        return answer

    def show(self, player: str, moves: list[Json]) -> Json:
        answer = self.client.api.show_solution(self.id, moves=moves, token=self.tokens[player]).data
        self.state = answer["game"]
        return answer["result"]


# -- the client ----------------------------------------------------------------------


class Client:
    """The service at `base_url`; `api_key` is sent as X-API-Key, `timeout` bounds each request."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, api_key: str | None = None,
                 timeout: float = 60.0) -> None:
        self.transport = Transport(base_url, api_key=api_key, timeout=timeout)
        self.api = Operations(self.transport)

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    @property
    def last_rate_limit(self) -> RateLimit | None:
        """What the last answer (or error) said of the limits: RateLimit, RateLimit-Policy, X-Quota-*."""
        return self.transport.last_rate_limit

    # the daily puzzle

    def daily(self, day: str | int | None = None) -> Daily:
        """Today's puzzle (UTC), or a published day's by date (YYYY-MM-DD) or number (1 = 2026-01-01)."""
        reply = self.api.daily_today() if day is None else self.api.daily_on(str(day))
        return Daily.of(reply.data)

    def daily_solution(self, day: str | int) -> list[Json]:
        return self.api.daily_solution(str(day)).data["moves"]

    def daily_hint(self, day: str | int, level: int = 1) -> Hint:
        return Hint.of(self.api.daily_hint(str(day), level=level).data)

    def archive(self, start: str | None = None, end: str | None = None, page_size: int = 100) -> Iterator[Json]:
        """Every published day from `start` to `end`, following the archive's Link headers."""
        return self.items(self.api.daily_archive(from_=start, to=end, limit=page_size))

    def items(self, first: Reply[Any], key: str = "items") -> Iterator[Json]:
        """Every item of a paged answer: `first`'s, then each page its `Link: rel="next"` names."""
        reply: Reply[Any] | None = first
        while reply is not None:
            yield from reply.data[key]
            following = reply.links.get("next")
            reply = self.transport.request("GET", following) if following else None

    # puzzles

    def solve(self, puzzle: Json | str, *, wait: bool = True, timeout: float = 600) -> Answer:
        """An optimal solution; a search longer than a request may take is followed as a job."""
        reply = self.api.solve(body=_puzzle(puzzle))
        if reply.status == 200:
            return Answer.of(reply.data)
        job = Job.of(self, reply.data, reply)
        if not wait:
            raise TimeoutError(f"the search continues as job {job.id}")
        job.wait(timeout=timeout)
        if job.state != "succeeded":
            raise TimeoutError(f"job {job.id} ended {job.state}: {job.raw.get('error')}")
        return Answer.of(job.result)

    def verify(self, puzzle: Json | str, moves: list[Json], *, player: str | None = None) -> Verdict:
        """Judge moves; with `player` (the app's own id for them) the attempt is recorded and rated."""
        return Verdict.of(self.api.verify(puzzle=_puzzle(puzzle), moves=moves, player=player).data)

    def difficulty(self, puzzle: Json | str) -> Json:
        return self.api.difficulty(body=_puzzle(puzzle)).data

    def hint(self, code: str, level: int = 1) -> Hint:
        return Hint.of(self.api.puzzle_hint(code, level=level).data)

    def random(self, length: int | None = None, *, grade: str | None = None, board: str | None = None,
               robots: int | None = None, seed: str | None = None, solution: bool | None = None) -> Generated:
        return Generated.of(self.api.random_puzzle(length=length, grade=grade, board=board,
                                                   robots=robots, seed=seed, solution=solution).data)

    def next(self, player: str, *, difficulty: str | None = None, theme: str | None = None,
             solution: bool | None = None) -> Generated:
        """A puzzle `player` has not seen, near their rating (solution=False: a rated round)."""
        return Generated.of(self.api.next_puzzle(player=player, difficulty=difficulty,
                                                 theme=theme, solution=solution).data)

    def picture(self, code: str, *, png: bool = True) -> bytes:
        data = self.api.get_puzzle(f"{code}.{'png' if png else 'svg'}").data
        return data.encode() if isinstance(data, str) else data

    def export(self, **filters: Any) -> Iterator[Json]:
        """Every puzzle the deployment holds (GET /v1/puzzles/export as NDJSON), a line at a time;
        `filters` are the operation's query parameters (min_length, max_length, robots, ...)."""
        return self.transport.stream("GET", "/v1/puzzles/export", query={**filters, "format": "ndjson"})

    # players

    def player(self, player_id: str) -> Json:
        return self.api.get_player(player_id).data

    def vote(self, code: str, player: str, up: bool) -> Json:
        return self.api.vote_puzzle(code, player=player, up=up).data

    # packs and jobs

    def pack(self, count: int, min_length: int, max_length: int, *, seed: str | int = 0,
             board: str = "random-2013", robots: int = 4, ricochet: str = "turn",
             idempotency_key: str | None = None, **options: Any) -> Job:
        """Queue a pack; `options` are PackRequest's other fields (min_rating, theme, ...)."""
        body = {"count": count, "min_length": min_length, "max_length": max_length, "seed": seed, "board": board,
                "robots": robots, "ricochet": ricochet, **options}
        reply = self.transport.request("POST", "/v1/packs", body=body,
                                       headers={"Idempotency-Key": idempotency_key})
        return Job.of(self, reply.data, reply)

    def job(self, job_id: str) -> Job:
        reply = self.api.get_job(job_id)
        return Job.of(self, reply.data, reply)

    # games

    def new_game(self, players: list[str], *, board: str = "random", seed: str | None = None,
                 options: Json | None = None) -> Game:
        answer = self.api.create_game(players=players, board=board, seed=seed, options=options or {}).data
        return Game(self, answer["game"]["id"], answer["game"], answer["tokens"])

    # HTTP

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = None,
             headers: dict[str, str] | None = None) -> Any:
        """Any request by hand: its answer's data."""
        return self.transport.request(method, path, body=body, token=token, headers=headers).data

    def lines(self, path: str) -> Iterator[Json]:
        """An NDJSON answer's records, a line at a time."""
        return self.transport.stream("GET", path)


def _puzzle(puzzle: Json | str) -> Any:
    """A puzzle as docs/formats.md writes it, or a code."""
    return {"code": puzzle} if isinstance(puzzle, str) else puzzle
