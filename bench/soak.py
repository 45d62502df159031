"""Soak benchmark: mixed traffic against the production stack for a while.

    .venv/bin/python bench/soak.py [--seconds 600] [--clients 8] [--warmup 60] [--check]

Starts what `ricochet serve` starts beside a private Redis: gunicorn with the
production settings (service/gunicorn_config.py, the default number of
processes), the Celery worker (`--concurrency`, one process by default as in
serve, the queues ricochet, packs and analysis), the webhook worker (threads)
and the beat, each as serve's own command line.  Then it runs mixed traffic
from loopback only, every loop bounded by the time given:

- eight integrators, each with an issued API key: the daily puzzle, verify
  (half of them rated, for players drawn from 20,000 ids: most new to the
  service), the next puzzle for those players, solve, random puzzles, small
  packs, a game with bids, puzzles on distinct 32x32 custom boards (verified
  for a player, solved, drawn as a PNG by POST and by code: each board new to
  the process, the load that grew an unbounded board cache), and made-up ids
  (puzzles, jobs, packs, games, players, rooms: 400 and 404);
- strangers without a key from many addresses (X-Forwarded-For through one
  trusted proxy, as behind serve's nginx): anonymous players verifying and
  asking for their next puzzle, games and rooms made and joined (each address
  drawn afresh: no daily state budget reached), play and embed pages, oEmbed cards,
  thumbnails of every size and PNGs with their solutions drawn;
- three watchers streaming a game's events; whole exports one after another
  (30 s apart; the one running at the end is cut);
- a book reader: a 20-puzzle pack (made before the rest starts) printed as
  PDF books in every paper and page size, with and without solutions (made on
  the worker, kept in Redis);
- a webhook owner: an endpoint on a loopback receiver registered, tested,
  its deliveries listed, its secret rotated, removed and registered again.

The deployment's rate limits and quotas are on, as in production: a client
past its quota (a queued solve is charged its whole job budget) is answered
429 and goes on with its mix.  `--limits off` runs them as one unlimited
address instead.  It reports per route the requests, errors (5xx, 503
included, and connection failures), p50 and p99, the RSS of every process
after the warm-up and at the end, the peak and final PSS of each against its
budget (workers/memory.py's BUDGETS_MIB, the table docs/operations.md shows),
and whether any process of the stack was restarted.  With `--check` it exits 1
when a process, or the stack, ends over its budget.
"""

from __future__ import annotations

import argparse
import base64
import http.server
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
import urllib.parse
import urllib.request
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _stack import wait_ready  # noqa: E402

from service.cli import worker as celery_commands  # noqa: E402
from solver.model.puzzle import Puzzle  # noqa: E402
from workers.embedded import EmbeddedRedis, free_port  # noqa: E402
from workers.memory import BUDGETS_MIB, STACK_BUDGET_MIB, role_of  # noqa: E402
from workers.stores import Stores  # noqa: E402

Timed = Callable[..., tuple[int, bytes]]


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
    parser.add_argument("--strangers", type=int, default=2, help="threads of keyless clients from many addresses")
    parser.add_argument("--warmup", type=float, default=60, help="seconds of traffic before the start RSS is read")
    parser.add_argument("--web-workers", type=int, default=None,
                        help="gunicorn processes (default: the deployment's, RICOCHET_WEB_WORKERS's default)")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="worker processes (default 1, as `ricochet serve`)")
    parser.add_argument("--limits", choices=("on", "off"), default="on",
                        help="the deployment's rate limits and quotas, each client with a key of its own (default on)")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a process or the stack ends the run over its budget")
    parser.add_argument("--idle", type=float, default=5,
                        help="seconds without traffic before the final PSS is read (the processes idle, as the "
                             "issue's probe read them)")
    args = parser.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis", persist=False) as redis, \
            Receiver() as receiver:
        env = {**os.environ, "REDIS_URL": redis.url, "RICOCHET_RATE_LIMITS": args.limits, "RICOCHET_ACCESS_LOG": "",
               "RICOCHET_TRUSTED_PROXIES": "1", "RICOCHET_WEBHOOKS_ALLOW_PRIVATE": "on",
               "PROMETHEUS_MULTIPROC_DIR": str(Path(tmp) / "metrics")}
        if args.web_workers:
            env["RICOCHET_WEB_WORKERS"] = str(args.web_workers)
        quiet = {"cwd": ROOT, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
                 "start_new_session": True}
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_config", "--bind",
                                f"127.0.0.1:{port}", "service.app:create_app()"], **quiet)
        procs = {"gunicorn": web,
                 "worker": subprocess.Popen(celery_commands.command(args.concurrency,
                                                                    queues="ricochet,packs,analysis"), **quiet),
                 "webhook worker": subprocess.Popen(celery_commands.webhook_command(), **quiet),
                 "beat": subprocess.Popen(celery_commands.beat_command(Path(tmp)), **quiet)}
        try:
            wait_ready(base)
            over = run(base, args, {**{name: p.pid for name, p in procs.items()}, "redis": redis.process.pid},
                       redis.url, receiver)
        finally:
            for proc in procs.values():
                os.killpg(proc.pid, signal.SIGTERM)
            for proc in procs.values():
                proc.wait(timeout=60)
    if args.check and over:
        raise SystemExit(f"over budget at the end: {', '.join(over)}")


class Receiver(http.server.ThreadingHTTPServer):
    """A webhook receiver on loopback that answers every delivery 204 and counts them."""

    def __init__(self) -> None:
        self.received = 0
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.received += 1
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server_address[1]}/hook"

    def __enter__(self) -> Receiver:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self.shutdown()
        self.server_close()


def issue_keys(redis_url: str, names: list[str]) -> dict[str, dict[str, str]]:
    """A key of its own for each client (as `ricochet keys create NAME` issues it): the headers it sends."""
    stores = Stores.from_url(redis_url)
    return {name: {"X-API-Key": stores.keys.create(name)[0]} for name in names}


class Traffic:
    """What the clients saw, route by route, and a timed request for one client's headers."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.stats: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.lock = threading.Lock()

    def record(self, route: str, seconds: float, status: int) -> None:
        with self.lock:
            self.stats[route].append(seconds)
            self.statuses[route][status] += 1
            self.errors[route] += status == 0 or status >= 500

    def timer(self, key: dict[str, str]) -> Timed:
        def timed(route: str, method: str, path: str, body: dict | None = None, headers: dict | None = None,
                  timeout: float = 30) -> tuple[int, bytes]:
            t0 = time.perf_counter()
            try:
                status, data, _ = call(method, self.base + path, body, {**key, **(headers or {})}, timeout)
            except OSError:
                status, data = 0, b""
            self.record(route, time.perf_counter() - t0, status)
            return status, data
        return timed


def run(base: str, args: argparse.Namespace, roots: dict[str, int], redis_url: str, receiver: Receiver) -> list[str]:
    names = [f"soak-client-{k}" for k in range(args.clients)] + ["soak-watchers", "soak-exporter", "soak-books",
                                                                 "soak-hooks"]
    keys = issue_keys(redis_url, names) if args.limits == "on" else {name: {} for name in names}
    daily = json.loads(call("GET", base + "/v1/daily", headers=keys["soak-exporter"])[1])
    solution = json.loads(call("GET", f"{base}/v1/daily/{daily['date']}/solution", headers=keys["soak-exporter"])[1])
    puzzle = daily["puzzle"]
    game = json.loads(call("POST", base + "/v1/games", {"players": ["ann", "bob"], "seed": "soak"},
                           keys["soak-exporter"])[1])
    gid, tokens = game["game"]["id"], game["tokens"]
    traffic = Traffic(base)
    books = traffic.timer(keys["soak-books"])
    pack = book_pack(books)
    stop = time.monotonic() + args.warmup + args.seconds

    def client(k: int) -> None:
        rng, timed = random.Random(k), traffic.timer(keys[f"soak-client-{k}"])
        while time.monotonic() < stop:
            _one_request(rng, timed, puzzle, solution, gid, tokens)

    def stranger(k: int) -> None:
        rng = random.Random(1000 + k)
        while time.monotonic() < stop:
            address = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
            _stranger_request(rng, traffic.timer({"X-Forwarded-For": address}), base, puzzle, solution)

    def watcher() -> None:
        timed = traffic.timer(keys["soak-watchers"])
        while time.monotonic() < stop:
            timed("events", "GET", f"/v1/games/{gid}/events", timeout=60)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
    threads += [threading.Thread(target=stranger, args=(k,)) for k in range(args.strangers)]
    threads += [threading.Thread(target=watcher) for _ in range(3)]
    threads.append(threading.Thread(target=exporter, args=(base, keys["soak-exporter"], stop, traffic)))
    threads.append(threading.Thread(target=reader, args=(books, pack, stop)))
    threads.append(threading.Thread(target=hooks, args=(traffic.timer(keys["soak-hooks"]), receiver.url, stop)))
    for t in threads:
        t.start()
    time.sleep(args.warmup)  # caches and pools loaded: memory from here on
    start_procs = _processes(roots)
    start_rss = {pid: rss_kib(pid) for pid in start_procs}
    peaks = Peaks(roots)
    while any(t.is_alive() for t in threads):
        peaks.sample()
        time.sleep(2)
    time.sleep(args.idle)
    end_procs = _processes(roots)
    _report(traffic, start_procs, start_rss, end_procs)
    print(f"webhook deliveries received: {receiver.received}")
    return peaks.report(end_procs)


def exporter(base: str, key: dict[str, str], stop: float, traffic: Traffic) -> None:
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
        traffic.record("export", time.perf_counter() - t0, status)
        time.sleep(min(30.0, max(0.0, stop - time.monotonic())))


def book_pack(timed: Timed, seconds: float = 60) -> str | None:
    """A 20-puzzle pack from the pools for the book reader, made before the traffic
    starts (under it, the worker takes solves first and a pack may wait the whole run)."""
    status, data = timed("pack", "POST", "/v1/packs", {"count": 20, "min_length": 10, "max_length": 14,
                                                       "seed": "soak-books"})
    if status != 202:
        return None
    job, deadline = json.loads(data)["id"], time.monotonic() + seconds
    while time.monotonic() < deadline:
        status, data = timed("pack", "GET", f"/v1/jobs/{job}")
        if status == 200 and json.loads(data).get("pack_id"):
            return json.loads(data)["pack_id"]
        time.sleep(0.5)
    return None


def reader(timed: Timed, pack: str | None, stop: float) -> None:
    """The pack printed as books, every paper and page size, with and without solutions, one a second."""
    if pack is None:
        return
    rng = random.Random(7)
    while time.monotonic() < stop:
        paper, per_page = rng.choice(["a4", "letter"]), rng.choice([1, 2, 4, 6, 9, 12, 20])
        solutions = rng.choice(["true", "false"])
        timed("book", "GET", f"/v1/packs/{pack}.pdf?paper={paper}&per_page={per_page}&solutions={solutions}",
              timeout=60)
        timed("pack.svg", "GET", f"/v1/packs/{pack}.svg")
        time.sleep(1)


def hooks(timed: Timed, url: str, stop: float) -> None:
    """An endpoint registered on the loopback receiver, tested, its deliveries listed, its secret rotated,
    removed and registered again: the webhook worker's and the registrations' load."""
    hook = None
    while time.monotonic() < stop:
        if hook is None:
            status, data = timed("webhooks", "POST", "/v1/webhooks", {"url": url, "events": ["job.succeeded",
                                                                                           "job.failed"]})
            hook = json.loads(data)["id"] if status == 201 else None
            if hook is None:
                time.sleep(5)
                continue
        for _ in range(5):  # tests within the key's 5 a minute
            if time.monotonic() >= stop:
                return
            timed("webhooks", "POST", f"/v1/webhooks/{hook}/test")
            timed("webhooks", "GET", f"/v1/webhooks/{hook}/deliveries")
            timed("webhooks", "GET", "/v1/webhooks")
            time.sleep(15)
        timed("webhooks", "POST", f"/v1/webhooks/{hook}/rotate")
        timed("webhooks", "DELETE", f"/v1/webhooks/{hook}")
        hook = None


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

    def report(self, end_procs: dict[int, str]) -> list[str]:
        """Print each process's peak and final PSS against its budget; return what ends over it."""
        final = {pid: pss_kib(pid) for pid in end_procs}
        roles = {pid: role_of(name) for pid, name in self.names.items()}
        # exports run in at most 2 web processes at once: the two largest are judged as exporting
        web = sorted((pid for pid in final if roles.get(pid) == "web process"), key=lambda pid: -final[pid])
        for pid in web[:2]:
            roles[pid] = "web process exporting"
        print(f"\n{'process':>60} {'peak PSS MiB':>13} {'end PSS MiB':>12} {'budget':>7}")
        over = []
        for pid in sorted(self.each):
            role = roles.get(pid)
            budget = BUDGETS_MIB.get(role) if role else None
            end = final.get(pid, 0) / 1024
            mark = ""
            if budget is not None and end > budget:
                mark, _ = "  OVER", over.append(f"{role} {pid}: {end:.1f} MiB > {budget}")
            print(f"{self.names[pid][:60]:>60} {self.each[pid] / 1024:>13.1f} {end:>12.1f} "
                  f"{budget if budget is not None else '-':>7}{mark}")
        stack_end = sum(kib for pid, kib in final.items() if pid != self.roots["redis"]) / 1024
        print(f"\npeak PSS of the stack (web and workers, without Redis): {self.stack / 1024:.0f} MiB; "
              f"at the end {stack_end:.0f} (budget {STACK_BUDGET_MIB})")
        if stack_end > STACK_BUDGET_MIB:
            over.append(f"stack: {stack_end:.0f} MiB")
        print(f"over budget at the end: {', '.join(over) or 'none'}")
        return over


def _one_request(rng: random.Random, timed: Timed, puzzle: dict, solution: dict, gid: str,
                 tokens: dict[str, str]) -> None:
    """One request of an integrator's mix, drawn by `rng`."""
    roll = rng.random()
    player = f"soak-{rng.randrange(20_000)}"  # players come and go: most ids new to the service
    if roll < 0.25:
        timed("daily", "GET", "/v1/daily")
    elif roll < 0.47:
        extra = {"player": player} if rng.random() < 0.5 else {}
        timed("verify", "POST", "/v1/verify", {"puzzle": puzzle, "moves": solution["moves"], **extra})
    elif roll < 0.52:
        timed("next", "GET", f"/v1/puzzles/next?player={player}")
    elif roll < 0.65:
        status, data = timed("random", "GET", f"/v1/puzzles/random?length={rng.randint(4, 14)}&seed={rng.random()}")
        if status == 200 and rng.random() < 0.3:
            code = json.loads(data)["code"]
            timed("picture", "GET", f"/v1/puzzles/{code}.png?solution={rng.choice(['true', 'false'])}")
    elif roll < 0.78:
        robots = {c: [rng.randrange(16), rng.randrange(16)] for c in ("red", "green", "blue", "yellow")}
        body = {**puzzle, "robots": robots}
        timed("solve", "POST", "/v1/solve", body)
    elif roll < 0.81:
        custom = custom_puzzle(rng)
        timed("custom", "POST", "/v1/verify", {"puzzle": custom, "moves": [], "player": player})
        timed("custom", "POST", "/v1/solve", custom)
        timed("picture", "POST", "/v1/pictures?format=png", custom)
        timed("picture", "GET", f"/v1/puzzles/{Puzzle.from_json(custom).code()}.png")
    elif roll < 0.85:
        timed("game", "GET", f"/v1/games/{gid}?since=0")
        name = rng.choice(["ann", "bob"])
        timed("bid", "POST", f"/v1/games/{gid}/bids", {"moves": rng.randint(5, 30)},
              {"Authorization": f"Bearer {tokens[name]}"})
    elif roll < 0.88:
        timed("pack", "POST", "/v1/packs", {"count": 5, "min_length": rng.randint(8, 18),
                                            "max_length": 20, "seed": str(rng.random())})
    else:
        made_up(rng, timed)


def made_up(rng: random.Random, timed: Timed) -> None:
    """A request for an id nobody made: answered 400 or 404, and nothing kept for it."""
    code = base64.urlsafe_b64encode(rng.randbytes(rng.randint(6, 40))).decode().rstrip("=")
    path = rng.choice([f"/v1/puzzles/{code}", f"/v1/puzzles/{code}.png", f"/v1/puzzles/{code}/hint",
                       f"/v1/jobs/{uuid.uuid4()}", f"/v1/packs/{uuid.uuid4()}", f"/v1/packs/{uuid.uuid4()}.pdf",
                       f"/v1/games/{uuid.uuid4().hex}", f"/v1/rooms/{uuid.uuid4().hex[:8]}",
                       f"/v1/players/made-up-{rng.randrange(10**9)}", f"/p/{code}", f"/embed/{code}",
                       f"/v1/daily/20{rng.randrange(10, 99)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}"])
    timed("made-up", "GET", path)


def _stranger_request(rng: random.Random, timed: Timed, base: str, puzzle: dict, solution: dict) -> None:
    """A few requests of a keyless client from one address: an anonymous player, a game or a room, pages."""
    roll = rng.random()
    player = f"anon-{rng.randrange(10**9)}"
    if roll < 0.3:
        timed("anon", "POST", "/v1/verify", {"puzzle": puzzle, "moves": solution["moves"], "player": player})
        timed("anon", "GET", f"/v1/puzzles/next?player={player}")
        timed("anon", "GET", f"/v1/players/{player}")
    elif roll < 0.5:
        timed("anon-game", "POST", "/v1/games", {"players": [f"p{i}-{rng.randrange(10**6)}" for i in range(4)]})
        status, data = timed("anon-room", "POST", "/v1/rooms", {"name": f"host-{rng.randrange(10**6)}"})
        if status == 201:
            room = json.loads(data)["room"]["id"]
            timed("anon-room", "POST", f"/v1/rooms/{room}/players", {"name": f"guest-{rng.randrange(10**6)}"})
            timed("anon-room", "GET", f"/v1/rooms/{room}")
    elif roll < 0.75:
        code = Puzzle.from_json(custom_puzzle(rng) if rng.random() < 0.3 else puzzle).code()
        page = rng.choice([f"/p/{code}", f"/embed/{code}?theme={rng.choice(['light', 'dark'])}", "/embed/daily",
                           f"/embed/{code}/thumbnail.png?size={rng.randint(16, 656)}"])
        timed("pages", "GET", page)
        timed("oembed", "GET", "/oembed?" + urllib.parse.urlencode(
            {"url": f"{base}/p/{code}", "maxwidth": rng.randint(280, 1200),
             "maxheight": rng.randint(288, 1200)}))
    else:
        made_up(rng, timed)


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


def _report(traffic: Traffic, start_procs: dict[int, str], start_rss: dict[int, int],
            end_procs: dict[int, str]) -> None:
    print(f"{'route':>10} {'requests':>9} {'errors':>7} {'p50 ms':>8} {'p99 ms':>8}  statuses")
    for route in sorted(traffic.stats):
        times = sorted(traffic.stats[route])
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"{route:>10} {len(times):>9} {traffic.errors[route]:>7} {1000 * statistics.median(times):>8.1f} "
              f"{1000 * p99:>8.1f}  {dict(traffic.statuses[route])}")
    print(f"\n{'process':>60} {'RSS start MiB':>14} {'RSS end MiB':>12}")
    for pid in sorted(set(start_procs) | set(end_procs)):
        name = end_procs.get(pid) or start_procs.get(pid)
        print(f"{name[:60]:>60} {start_rss.get(pid, 0) / 1024:>14.1f} {rss_kib(pid) / 1024:>12.1f}")
    restarted = set(start_procs) ^ set(end_procs)
    refused = sum(n for by_status in traffic.statuses.values() for status, n in by_status.items() if status == 429)
    print(f"\nprocesses started or gone during the run: {len(restarted)}  (5xx and failed connections: "
          f"{sum(traffic.errors.values())}; 429, a client past its rate limit or quota: {refused})")


if __name__ == "__main__":
    main()
