"""A Redis primary, its replica (or replicas) and three Sentinels: real `redis-server` processes.

`Group(folder).start()` runs them on free ports of 127.0.0.1 (the unit tests);
the cluster harness runs the same group inside a network namespace (`wrap`,
`host` and fixed ports).  The servers share one password; the Sentinels
monitor the primary as SERVICE, call it down after 1 s and fail over at once.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import redis

from workers.embedded import free_port

SERVICE = "ricochet"
PASSWORD = "cluster-secret"
DOWN_AFTER_MS = 1000


def redis_binary() -> str | None:
    return shutil.which("redis-server")


class Group:
    def __init__(self, folder: Path, host: str = "127.0.0.1", ports: list[int] | None = None,
                 wrap: list[str] | None = None, replicas: int = 1) -> None:
        self.folder = Path(folder)
        self.host = host
        self.replicas = replicas
        self.ports = ports or [free_port() for _ in range(4 + replicas)]  # primary, replicas, three Sentinels
        if len(self.ports) != 4 + replicas:
            raise ValueError(f"{4 + replicas} ports: the primary's, {replicas} replica(s)', three Sentinels'")
        self.wrap = wrap or []
        self.processes: dict[str, subprocess.Popen] = {}

    @property
    def servers(self) -> list[tuple[str, int]]:
        return [(self.host, p) for p in self.ports[:1 + self.replicas]]

    @property
    def sentinels(self) -> list[tuple[str, int]]:
        return [(self.host, p) for p in self.ports[1 + self.replicas:]]

    def env(self, **more: str) -> dict[str, str]:
        """What a process of the deployment is given to find the primary through the Sentinels."""
        return {"REDIS_URL": f"redis://:{PASSWORD}@sentinel-managed/0",
                "RICOCHET_SENTINELS": ",".join(f"{h}:{p}" for h, p in self.sentinels),
                "RICOCHET_SENTINEL_SERVICE": SERVICE, **more}

    def _run(self, name: str, args: list[str]) -> None:
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 -- the process keeps it
        self.processes[name] = subprocess.Popen([*self.wrap, *args], stdout=log, stderr=subprocess.STDOUT,
                                                start_new_session=True)
        log.close()

    def start_server(self, index: int, replica_of: tuple[str, int] | None = None) -> None:
        name = f"redis{index}"
        folder = self.folder / name
        folder.mkdir(parents=True, exist_ok=True)
        args = [redis_binary() or "redis-server", "--bind", self.host, "--port", str(self.ports[index]),
                "--requirepass", PASSWORD, "--masterauth", PASSWORD, "--dir", str(folder),
                "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "notice"]
        if replica_of:
            args += ["--replicaof", replica_of[0], str(replica_of[1])]
        self._run(name, args)

    def start_sentinel(self, index: int) -> None:
        conf = self.folder / f"sentinel{index}.conf"
        host, port = self.servers[0]
        conf.write_text(
            f"port {self.sentinels[index][1]}\nbind {self.host}\ndaemonize no\ndir {self.folder}\n"
            f"sentinel monitor {SERVICE} {host} {port} 2\n"
            f"sentinel auth-pass {SERVICE} {PASSWORD}\n"
            f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {SERVICE} 10000\n"
            f"sentinel parallel-syncs {SERVICE} 1\n")
        self._run(f"sentinel{index}", [redis_binary() or "redis-server", str(conf), "--sentinel"])

    def start_all(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.start_server(0)
        for i in range(1, 1 + self.replicas):
            self.start_server(i, replica_of=self.servers[0])
        for i in range(3):
            self.start_sentinel(i)

    def start(self, timeout: float = 20) -> Group:
        self.start_all()
        try:
            self.wait_ready(timeout)
        except RuntimeError:
            self.stop()
            raise
        return self

    def client(self, address: tuple[str, int], **options: object) -> redis.Redis:
        return redis.Redis(host=address[0], port=address[1], password=PASSWORD, socket_timeout=2,
                           socket_connect_timeout=1, **options)

    def _ready(self) -> bool:
        try:
            info = self.client(self.primary() or self.servers[0]).info("replication")
            online = sum((info.get(f"slave{i}") or {}).get("state") == "online" for i in range(self.replicas))
            if info.get("role") != "master" or online < self.replicas:
                return False
            for host, port in self.sentinels:
                state = redis.Redis(host=host, port=port, socket_timeout=1).sentinel_master(SERVICE)
                if state.get("num-other-sentinels", 0) < 2 or state.get("num-slaves", 0) < self.replicas:
                    return False
            return True
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            return False

    def wait_ready(self, timeout: float = 30) -> None:
        """Until the primary has its replicas again and every Sentinel sees the others."""
        deadline = time.monotonic() + timeout
        while not self._ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Sentinel group did not settle; logs in {self.folder}")
            time.sleep(0.1)

    def primary(self) -> tuple[str, int] | None:
        """The primary the Sentinels name now (the first that answers)."""
        for host, port in self.sentinels:
            try:
                found = redis.Redis(host=host, port=port, socket_timeout=1).sentinel_get_master_addr_by_name(SERVICE)
                if found:
                    host = found[0].decode() if isinstance(found[0], bytes) else found[0]
                    return host, int(found[1])
            except (redis.ConnectionError, redis.TimeoutError):
                continue
        return None

    def name_of(self, address: tuple[str, int]) -> str:
        return f"redis{self.servers.index(address)}"

    def kill(self, name: str) -> None:
        process = self.processes.get(name)
        if process and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()

    def restart(self, name: str) -> None:
        """A killed server back (as a supervisor would): the Sentinels make it a replica of the new primary."""
        index = int(name.removeprefix("redis"))
        self.start_server(index)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL) if self.wrap else process.kill()
        for process in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
        self.processes.clear()
