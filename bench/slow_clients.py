"""Slow and idle clients against the HTTP front: N connections that send their
request headers one byte a second (slowloris), while /healthz is probed every
half second; prints how long the probes took.  Also oversized request lines
and headers: their status and media type.

    .venv/bin/python bench/slow_clients.py                 # `ricochet serve` started here
    .venv/bin/python bench/slow_clients.py --url http://127.0.0.1:8080   # a running deployment
    .venv/bin/python bench/slow_clients.py --connections 300 --seconds 60
"""

from __future__ import annotations

import argparse
import http.client
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from _stack import wait_ready

ROOT = Path(__file__).resolve().parents[1]


def slow_connection(host: str, port: int, stop: threading.Event, opened: list[int]) -> None:
    """Send a request's head one byte a second, and never finish it."""
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10_000
    try:
        with socket.create_connection((host, port), timeout=5) as s:
            opened.append(1)
            for byte in head:
                if stop.wait(1.0):
                    return
                s.sendall(bytes([byte]))
    except OSError:
        return  # the server closed it: what a front should do with a client this slow


def probe(host: str, port: int, path: str = "/healthz") -> tuple[float, int]:
    started = time.perf_counter()
    try:
        conn = http.client.HTTPConnection(host, port, timeout=30)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
    except OSError:
        status = 0
    return time.perf_counter() - started, status


def oversized(host: str, port: int) -> list[str]:
    rows = []
    for name, path, headers in (("request line of 20 KiB", "/v1/boards?x=" + "a" * 20_000, {}),
                                ("header of 20 KiB", "/v1/boards", {"X-Big": "a" * 20_000}),
                                ("headers of 64 KiB in all", "/v1/boards", {f"X-H{i}": "a" * 1000 for i in range(64)})):
        try:
            conn = http.client.HTTPConnection(host, port, timeout=30)
            conn.request("GET", path, headers=headers)
            r = conn.getresponse()
            rows.append(f"{name:>26}: {r.status} {r.getheader('Content-Type')}")
            conn.close()
        except OSError as e:
            rows.append(f"{name:>26}: connection error {e}")
    return rows


def run(url: str, connections: int, seconds: float) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    stop = threading.Event()
    opened: list[int] = []
    threads = [threading.Thread(target=slow_connection, args=(host, port, stop, opened), daemon=True)
               for _ in range(connections)]
    for t in threads:
        t.start()
    times, statuses = [], []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        took, status = probe(host, port)
        times.append(took)
        statuses.append(status)
        time.sleep(max(0.0, 0.5 - took))
    stop.set()
    times.sort()
    over = sum(1 for t in times if t > 1.0)
    print(f"{connections} slow-header connections ({len(opened)} opened) for {seconds:g} s: {len(times)} /healthz "
          f"probes, median {statistics.median(times) * 1e3:.0f} ms, max {times[-1] * 1e3:.0f} ms, "
          f"over 1 s: {over}, not 200: {sum(1 for s in statuses if s != 200)}")
    for row in oversized(host, port):
        print(row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running service (default: start `ricochet serve` here)")
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    if args.url:
        run(args.url, args.connections, args.seconds)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        serve = subprocess.Popen([str(Path(sys.executable).parent / "ricochet"), "serve", "--port", str(port),
                                  "--instance", tmp], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_ready(f"http://127.0.0.1:{port}", path="/healthz")
            run(f"http://127.0.0.1:{port}", args.connections, args.seconds)
        finally:
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(timeout=60)


if __name__ == "__main__":
    main()
