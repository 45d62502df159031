"""PDF books from one client against another client's daily puzzle (issue 67):
a pack of --count puzzles is made, then one client (its own loopback address)
asks for --books books at once (every paper, grid and solutions choice, so
none is kept yet; each 429 or 503 waited out by its Retry-After, at most 2 s),
while another client (another address) reads /v1/daily every 50 ms.  Prints
the daily's p50, p90, p99 and max against the same probe with no books asked
for (the baseline, measured first in the same run), the books' statuses, the
refusals the book client met, and how long its books took; then every book
asked again (kept: how long they take now).

    .venv/bin/python bench/books.py                          # `ricochet serve` started here
    .venv/bin/python bench/books.py --url http://127.0.0.1:8080 --count 1000
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import statistics
import threading
import time
from urllib.parse import urlsplit

from _stack import private_serve

PAPERS, GRIDS = ("a4", "letter"), (1, 2, 4, 6, 9, 12, 20)


def request(base: str, method: str, path: str, source: str, body: dict | None = None,
            timeout: float = 120) -> tuple[int, dict[str, str], bytes]:
    """One request from a loopback address of its own (the service tells clients apart by address)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout, source_address=(source, 0))
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def make_pack(base: str, count: int) -> str:
    status, headers, body = request(base, "POST", "/v1/packs", "127.0.0.4",
                                    {"count": count, "min_length": 8, "max_length": 10, "seed": "bench-books",
                                     "title": f"Bench: {count} puzzles"})
    if status != 202:
        raise SystemExit(f"the pack was refused: {status} {body[:300]!r}")
    location = headers["Location"]
    while True:
        _, _, job = request(base, "GET", location, "127.0.0.4")
        state = json.loads(job)
        if state["state"] in ("succeeded", "failed", "cancelled"):
            if state["state"] != "succeeded":
                raise SystemExit(f"the pack {state['state']}: {state.get('error')}")
            return state["pack_id"]
        time.sleep(0.5)


def probe(base: str, stop: threading.Event, times: list[float]) -> None:
    while not stop.is_set():
        started = time.monotonic()
        status, _, _ = request(base, "GET", "/v1/daily", "127.0.0.3")
        if status == 200:
            times.append(time.monotonic() - started)
        time.sleep(0.05)


def figures(times: list[float]) -> str:
    ordered = sorted(times)
    at = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return (f"n={len(ordered)} p50={at(0.5) * 1000:.0f} ms p90={at(0.9) * 1000:.0f} ms "
            f"p99={at(0.99) * 1000:.0f} ms max={ordered[-1] * 1000:.0f} ms")


def book(base: str, path: str) -> tuple[int, int, float, int]:
    """A book asked for as a patient client does: its status, size, seconds and refusals met."""
    started, refusals = time.monotonic(), 0
    while True:
        status, headers, body = request(base, "GET", path, "127.0.0.2")
        if status not in (429, 503) or time.monotonic() - started > 600:
            return status, len(body), time.monotonic() - started, refusals
        refusals += 1
        time.sleep(min(2.0, float(headers.get("Retry-After", 1))))


def run(base: str, count: int, books: int, baseline_seconds: float) -> None:
    print(f"making a pack of {count} puzzles ...", flush=True)
    pack = make_pack(base, count)
    paths = [f"/v1/packs/{pack}.pdf?paper={paper}&per_page={n}&solutions={s}"
             for paper in PAPERS for n in GRIDS for s in ("true", "false")][:books]
    for _ in range(5):  # warm: the first answers load the calendar and the connection pools
        request(base, "GET", "/v1/daily", "127.0.0.3")
    quiet: list[float] = []
    stop = threading.Event()
    reader = threading.Thread(target=probe, args=(base, stop, quiet))
    reader.start()
    time.sleep(baseline_seconds)
    stop.set()
    reader.join()
    print(f"/v1/daily alone:                {figures(quiet)}")
    busy: list[float] = []
    stop = threading.Event()
    reader = threading.Thread(target=probe, args=(base, stop, busy))
    reader.start()
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(len(paths)) as pool:
        fetched = list(pool.map(lambda p: book(base, p), paths))
    took = time.monotonic() - started
    stop.set()
    reader.join()
    print(f"/v1/daily with {len(paths)} books asked: {figures(busy)}  "
          f"(p99 {statistics.quantiles(busy, n=100)[98] / statistics.quantiles(quiet, n=100)[98]:.2f}x alone)")
    statuses = {s: sum(1 for f in fetched if f[0] == s) for s in sorted({f[0] for f in fetched})}
    print(f"books: {statuses}, {sum(f[1] for f in fetched) / 2**20:.1f} MiB, all in {took:.1f} s; "
          f"refusals met {sum(f[3] for f in fetched)} (429/503 with Retry-After), "
          f"slowest book {max(f[2] for f in fetched):.1f} s")
    again = [book(base, p) for p in paths]
    print(f"asked again (kept): median {statistics.median(f[2] for f in again) * 1000:.0f} ms, "
          f"max {max(f[2] for f in again) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running service (default: start `ricochet serve` here)")
    parser.add_argument("--count", type=int, default=300, help="puzzles in the pack (the issue's: 1000)")
    parser.add_argument("--books", type=int, default=28, help="books asked for at once (at most 28)")
    parser.add_argument("--baseline", type=float, default=10.0, help="seconds the daily is probed alone first")
    args = parser.parse_args()
    if args.url:
        run(args.url, args.count, args.books, args.baseline)
        return
    with private_serve() as (base, _):
        run(base, args.count, args.books, args.baseline)


if __name__ == "__main__":
    main()
