"""Soak benchmark: mixed traffic against the production stack for a while.

    .venv/bin/python bench/soak.py [--seconds 600] [--clients 8] [--warmup 60]

Starts a private Redis, gunicorn with the production settings
(service/gunicorn_config.py, the default number of processes) and a Celery
worker of one process per core (as `ricochet serve` does), then runs mixed traffic from loopback only: the daily puzzle,
verify (half of them rated, for players drawn from 20,000 ids: most new to the
service), the next puzzle for those players, solve, random puzzles, small
packs, a game with bids and watchers streaming its events, whole exports one
after another (30 s apart; the one running at the end is cut), and puzzles on distinct 32x32 custom boards
(verified for a player, solved and drawn: each board new to the process, the
load that grew an unbounded board cache).  Every request loop is bounded by the time given.

The deployment's rate limits and quotas are on, as in production: each client
sends its own issued API key (the watchers share one, the exporter has one), so
the clients are eight integrators, not one address.  A client past its quota
(a queued solve is charged its whole job budget) is answered 429 and goes on
with its mix: that is the service keeping one client's flood of searches from
filling the queue that every client shares (503).  `--limits off` runs them as
one unlimited address instead.  It
reports per route the requests, errors (5xx, 503 included, and connection failures), p50 and
p99, the RSS of every process of the stack after the warm-up and at the end,
the peak PSS of each and of the whole stack (what it takes of the machine),
and whether any process of the stack was restarted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _stack import wait_ready  # noqa: E402

from workers.embedded import EmbeddedRedis, free_port  # noqa: E402
from workers.stores import Stores  # noqa: E402

DAILY_MOVES = None  # filled from the daily's solution at the start


def call(method: str, url: str, body: dict | None = None, headers: dict | None = None,
         timeout: float = 30) -> tuple[int, bytes, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def _proc_kib(pid: int, name: str, field: str) -> int:
    """A figure in KiB from /proc/<pid>/<name> (0 once the process is gone)."""
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kib(pid: int) -> int:
    return _proc_kib(pid, "status", "VmRSS:")


def pss_kib(pid: int) -> int:
    return _proc_kib(pid, "smaps_rollup", "Pss:")


def stack_pids(root: int) -> dict[int, str]:
    """Every process under `root`, by command."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]
        except (OSError, ValueError):
            continue
        out[int(entry.name)] = (ppid, cmd)
    family, todo = {}, [root]
    while todo:
        pid = todo.pop()
        for child, (ppid, cmd) in out.items():
            if ppid == pid and child not in family:
                family[child] = cmd
                todo.append(child)
    return family


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--warmup", type=float, default=60, help="seconds of traffic before the start RSS is read")
    parser.add_argument("--web-workers", type=int, default=None,
                        help="gunicorn processes (default: the deployment's, RICOCHET_WEB_WORKERS's default)")
    parser.add_argument("--concurrency", type=int, default=os.cpu_count() or 1,
                        help="worker processes (default: one per core, as `ricochet worker`)")
    parser.add_argument("--limits", choices=("on", "off"), default="on",
                        help="the deployment's rate limits and quotas, each client with a key of its own (default on)")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis", persist=False) as redis:
        env = {**os.environ, "REDIS_URL": redis.url, "RICOCHET_RATE_LIMITS": args.limits, "RICOCHET_ACCESS_LOG": ""}
        if args.web_workers:
            env["RICOCHET_WEB_WORKERS"] = str(args.web_workers)
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_config", "--bind",
                                f"127.0.0.1:{port}", "service.app:create_app()"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel",
                                   "error", "--concurrency", str(args.concurrency), "--without-gossip",
                                   "--without-mingle", "--beat",
                                   "--schedule", str(Path(tmp) / "beat"), "--queues", "ricochet,packs"],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            wait_ready(base)
            run(base, args, {"gunicorn": web.pid, "worker": worker.pid, "redis": redis.process.pid}, redis.url)
        finally:
            for proc in (web, worker):
                os.killpg(proc.pid, signal.SIGTERM)
            for proc in (web, worker):
                proc.wait(timeout=60)


def issue_keys(redis_url: str, names: list[str]) -> dict[str, dict[str, str]]:
    """A key of its own for each client (as `ricochet keys create NAME` issues it): the headers it sends."""
    stores = Stores.from_url(redis_url)
    return {name: {"X-API-Key": stores.keys.create(name)[0]} for name in names}


def run(base: str, args: argparse.Namespace, roots: dict[str, int], redis_url: str) -> None:
    names = [f"soak-client-{k}" for k in range(args.clients)] + ["soak-watchers", "soak-exporter"]
    keys = issue_keys(redis_url, names) if args.limits == "on" else {name: {} for name in names}
    daily = json.loads(call("GET", base + "/v1/daily", headers=keys["soak-exporter"])[1])
    solution = json.loads(call("GET", f"{base}/v1/daily/{daily['date']}/solution", headers=keys["soak-exporter"])[1])
    puzzle = daily["puzzle"]
    game = json.loads(call("POST", base + "/v1/games", {"players": ["ann", "bob"], "seed": "soak"},
                           keys["soak-exporter"])[1])
    gid, tokens = game["game"]["id"], game["tokens"]

    stats: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, int] = defaultdict(int)
    statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    lock = threading.Lock()
    stop = time.monotonic() + args.warmup + args.seconds

    def timer(key: dict[str, str]) -> Callable[..., None]:
        def timed(route: str, method: str, path: str, body: dict | None = None, headers: dict | None = None,
                  timeout: float = 30) -> None:
            t0 = time.perf_counter()
            try:
                status, _, _ = call(method, base + path, body, {**key, **(headers or {})}, timeout)
            except OSError:
                status = 0
            with lock:
                stats[route].append(time.perf_counter() - t0)
                statuses[route][status] += 1
                errors[route] += status == 0 or status >= 500
        return timed

    def client(k: int) -> None:
        rng, timed = random.Random(k), timer(keys[f"soak-client-{k}"])
        while time.monotonic() < stop:
            _one_request(rng, timed, puzzle, solution, gid, tokens)

    def watcher() -> None:
        timed = timer(keys["soak-watchers"])
        while time.monotonic() < stop:
            timed("events", "GET", f"/v1/games/{gid}/events", timeout=60)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
    threads += [threading.Thread(target=watcher) for _ in range(3)]
    threads.append(threading.Thread(target=exporter, args=(base, keys["soak-exporter"], stop, lock, stats, statuses,
                                                           errors)))
    for t in threads:
        t.start()
    time.sleep(args.warmup)  # caches and pools loaded: memory from here on
    start_procs = _processes(roots)
    start_rss = {pid: rss_kib(pid) for pid in start_procs}
    peaks = Peaks(roots)
    while any(t.is_alive() for t in threads):
        peaks.sample()
        time.sleep(2)
    end_procs = _processes(roots)
    _report(stats, errors, statuses, start_procs, start_rss, end_procs)
    peaks.report()


def exporter(base: str, key: dict[str, str], stop: float, lock: threading.Lock, stats: dict, statuses: dict,
             errors: dict) -> None:
    """Whole exports (a CPU's half-minute when it has one) 30 s apart; the one running at `stop` is cut."""
    while time.monotonic() < stop:
        t0, status = time.perf_counter(), 0
        try:
            request = urllib.request.Request(base + "/v1/puzzles/export?format=ndjson", headers=key)
            with urllib.request.urlopen(request, timeout=60) as r:
                status = r.status
                while r.read(1 << 16) and time.monotonic() < stop:
                    pass
        except urllib.error.HTTPError as e:
            status = e.code
        except OSError:
            pass
        with lock:
            stats["export"].append(time.perf_counter() - t0)
            statuses["export"][status] += 1
            errors["export"] += status == 0 or status >= 500
        time.sleep(min(30.0, max(0.0, stop - time.monotonic())))


class Peaks:
    """The largest PSS (a process's own pages, plus its share of those it shares:
    they add up to what the stack takes) of each process, and of the stack
    without its Redis, sampled through the run."""

    def __init__(self, roots: dict[str, int]) -> None:
        self.roots = roots
        self.each: dict[int, int] = defaultdict(int)
        self.names: dict[int, str] = {}
        self.stack = 0

    def sample(self) -> None:
        procs = _processes(self.roots)
        self.names.update(procs)
        now = {pid: pss_kib(pid) for pid in procs}
        for pid, kib in now.items():
            self.each[pid] = max(self.each[pid], kib)
        self.stack = max(self.stack, sum(kib for pid, kib in now.items() if pid != self.roots["redis"]))

    def report(self) -> None:
        print(f"\n{'process':>60} {'peak PSS MiB':>13}")
        for pid in sorted(self.each):
            print(f"{self.names[pid][:60]:>60} {self.each[pid] / 1024:>13.1f}")
        print(f"\npeak PSS of the stack (web and workers, without Redis): {self.stack / 1024:.0f} MiB")


def _one_request(rng: random.Random, timed: Callable[..., None], puzzle: dict, solution: dict, gid: str,
                 tokens: dict[str, str]) -> None:
    """One request of a soak client's mix, drawn by `rng`."""
    roll = rng.random()
    player = f"soak-{rng.randrange(20_000)}"  # players come and go: most ids new to the service
    if roll < 0.3:
        timed("daily", "GET", "/v1/daily")
    elif roll < 0.55:
        extra = {"player": player} if rng.random() < 0.5 else {}
        timed("verify", "POST", "/v1/verify", {"puzzle": puzzle, "moves": solution["moves"], **extra})
    elif roll < 0.6:
        timed("next", "GET", f"/v1/puzzles/next?player={player}")
    elif roll < 0.75:
        timed("random", "GET", f"/v1/puzzles/random?length={rng.randint(4, 14)}&seed={rng.random()}")
    elif roll < 0.9:
        robots = {c: [rng.randrange(16), rng.randrange(16)] for c in ("red", "green", "blue", "yellow")}
        body = {**puzzle, "robots": robots}
        timed("solve", "POST", "/v1/solve", body)
    elif roll < 0.93:
        custom = custom_puzzle(rng)
        timed("custom", "POST", "/v1/verify", {"puzzle": custom, "moves": [], "player": player})
        timed("custom", "POST", "/v1/solve", custom)
        timed("picture", "POST", "/v1/pictures?format=png", custom)
    elif roll < 0.97:
        timed("game", "GET", f"/v1/games/{gid}?since=0")
        name = rng.choice(["ann", "bob"])
        timed("bid", "POST", f"/v1/games/{gid}/bids", {"moves": rng.randint(5, 30)},
              {"Authorization": f"Bearer {tokens[name]}"})
    else:
        timed("pack", "POST", "/v1/packs", {"count": 5, "min_length": rng.randint(8, 18),
                                            "max_length": 20, "seed": str(rng.random())})


def custom_puzzle(rng: random.Random) -> dict:
    """A puzzle on a 32x32 custom board no client sent before (random walls)."""
    walls = [[rng.randrange(32), rng.randrange(32), rng.choice("NESW")] for _ in range(40)]
    return {"board": {"width": 32, "height": 32, "walls": walls, "blocked": [], "diagonals": [],
                      "targets": [{"cell": [rng.randrange(8, 24), rng.randrange(8, 24)], "colour": "red",
                                   "symbol": "circle"}]},
            "robots": {"red": [0, 0], "green": [31, 0], "blue": [0, 31], "yellow": [31, 31]},
            "target": {"colour": "red", "symbol": "circle"}}


def _processes(roots: dict[str, int]) -> dict[int, str]:
    found = {pid: name for name, pid in roots.items()}
    for name, pid in roots.items():
        found.update({child: f"{name}: {cmd}" for child, cmd in stack_pids(pid).items()})
    return found


def _report(stats: dict[str, list[float]], errors: dict[str, int], statuses: dict[str, dict[int, int]],
            start_procs: dict[int, str], start_rss: dict[int, int], end_procs: dict[int, str]) -> None:
    print(f"{'route':>8} {'requests':>9} {'errors':>7} {'p50 ms':>8} {'p99 ms':>8}  statuses")
    for route in sorted(stats):
        times = sorted(stats[route])
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"{route:>8} {len(times):>9} {errors[route]:>7} {1000 * statistics.median(times):>8.1f} "
              f"{1000 * p99:>8.1f}  {dict(statuses[route])}")
    print(f"\n{'process':>60} {'RSS start MiB':>14} {'RSS end MiB':>12}")
    for pid in sorted(set(start_procs) | set(end_procs)):
        name = end_procs.get(pid) or start_procs.get(pid)
        print(f"{name[:60]:>60} {start_rss.get(pid, 0) / 1024:>14.1f} {rss_kib(pid) / 1024:>12.1f}")
    restarted = set(start_procs) ^ set(end_procs)
    refused = sum(n for by_status in statuses.values() for status, n in by_status.items() if status == 429)
    print(f"\nprocesses started or gone during the run: {len(restarted)}  (5xx and failed connections: "
          f"{sum(errors.values())}; 429, a client past its rate limit or quota: {refused})")



if __name__ == "__main__":
    main()
