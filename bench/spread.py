"""How the front spreads requests over gunicorn's web processes: `ricochet serve`
(nginx, gunicorn, a private Redis, a worker) started here, N clients each on one
kept-alive connection to the front posting today's answer to /v1/verify for S
seconds; prints each web process's CPU seconds in the run and the latency.

    .venv/bin/python bench/spread.py [--clients 8] [--seconds 60] [--web-workers 5]

An nginx upstream with `keepalive` held a handful of connections to whichever
web process accepted them first, and a 15-minute run put 265 s of CPU on one
process against 1-8 s on the others (bench/RESULTS.md has the figures).
"""

from __future__ import annotations

import argparse
import datetime as dt
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _stack import wait_ready

ROOT = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def web_processes(serve: int) -> list[int]:
    """The web processes: children of the gunicorn master under `ricochet serve`."""
    tree = _children()
    for pid in tree.get(serve, []):
        if b"gunicorn" in Path(f"/proc/{pid}/cmdline").read_bytes():
            return sorted(tree.get(pid, []))
    raise SystemExit("no gunicorn master under ricochet serve")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def client(port: int, body: bytes, stop: threading.Event, times: list[float], failed: list[int]) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while not stop.is_set():
        started = time.perf_counter()
        try:
            conn.request("POST", "/v1/verify", body=body, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            r.read()
            if r.status != 200:
                failed.append(r.status)
        except OSError:
            failed.append(0)
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        times.append(time.perf_counter() - started)
    conn.close()


def run(port: int, serve: int, clients: int, seconds: float) -> None:
    base = f"http://127.0.0.1:{port}"
    today = dt.datetime.now(dt.UTC).date().isoformat()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", f"/v1/daily/{today}")
    daily = json.loads(conn.getresponse().read())
    conn.request("GET", f"/v1/daily/{today}/solution")
    moves = json.loads(conn.getresponse().read())["moves"]
    conn.close()
    body = json.dumps({"puzzle": daily["puzzle"], "moves": moves}).encode()
    workers = web_processes(serve)
    before = {pid: cpu_seconds(pid) for pid in workers}
    stop, times, failed = threading.Event(), [], []
    threads = [threading.Thread(target=client, args=(port, body, stop, times, failed)) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    used = sorted((cpu_seconds(pid) - before[pid] for pid in workers), reverse=True)
    times.sort()
    print(f"{base}: {clients} kept-alive clients, {seconds:g} s, {len(times)} verifies "
          f"({len(times) / seconds:.0f}/s), p50 {statistics.median(times) * 1e3:.1f} ms, "
          f"p99 {times[int(len(times) * 0.99)] * 1e3:.1f} ms, failed {len(failed)}")
    print("CPU seconds per web process: " + ", ".join(f"{u:.1f}" for u in used)
          + f" (the busiest {used[0] / max(sum(used), 1e-9):.0%} of {sum(used):.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--web-workers", type=int, default=5)
    args = parser.parse_args()
    from workers.embedded import free_port

    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env.update(RICOCHET_RATE_LIMITS="off", RICOCHET_WEB_WORKERS=str(args.web_workers))
        serve = subprocess.Popen([str(Path(sys.executable).parent / "ricochet"), "serve", "--port", str(port),
                                  "--instance", tmp], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_ready(f"http://127.0.0.1:{port}", path="/readyz")
            run(port, serve.pid, args.clients, args.seconds)
        finally:
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(timeout=60)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
