"""The deployment on separate hosts (network namespaces, tests/cluster/netns.py),
real processes on each:

    redis   10.60.0.10  redis-server primary :6379, replica :6380 (a second :6381), three redis-sentinel :26379-26381
    front   10.60.0.5   nginx (service/front.conf.template) over api1 and api2, :8080
    api1/2  10.60.0.21-22  gunicorn (deploy/gunicorn.conf.py), one web process of 8 threads each
    api3    10.60.0.23  a spare host: the replacement of a lost API host
    w1..w3  10.60.0.31-33  `ricochet worker --concurrency 1 --queues ricochet,packs`
    beat    10.60.0.40  `ricochet beat`
    client  10.60.0.50  the workload and the checks (threads of the test process, moved into it)

Every process finds the Redis primary through the Sentinels and every change
the API acknowledges waits for the replica (RICOCHET_WAIT_REPLICAS=1).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from service.cli import front
from tests.cluster import netns
from tests.sentinels import PASSWORD, Group

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[2]
HOSTS = {"front": 5, "redis": 10, "api1": 21, "api2": 22, "api3": 23, "w1": 31, "w2": 32, "w3": 33, "beat": 40,
         "client": 50}
FRONT_PORT = 8080
_CLONE_NEWNET = 0x40000000


def enter(ns: str) -> None:
    """Move the calling thread into a network namespace (a thread's, not the process's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {ns}")
    finally:
        os.close(fd)


def inside(ns: str, fn: Callable[[], Any]) -> Any:
    """fn() run on a thread inside `ns`; its result (or its exception)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            enter(ns)
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001 -- handed to the caller
            out["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


class Cluster:
    def __init__(self, folder: Path, netem: bool, replicas: int = 1, wait_replicas: int = 1) -> None:
        self.folder = Path(folder)
        self.netem = netem
        self.wait_replicas = wait_replicas
        self.net = netns.Network()
        self.processes: dict[str, Any] = {}
        for host, number in HOSTS.items():
            self.net.add(host, number)
        redis_host = self.net.hosts["redis"]
        self.redis = Group(self.folder / "redis", host=redis_host, replicas=replicas,
                           ports=[6379 + i for i in range(1 + replicas)] + [26379, 26380, 26381],
                           wrap=["ip", "netns", "exec", self.net.ns("redis")])
        self.front_url = f"http://{self.net.hosts['front']}:{FRONT_PORT}"

    # -- processes -------------------------------------------------------------------------------
    def env(self, host: str, **more: str) -> dict[str, str]:
        return {**os.environ, **self.redis.env(), "RICOCHET_WAIT_REPLICAS": str(self.wait_replicas),
                "RICOCHET_WAIT_MS": "2000",
                "RICOCHET_RATE_LIMITS": "off", "RICOCHET_TRUSTED_PROXIES": "1", "RICOCHET_WEB_WORKERS": "1",
                "RICOCHET_WEB_THREADS": "8", "RICOCHET_JOB_THREADS": "1", "RICOCHET_BIND": "0.0.0.0:8000",
                "PROMETHEUS_MULTIPROC_DIR": str(self.folder / host / "metrics"), "PYTHONPATH": str(ROOT), **more}

    def run(self, host: str, argv: list[str], name: str | None = None) -> None:
        folder = self.folder / host
        (folder / "metrics").mkdir(parents=True, exist_ok=True)
        self.processes[name or host] = self.net.run(host, argv, self.env(host), folder / f"{name or host}.log")

    def start_redis(self) -> None:
        self.redis.start_all()
        self.wait(lambda: self.inside(self.redis._ready), 60, "the Redis host (primary, replica, Sentinels)")

    def start_api(self, host: str) -> None:
        self.run(host, [str(BIN / "gunicorn"), "-c", str(ROOT / "deploy" / "gunicorn.conf.py"),
                        "--control-socket", str(self.folder / host / "gunicorn.ctl"), "service.app:create_app()"])

    def start_worker(self, host: str) -> None:
        self.run(host, [str(BIN / "ricochet"), "worker", "--concurrency", "1", "--queues", "ricochet,packs",
                        "-n", f"{host}@%h"])

    def start_beat(self, host: str = "beat") -> None:
        folder = self.folder / host
        folder.mkdir(parents=True, exist_ok=True)
        self.run(host, [sys.executable, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "warning",
                        "--schedule", str(folder / "celerybeat-schedule")])

    def configure_front(self, apis: list[str], reload: bool = False) -> Path:
        """The front's configuration over `apis` (reloaded when it runs: a host is added
        once it answers /readyz, since gunicorn listens before it can answer)."""
        servers = [f"{self.net.hosts[h]}:8000 max_fails=2 fail_timeout=10s" for h in apis]
        config = front.configure(self.folder / "front", f"{self.net.hosts['front']}:{FRONT_PORT}",
                                 "; server ".join(servers))
        server = config.parent / "server.conf"
        # A host that is gone does not refuse a connection, it is silent: try the other API after 2 s
        # (a lost SYN is sent again after 1 s, so 5% loss alone does not mark an API down).
        text = re.sub(r"proxy_connect_timeout \d+s;", "proxy_connect_timeout 2s;", server.read_text())
        if "proxy_connect_timeout" not in text:
            text = text.replace("proxy_pass http://ricochet_api;",
                                "proxy_pass http://ricochet_api;\n        proxy_connect_timeout 2s;")
        server.write_text(text)
        if reload:
            self.net.exec("front", ["nginx", "-e", "stderr", "-p", str(config.parent), "-c", str(config),
                                    "-s", "reload"])
        return config

    def start_front(self) -> None:
        config = self.configure_front(["api1", "api2"])
        self.run("front", ["nginx", "-e", "stderr", "-p", str(config.parent), "-c", str(config),
                           "-g", "daemon off;"])

    def start(self) -> None:
        self.start_redis()
        for host in ("api1", "api2"):
            self.start_api(host)
        self.start_front()
        for host in ("w1", "w2", "w3"):
            self.start_worker(host)
        self.start_beat()
        self.wait(self.ready, 180, "the API behind the front, ready (Redis and a worker reachable)")

    # -- looking from the client host --------------------------------------------------------------
    def inside(self, fn: Callable[[], Any], host: str = "client") -> Any:
        return inside(self.net.ns(host), fn)

    def get(self, path: str, timeout: float = 5) -> int:
        import requests

        def fetch() -> int:
            try:
                return requests.get(self.front_url + path, timeout=timeout).status_code
            except requests.RequestException:
                return 0
        return self.inside(fetch)

    def ready(self) -> bool:
        return all(self.get("/readyz") == 200 for _ in range(2))  # both APIs, by turns

    def primary(self) -> tuple[str, int] | None:
        return self.inside(self.redis.primary)

    def wait(self, check: Callable[[], bool], timeout: float, what: str) -> float:
        start = time.monotonic()
        while True:
            try:
                if check():
                    return time.monotonic() - start
            except Exception:  # noqa: BLE001 -- not yet
                pass
            dead = [name for name, p in self.processes.items() if p.poll() not in (None, -9)]
            if time.monotonic() - start > timeout or dead:
                raise TimeoutError(f"no {what} within {timeout} s (exited: {dead or 'none'}); logs under "
                                   f"{self.folder}")
            time.sleep(0.5)

    def round_trip_ms(self) -> float:
        """The median of five Redis PINGs from the client host to the primary, in ms."""
        import statistics

        import redis

        def pings() -> float:
            host, port = self.redis.primary()
            client = redis.Redis(host=host, port=port, password=PASSWORD, socket_timeout=10)
            client.ping()  # connected first: a PING is then one round trip
            times = []
            for _ in range(5):
                t = time.perf_counter()
                client.ping()
                times.append((time.perf_counter() - t) * 1000)
            client.close()
            return statistics.median(times)
        return self.inside(pings)

    def api_ready(self, host: str) -> bool:
        import requests

        url = f"http://{self.net.hosts[host]}:8000/readyz"
        return self.inside(lambda: requests.get(url, timeout=3).status_code == 200)

    def inside_thread(self, fn: Callable[[], None], host: str = "client") -> threading.Thread:
        """fn started on a thread of its own inside `host` (named after fn)."""
        def run() -> None:
            enter(self.net.ns(host))
            fn()
        t = threading.Thread(target=run, daemon=True, name=getattr(fn, "__name__", "workload"))
        t.start()
        return t

    def net_pids(self, host: str) -> list[int]:
        return netns.pids_in(self.net.ns(host))

    def ricochet(self, host: str, *args: str) -> Any:
        import subprocess

        return subprocess.run(["ip", "netns", "exec", self.net.ns(host), str(BIN / "ricochet"), *args],
                              env=self.env(host), capture_output=True, text=True, timeout=60)

    def workload_key(self) -> str:
        """An API key for the workload's client, issued by `ricochet keys create` on an API host."""
        done = self.ricochet("api2", "keys", "create", "workload")
        if done.returncode != 0:
            raise RuntimeError(f"ricochet keys create: {done.stderr.strip()}")
        return done.stdout.strip()

    def issue_key(self, history: Any, label: str) -> None:
        """`ricochet keys create` on an API host: issued (exit 0) is an acknowledged write."""
        name = f"cl-{label}-{len(history.keys)}"
        done = self.ricochet("api2", "keys", "create", name)
        history.keys.append({"name": name, "issued": done.returncode == 0, "t0": time.time()})

    def list_keys(self, history: Any) -> None:
        done = self.ricochet("api2", "keys", "list")
        names = {json.loads(line)["name"] for line in done.stdout.splitlines() if line.strip()}
        for key in history.keys:
            key["listed"] = key["name"] in names

    # -- faults ----------------------------------------------------------------------------------
    def replica_link(self, primary: tuple[str, int]) -> tuple[str, int]:
        """The address the replica's connection to `primary` comes from (its end of the replication stream)."""
        def find() -> tuple[str, int]:
            [link] = self.redis.client(primary).client_list(_type="replica")
            host, port = link["addr"].rsplit(":", 1)
            return host, int(port)
        return self.inside(find)

    def kill_redis_primary(self) -> tuple[str, int]:
        old = self.primary()
        assert old is not None
        self.redis.kill(self.redis.name_of(old))
        return old

    def close(self) -> None:
        self.redis.stop()
        self.net.close()
