"""`ricochet serve`, the README's one command: nginx in front of gunicorn with
the production settings, a private Redis and a worker, and long packs from the
shipped pools."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import serve_ready
from workers.embedded import free_port


def _get(url: str, body: dict | None = None) -> tuple[int, dict, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, dict(r.headers), json.loads(r.read())


def _slow_and_oversized_clients_get_nowhere(port: int) -> None:
    """200 connections that send their headers a byte at a time hold no web
    thread (the front buffers requests whole): /healthz still answers; oversized
    request lines, headers and bodies get the API's problem+json."""
    slow = []
    for _ in range(200):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a")
        slow.append(s)
    try:
        for _ in range(5):  # more than gunicorn's threads: each would be held by a slow client without the front
            assert _get(f"http://127.0.0.1:{port}/healthz")[0] == 200
    finally:
        for s in slow:
            s.close()
    for path, headers, body, status, kind in (
            ("/v1/boards?x=" + "a" * 20_000, {}, None, 414, "uri-too-long"),
            ("/v1/boards", {"X-Big": "a" * 20_000}, None, 431, "request-headers-too-large"),
            ("/v1/solve", {"Content-Type": "application/json"}, b"[" * (2 << 20), 413, "too-large")):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST" if body else "GET", path, body=body, headers=headers)
        r = conn.getresponse()
        problem = json.loads(r.read())
        assert r.status == status and r.getheader("Content-Type") == "application/problem+json", (path[:20], r.status)
        assert problem["type"] == f"/problems/{kind}" and problem["status"] == status
        conn.close()


@pytest.mark.slow
def test_ricochet_serve_runs_gunicorn_redis_and_a_worker(tmp_path):
    with _serving(tmp_path, None, RICOCHET_WEB_WORKERS="2") as (serve, base):
        status, headers, daily = _get(base + "/v1/daily")
        assert status == 200 and headers["Server"] == "nginx" and daily["optimal_length"] >= 5  # the front
        _slow_and_oversized_clients_get_nowhere(int(base.rsplit(":", 1)[1]))
        job = _job_done(base, "/v1/packs", {"count": 30, "min_length": 20, "max_length": 22, "seed": "serve"}, 60)
        assert job["state"] == "succeeded" and job["result"]["made"] == 30
    deadline = time.monotonic() + 20
    while left := subprocess.run(["pgrep", "-s", str(serve.pid)], capture_output=True, text=True).stdout.split():
        assert time.monotonic() < deadline, f"processes of the stack still running: {left}"
        time.sleep(0.2)


def test_the_fronts_problems_are_the_apis():
    """The problem+json nginx answers itself (service/front.conf.template) has the
    type, title and status the API gives each kind."""
    import re

    from application.problems import KINDS

    text = (Path(__file__).resolve().parents[1] / "service" / "front.conf.template").read_text()
    bodies = re.findall(r"return (\d+) '(\{.*\})\\n';", text)
    assert len(bodies) >= 5
    for status, body in bodies:
        problem = json.loads(body)
        kind = problem["type"].removeprefix("/problems/")
        assert (int(status), problem["status"], problem["title"]) == (KINDS[kind][0], KINDS[kind][0], KINDS[kind][1])


def _children(pid: int) -> list[tuple[int, bytes]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append((int(entry.name), (entry / "cmdline").read_bytes()))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _live_in_group(group: int) -> list[int]:
    """Processes of a process group, but zombies (an orphan's end, reaped by whoever adopted it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == group and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _killed_and_back(serve: subprocess.Popen, log: Path, name: str, marker: bytes) -> None:
    """kill -9 the process of `ricochet serve` named `name`; it starts again, and the log says so."""
    (pid,) = [p for p, cmdline in _children(serve.pid) if marker in cmdline]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while f"the {name} started again" not in log.read_text():
        assert serve.poll() is None and time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.2)
    assert f"the {name} (pid {pid}) was killed by SIGKILL; starting it again in 1 s" in log.read_text()
    assert _live_in_group(pid) == []  # nothing is left of its group (a Celery pool process, an nginx worker)
    assert [p for p, cmdline in _children(serve.pid) if marker in cmdline] not in ([], [pid])


@pytest.mark.slow
def test_ricochet_serve_starts_again_a_worker_beat_or_front_that_dies(tmp_path):
    """kill -9 the worker, the beat and nginx under a running `ricochet serve`:
    each comes back, the log says so, and a solve queued as a job completes."""
    from tests.test_jobs import HARD

    log = tmp_path / "serve.log"
    # the solve below is a job
    with _serving(tmp_path, log, RICOCHET_WEB_WORKERS="1", RICOCHET_SOLVE_TIME_BUDGET="0.01") as (serve, base):
        _killed_and_back(serve, log, "worker", b"worker\x00--loglevel")
        _killed_and_back(serve, log, "beat", b"beat\x00--loglevel")
        _killed_and_back(serve, log, "front (nginx)", b"nginx")
        _ready(serve, base)
        job = _job_done(base, "/v1/solve", HARD, 180)
        assert job["state"] == "succeeded" and job["result"]["length"] == 24


@contextmanager
def _serving(tmp_path: Path, log: Path | None, **settings: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """`ricochet serve` on a free port (its own Redis, REDIS_URL unset), ready; stopped with SIGTERM after.
    Its output goes to `log`, or its standard error is kept for the reason it did not start."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | settings
    argv = [str(Path(sys.executable).parent / "ricochet"), "serve", "--port", str(port), "--instance", str(tmp_path)]
    with log.open("wb") if log else open(os.devnull, "wb") as out:
        serve = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=out, stderr=out if log else subprocess.PIPE,
                                 start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _ready(serve, base)
        yield serve, base
    finally:
        os.kill(serve.pid, signal.SIGTERM)
        serve.wait(timeout=60)


def _job_done(base: str, path: str, body: dict, seconds: float) -> dict:
    """POST a job (202), then its state until it ends."""
    status, headers, job = _get(base + path, body)
    assert status == 202, job
    deadline = time.monotonic() + seconds
    while job["state"] in ("pending", "running"):
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
        job = _get(base + headers["Location"])[2]
    return job


def _ready(serve: subprocess.Popen, base: str) -> None:
    serve_ready(serve, base + "/readyz",
                lambda: serve.stderr.read().decode() if serve.stderr else "ricochet serve exited")


def test_a_full_redis_refuses_writes_as_503_and_evicts_nothing(tmp_path):
    """`ricochet serve`'s Redis has a maxmemory and the noeviction policy: once
    full, a write is refused (503 with Retry-After, as an outage is) and no key is
    evicted, a job or a pack or an issued key no more than any other."""
    import redis

    from service.app import create_app
    from workers.embedded import MAXMEMORY, EmbeddedRedis

    with EmbeddedRedis(tmp_path, persist=False, maxmemory="8mb") as server:
        raw = redis.Redis.from_url(server.url)
        assert raw.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        raw.set("ricochet:job:kept", "x", ex=3600)  # a key that expires: volatile-* policies would take it
        filled = 0
        with pytest.raises(redis.exceptions.OutOfMemoryError):
            while True:
                raw.set(f"filler:{filled}", "x" * 10_000)
                filled += 1
        client = create_app({"REDIS_URL": server.url, "RATE_LIMITS_ENABLED": False}).test_client()
        r = client.post("/v1/games", json={"players": ["ann", "bob"]})
        assert r.status_code == 503 and r.headers["Retry-After"], (r.status_code, r.json)
        assert raw.get("ricochet:job:kept") == b"x" and raw.get("filler:0") is not None
    assert EmbeddedRedis(tmp_path).maxmemory == MAXMEMORY
