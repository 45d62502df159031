"""Slow and idle clients against the HTTP front: N connections that send their
request headers one byte a second (slowloris), or (--bodies) that send a
request with a 1 MiB body, all of it but its last bytes at once and then a byte
every 5 s, each from its own loopback address (127.0.x.y: the front's limit
per address does not turn them away); meanwhile /healthz is probed every half
second.  Prints how long the probes took, and with `ricochet serve` started
here the nginx worker's memory (RSS and PSS) at its peak and after the
connections closed.  Also oversized request lines and headers: their status
and media type.

    .venv/bin/python bench/slow_clients.py                 # `ricochet serve` started here
    .venv/bin/python bench/slow_clients.py --url http://127.0.0.1:8080   # a running deployment
    .venv/bin/python bench/slow_clients.py --connections 300 --seconds 60 [--bodies] [--one-address]
"""

from __future__ import annotations

import argparse
import http.client
import socket
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from _stack import private_serve

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


BODY = 1 << 20  # the front's and the API's limit


def slow_body(host: str, port: int, stop: threading.Event, opened: list[int], source: str) -> None:
    """A request with a 1 MiB body: all but its last 100 bytes at once, then a byte every 5 s."""
    head = (f"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {BODY}\r\n\r\n").encode()
    try:
        with socket.create_connection((host, port), timeout=30, source_address=(source, 0)) as s:
            opened.append(1)
            s.sendall(head + b" " * (BODY - 100))
            for _ in range(100):
                if stop.wait(5.0):
                    return
                s.sendall(b" ")
    except OSError:
        return  # refused or closed by the front


def address(i: int, one: bool) -> str:
    return "127.0.0.1" if one else f"127.0.{2 + i // 250}.{1 + i % 250}"


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


def memory(pids: list[int]) -> str:
    """RSS and PSS of processes (the nginx worker), in MiB."""
    rows = []
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        kib = {line.split(":")[0]: int(line.split()[1]) for line in text.splitlines()[1:] if line.endswith("kB")}
        rows.append(f"RSS {kib['Rss'] / 1024:.1f} MiB, PSS {kib['Pss'] / 1024:.1f} MiB")
    return "; ".join(rows) or "not measured (not started here)"


def run(url: str, connections: int, seconds: float, bodies: bool = False, one: bool = False,
        front: list[int] | None = None) -> None:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    stop = threading.Event()
    opened: list[int] = []
    threads = [threading.Thread(target=slow_body, args=(host, port, stop, opened, address(i, one)), daemon=True)
               if bodies else threading.Thread(target=slow_connection, args=(host, port, stop, opened), daemon=True)
               for i in range(connections)]
    for t in threads:
        t.start()
    times, statuses, peak = [], [], ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        took, status = probe(host, port)
        times.append(took)
        statuses.append(status)
        if time.monotonic() > deadline - seconds / 2 and not peak:
            peak = memory(front or [])
        time.sleep(max(0.0, 0.5 - took))
    stop.set()
    for t in threads:
        t.join(timeout=10)
    time.sleep(2)
    times.sort()
    over = sum(1 for t in times if t > 1.0)
    kind = f"slow-body (1 MiB, then a byte every 5 s; {'one address' if one else 'an address each'})" \
        if bodies else "slow-header"
    print(f"{connections} {kind} connections ({len(opened)} opened) for {seconds:g} s: {len(times)} /healthz "
          f"probes, median {statistics.median(times) * 1e3:.0f} ms, max {times[-1] * 1e3:.0f} ms, "
          f"over 1 s: {over}, not 200: {sum(1 for s in statuses if s != 200)}")
    if front:
        print(f"nginx worker at mid-run: {peak}; after the connections closed: {memory(front)}")
    for row in oversized(host, port):
        print(row)


def nginx_workers(serve: int) -> list[int]:
    """The nginx worker processes under `ricochet serve` (its master's children)."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                tree.setdefault(int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]), []).append(
                    int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    masters = [p for p in tree.get(serve, []) if Path(f"/proc/{p}/comm").read_text().strip() == "nginx"]
    return [w for m in masters for w in tree.get(m, [])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running service (default: start `ricochet serve` here)")
    parser.add_argument("--connections", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--bodies", action="store_true", help="slow bodies rather than slow headers")
    parser.add_argument("--one-address", action="store_true", help="every connection from 127.0.0.1")
    args = parser.parse_args()
    if args.url:
        run(args.url, args.connections, args.seconds, args.bodies, args.one_address)
        return
    with private_serve() as (base, serve):
        run(base, args.connections, args.seconds, args.bodies, args.one_address, nginx_workers(serve.pid))


if __name__ == "__main__":
    main()
