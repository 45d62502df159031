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


def _processes() -> list[tuple[int, bytes]]:
    """Every process, with its command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((int(entry.name), (entry / "cmdline").read_bytes()))
            except OSError:
                continue
    return found


def _descendants(pid: int) -> dict[int, bytes]:
    """Every process below `pid`, with its command line."""
    found: dict[int, bytes] = {}
    below = [pid]
    while below:
        for child, cmdline in _children(below.pop()):
            found[child] = cmdline
            below.append(child)
    return found


def _alive(pid: int, cmdline: bytes) -> bool:
    """The process `pid` still runs that command line (a zombie or a pid used again does not count)."""
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z" and (Path("/proc") / str(pid) / "cmdline").read_bytes() == cmdline
    except (OSError, IndexError):
        return False


def _killed_and_back(serve: subprocess.Popen, log: Path, name: str, marker: bytes) -> None:
    """kill -9 the process of `ricochet serve` named `name`; it starts again, the log says so,
    and nothing it left runs (a Celery pool process, an nginx worker holding the port)."""
    # It may be starting again itself (the webhook worker and the beat lose Redis when it is killed, and
    # wait 1 s, then 2, ... between starts): it is there within 30 s.
    deadline = time.monotonic() + 30
    while len(found := [p for p, cmdline in _children(serve.pid) if marker in cmdline]) != 1:
        assert time.monotonic() < deadline, (name, [c[-120:] for _, c in _children(serve.pid)])
        time.sleep(0.2)
    (pid,) = found
    left = _descendants(pid)
    before = len(log.read_bytes())  # what the log says from here on is about this kill
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while f"the {name} started again" not in (since := log.read_bytes()[before:].decode()):
        assert serve.poll() is None and time.monotonic() < deadline, since[-2000:]
        time.sleep(0.2)
    assert f"the {name} (pid {pid}) was killed by SIGKILL; starting it again in " in since, since[-2000:]
    assert [p for p, cmdline in left.items() if _alive(p, cmdline)] == []
    assert [p for p, cmdline in _children(serve.pid) if marker in cmdline] not in ([], [pid])


def _redis_killed_and_back(serve: subprocess.Popen, instance: Path) -> None:
    """kill -9 the private Redis: within 10 s it answers again at the same address, with a key
    written before (it persists to the instance folder), and the API is ready again."""
    import redis

    from workers.embedded import running_redis

    store = redis.Redis.from_url(running_redis(instance)["redis_url"], socket_timeout=2)
    store.set("test:kept", "before the kill")
    (pid,) = [p for p, cmdline in _children(serve.pid) if b"redis-server" in cmdline]
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    while True:
        try:
            assert store.get("test:kept") == b"before the kill"
            break
        except redis.ConnectionError:
            assert time.monotonic() - killed < 10, "Redis was not back within 10 s"
            time.sleep(0.1)


@pytest.mark.slow
def test_ricochet_serve_starts_again_what_dies(tmp_path):
    """kill -9 Redis, the worker, the webhook worker, the beat, nginx and gunicorn under a running
    `ricochet serve`: each comes back (Redis within 10 s with its data), the log
    says so, and a solve queued as a job completes."""
    from tests.test_jobs import HARD

    log = tmp_path / "serve.log"
    # the solve below is a job
    with _serving(tmp_path, log, RICOCHET_WEB_WORKERS="1", RICOCHET_SOLVE_TIME_BUDGET="0.01") as (serve, base):
        _redis_killed_and_back(serve, tmp_path)
        _killed_and_back(serve, log, "worker", b"--queues\x00ricochet")
        _killed_and_back(serve, log, "webhook worker", b"--queues\x00webhooks")
        _killed_and_back(serve, log, "beat", b"beat\x00--loglevel")
        _killed_and_back(serve, log, "front (nginx)", b"nginx")
        _killed_and_back(serve, log, "gunicorn", b"gunicorn")
        _ready(serve, base)
        job = _job_done(base, "/v1/solve", HARD, 180)
        assert job["state"] == "succeeded" and job["result"]["length"] == 24


def _ricochet_serve(port: int, instance: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    return subprocess.run([str(Path(sys.executable).parent / "ricochet"), "serve", "--port", str(port),
                           "--instance", str(instance)], env=env, capture_output=True, text=True, timeout=30)


def test_a_taken_port_is_refused_before_anything_starts(tmp_path):
    """Something listens on the port: `ricochet serve` exits non-zero naming it, having started nothing."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _ricochet_serve(port, tmp_path)
    assert done.returncode == 1 and f"port {port} on 127.0.0.1 is taken" in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["serve.lock"]  # no Redis, no front, no metrics


@pytest.mark.slow
def test_kill_9_of_ricochet_serve_leaves_nothing_of_its_stack(tmp_path):
    """A second serve on a running one's instance stops at once and says so; /metrics
    counts this deployment's requests only; `kill -9` of the serve ends every process
    of its stack (the web processes, the Celery pool, nginx's workers) within 15 s,
    and nothing listens on its ports after."""
    with _serving(tmp_path, None, RICOCHET_WEB_WORKERS="2") as (serve, base):
        started = time.monotonic()
        done = _ricochet_serve(free_port(), tmp_path)
        assert done.returncode == 1 and time.monotonic() - started < 10, done.stderr
        assert f"another `ricochet serve` (pid {serve.pid}, {base}) is running from the instance folder {tmp_path}" \
            in done.stderr, done.stderr

        for _ in range(3):
            _get(base + "/v1/boards")
        with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
            scraped = r.read().decode()
        assert 'endpoint="/v1/boards",method="GET",status="200"} 3.0' in scraped, scraped[-3000:]
        assert list((tmp_path / "metrics").glob("*.db"))

        stack = _descendants(serve.pid)
        assert len(stack) >= 9, stack  # watchdog, Redis, worker and its pool, beat, gunicorn and 2, nginx and 1
        ports = [int(base.rsplit(":", 1)[1]), int(json.loads((tmp_path / "run.json").read_text())["redis_url"]
                                                  .rsplit(":", 1)[1].split("/")[0])]
        ports += [int(c.split(b"--bind\x00")[1].split(b"\x00")[0].rsplit(b":", 1)[1])
                  for c in stack.values() if b"gunicorn" in c][:1]
        os.kill(serve.pid, signal.SIGKILL)
        deadline = time.monotonic() + 15
        while left := [p for p, cmdline in stack.items() if _alive(p, cmdline)]:
            assert time.monotonic() < deadline, [stack[p][:80] for p in left]
            time.sleep(0.2)
        named = [c for p, c in _processes() if str(tmp_path).encode() in c and _alive(p, c)]
        assert named == []  # nor anything else naming the instance (nginx's, the beat's command lines)
        for port in ports:
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("127.0.0.1", port), timeout=2).close()


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
