"""A Python client for ricochet-service, with the standard library only.

    from ricochet_client import Client

    api = Client("http://127.0.0.1:8000")
    today = api.daily()
    print(today.number, today.optimal_length, today.grade)
    verdict = api.verify(today.puzzle, api.daily_solution(today.date))
    pack = api.pack(count=20, min_length=14, max_length=16, seed="s").wait()
    for puzzle in pack.puzzles():
        ...

Every call returns a typed result (the JSON it came from is in `.raw`) or
raises an `ApiError` subclass chosen by the problem's `type`: `InvalidInput`
(with `.field`), `NotFound`, `Conflict`, `Unprocessable`, `RateLimited` (with
`.retry_after`), `Unavailable`; `Unreachable` when there is no server at all.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Answer", "ApiError", "Client", "Conflict", "Daily", "Game", "Generated", "Hint", "InvalidInput", "Job",
           "NotFound", "RateLimited", "Unavailable", "Unprocessable", "Unreachable", "Verdict"]

Json = dict[str, Any]


# -- errors ----------------------------------------------------------------------------


class ApiError(Exception):
    """A problem+json answer (RFC 9457): `kind` is the last part of its `type`."""

    def __init__(self, status: int, problem: Json, headers: Any = None) -> None:
        self.status = status
        self.problem = problem
        self.type = problem.get("type", "about:blank")
        self.kind = self.type.rsplit("/", 1)[-1]
        self.title = problem.get("title", "")
        self.detail = problem.get("detail", "")
        self.field = problem.get("field")
        retry = headers.get("Retry-After") if headers is not None else None
        self.retry_after = float(retry) if retry and retry.isdigit() else None
        super().__init__(f"{status} {self.title}: {self.detail}")


class InvalidInput(ApiError):
    """400: a field is wrong; `.field` names it."""


class NotFound(ApiError):
    """404 (also a daily puzzle not yet published: `.kind == "not-yet-published"`)."""


class Conflict(ApiError):
    """409: out of turn in a game, or a job not finished yet."""


class Unprocessable(ApiError):
    """422: well formed but impossible (out of range, unsolvable, needs a longer search)."""


class RateLimited(ApiError):
    """429: a rate limit or quota; `.retry_after` says when to try again."""


class Unavailable(ApiError):
    """503: Redis, a worker or queue room is missing now; `.retry_after` says when to try again."""


class Unreachable(ApiError):
    """No HTTP answer at all (connection refused, timeout)."""


_BY_STATUS: dict[int, type[ApiError]] = {400: InvalidInput, 404: NotFound, 409: Conflict, 422: Unprocessable,
                                         429: RateLimited, 503: Unavailable}


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
    def of(cls, raw: Json) -> Daily:
        return cls(raw["number"], raw["date"], raw["code"], raw["puzzle"], raw["optimal_length"],
                   raw["difficulty"]["grade"], raw["difficulty"], raw.get("driftingdroids_id"), raw)


@dataclass
class Answer:
    status: str  # optimal, unsolvable, timeout, ...
    length: int | None
    moves: list[Json]
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Json) -> Answer:
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
    def of(cls, raw: Json) -> Verdict:
        return cls(raw["legal"], raw["solved"], raw["length"], raw["optimal"], raw.get("optimal_length"),
                   raw["optimality"], raw)


@dataclass
class Hint:
    level: int
    optimal_length: int
    robots_moved: int | None
    robots: list[str] | None
    first_move: Json | None
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Json) -> Hint:
        return cls(raw["level"], raw["optimal_length"], raw.get("robots_moved"), raw.get("robots"),
                   raw.get("first_move"), raw)


@dataclass
class Generated:
    """A generated puzzle (random, or a pack item) with its solution and report."""

    code: str
    optimal_length: int
    solution: list[Json]
    difficulty: Json
    raw: Json = field(repr=False)

    @classmethod
    def of(cls, raw: Json) -> Generated:
        return cls(raw["code"], raw["optimal_length"], raw["solution"], raw["difficulty"], raw)

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

    @classmethod
    def of(cls, client: Client, raw: Json) -> Job:
        return cls(client, raw["id"], raw["kind"], raw["state"], raw.get("progress", 0.0), raw)

    @property
    def done(self) -> bool:
        return self.state in ("succeeded", "failed", "cancelled")

    def refresh(self) -> Job:
        fresh = Job.of(self.client, self.client.call("GET", f"/v1/jobs/{self.id}"))
        self.state, self.progress, self.raw = fresh.state, fresh.progress, fresh.raw
        return self

    def wait(self, timeout: float = 3600, every: float = 0.5,
             progress: Callable[[Job], None] | None = None) -> Job:
        """Poll until the job settles; raises TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not self.done:
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {self.id} still {self.state} after {timeout} s")
            time.sleep(every)
            self.refresh()
            if progress:
                progress(self)
        return self

    def cancel(self) -> Job:
        self.raw = self.client.call("DELETE", f"/v1/jobs/{self.id}")
        self.state = self.raw["state"]
        return self

    @property
    def result(self) -> Any:
        return self.raw.get("result")

    def puzzles(self) -> list[Generated]:
        """A finished pack's puzzles, in order."""
        pack = self.client.call("GET", f"/v1/packs/{self.raw.get('pack_id') or self.id}")
        return [Generated.of(p) for p in pack["puzzles"]]

    def stream(self) -> Iterator[Generated]:
        """The pack's puzzles made so far (also while it runs), as NDJSON."""
        for line in self.client.lines(f"/v1/packs/{self.id}?format=ndjson"):
            yield Generated.of(line)


@dataclass
class Game:
    """A multiplayer game as one player sees it (`token` is that player's)."""

    client: Client = field(repr=False)
    id: str
    state: Json
    tokens: dict[str, str] = field(default_factory=dict, repr=False)

    def look(self, since: int | None = None) -> Json:
        answer = self.client.call("GET", f"/v1/games/{self.id}" + (f"?since={since}" if since is not None else ""))
        self.state = answer["game"]
        return answer

    def bid(self, player: str, moves: int) -> Json:
        answer = self.client.call("POST", f"/v1/games/{self.id}/bids", {"moves": moves}, token=self.tokens[player])
        self.state = answer["game"]
        return answer

    def show(self, player: str, moves: list[Json]) -> Json:
        answer = self.client.call("POST", f"/v1/games/{self.id}/solutions", {"moves": moves},
                                  token=self.tokens[player])
        self.state = answer["game"]
        return answer["result"]


# -- the client ----------------------------------------------------------------------


class Client:
    def __init__(self, base_url: str = "http://127.0.0.1:8000", *, api_key: str | None = None,
                 timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    # the daily puzzle

    def daily(self, day: str | int | None = None) -> Daily:
        """Today's puzzle (UTC), or a published day's by date (YYYY-MM-DD) or number (1 = 2026-01-01)."""
        return Daily.of(self.call("GET", "/v1/daily" + (f"/{day}" if day is not None else "")))

    def daily_solution(self, day: str | int) -> list[Json]:
        return self.call("GET", f"/v1/daily/{day}/solution")["moves"]

    def daily_hint(self, day: str | int, level: int = 1) -> Hint:
        return Hint.of(self.call("GET", f"/v1/daily/{day}/hint?level={level}"))

    def archive(self, start: str | None = None, end: str | None = None, page_size: int = 100) -> Iterator[Json]:
        """Every published day from `start` to `end`, following the archive's Link headers."""
        query = {k: v for k, v in (("from", start), ("to", end), ("limit", page_size)) if v is not None}
        url: str | None = f"/v1/daily/archive?{urllib.parse.urlencode(query)}"
        while url:
            page, headers = self._request("GET", url)
            yield from page["items"]
            url = _link(headers.get("Link", ""), "next")

    # puzzles

    def solve(self, puzzle: Json | str, *, wait: bool = True, timeout: float = 600) -> Answer:
        """An optimal solution; a search longer than a request may take is followed as a job."""
        answer, headers = self._request("POST", "/v1/solve", _puzzle(puzzle))
        if "status" in answer:
            return Answer.of(answer)
        job = Job.of(self, answer)
        if not wait:
            raise TimeoutError(f"the search continues as job {job.id}")
        job.wait(timeout=timeout)
        if job.state != "succeeded":
            raise TimeoutError(f"job {job.id} ended {job.state}: {job.raw.get('error')}")
        return Answer.of(job.result)

    def verify(self, puzzle: Json | str, moves: list[Json]) -> Verdict:
        return Verdict.of(self.call("POST", "/v1/verify", {"puzzle": _puzzle(puzzle), "moves": moves}))

    def difficulty(self, puzzle: Json | str) -> Json:
        return self.call("POST", "/v1/difficulty", _puzzle(puzzle))

    def hint(self, code: str, level: int = 1) -> Hint:
        return Hint.of(self.call("GET", f"/v1/puzzles/{urllib.parse.quote(code)}/hint?level={level}"))

    def random(self, length: int | None = None, *, grade: str | None = None, board: str | None = None,
               robots: int | None = None, seed: str | None = None) -> Generated:
        query = {k: v for k, v in (("length", length), ("grade", grade), ("board", board), ("robots", robots),
                                   ("seed", seed)) if v is not None}
        return Generated.of(self.call("GET", f"/v1/puzzles/random?{urllib.parse.urlencode(query)}"))

    def picture(self, code: str, *, png: bool = True) -> bytes:
        return self._raw("GET", f"/v1/puzzles/{urllib.parse.quote(code)}.{'png' if png else 'svg'}")

    # packs and jobs

    def pack(self, count: int, min_length: int, max_length: int, *, seed: str | int = 0,
             board: str = "random-2013", robots: int = 4, ricochet: str = "turn",
             idempotency_key: str | None = None) -> Job:
        body = {"count": count, "min_length": min_length, "max_length": max_length, "seed": seed, "board": board,
                "robots": robots, "ricochet": ricochet}
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return Job.of(self, self.call("POST", "/v1/packs", body, headers=headers))

    def job(self, job_id: str) -> Job:
        return Job.of(self, self.call("GET", f"/v1/jobs/{job_id}"))

    # games

    def new_game(self, players: list[str], *, board: str = "random", seed: str | None = None,
                 options: Json | None = None) -> Game:
        body: Json = {"players": players, "board": board, "options": options or {}}
        if seed is not None:
            body["seed"] = seed
        answer = self.call("POST", "/v1/games", body)
        return Game(self, answer["game"]["id"], answer["game"], answer["tokens"])

    # HTTP

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = None,
             headers: dict[str, str] | None = None) -> Any:
        return self._request(method, path, body, token=token, headers=headers)[0]

    def lines(self, path: str) -> Iterator[Json]:
        for line in self._raw("GET", path).decode().splitlines():
            if line.strip():
                yield json.loads(line)

    def _request(self, method: str, path: str, body: Any = None, *, token: str | None = None,
                 headers: dict[str, str] | None = None) -> tuple[Any, Any]:
        data, response_headers = self._send(method, path, body, token, headers)
        return json.loads(data), response_headers

    def _raw(self, method: str, path: str) -> bytes:
        return self._send(method, path, None, None, None)[0]

    def _send(self, method: str, path: str, body: Any, token: str | None,
              headers: dict[str, str] | None) -> tuple[bytes, Any]:
        url = path if path.startswith("http") else self.base_url + path
        sent = {"Accept": "application/json", **(headers or {})}
        if body is not None:
            sent["Content-Type"] = "application/json"
        if self.api_key:
            sent["X-API-Key"] = self.api_key
        if token:
            sent["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(url, data=json.dumps(body).encode() if body is not None else None,
                                         method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read(), response.headers
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = {"title": e.reason, "detail": raw.decode(errors="replace")[:200]}
            raise _BY_STATUS.get(e.code, ApiError)(e.code, problem, e.headers) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            raise Unreachable(0, {"title": "Unreachable", "detail": f"cannot reach {self.base_url} ({reason})"}) \
                from None


def _puzzle(puzzle: Json | str) -> Json:
    """A puzzle as docs/formats.md writes it, or a code."""
    return {"code": puzzle} if isinstance(puzzle, str) else puzzle


def _link(header: str, rel: str) -> str | None:
    for url, name in re.findall(r'<([^>]+)>;\s*rel="([^"]+)"', header):
        if name == rel:
            return url
    return None
