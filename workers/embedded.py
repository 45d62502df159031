"""A private Redis server for the embedded default (`ricochet serve` without REDIS_URL) and tests.

It listens on 127.0.0.1 on a free port, with a random password, keeps its
files under an instance folder, and is stopped (and waited for) on exit.
While `ricochet serve` runs, the instance folder's run file (RUN_FILE, readable
by its owner only) names that Redis, so that `ricochet keys` beside it finds
the server's store (`running_redis`).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import redis


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Redis's memory at most (docs/operations.md says what lives in it).  noeviction:
# every key the service keeps is either kept for good (daily puzzles, pools,
# issued keys) or expires on its own (answers, jobs, packs, games, players), and
# none may vanish before then, so a full Redis refuses writes (503 with
# Retry-After) rather than evict a job, a pack or a key.
MAXMEMORY = "1gb"


class EmbeddedRedis:
    """`with EmbeddedRedis(folder) as r: r.url` -- a real redis-server, private to this process."""

    def __init__(self, folder: str | os.PathLike[str], persist: bool = True, maxmemory: str = MAXMEMORY) -> None:
        self.folder = Path(folder).resolve()
        self.persist = persist
        self.maxmemory = maxmemory
        self.port = free_port()
        self.password = secrets.token_hex(16)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def command(self) -> list[str]:
        """redis-server's command line: the same port, password and files at every start
        (`ricochet serve` starts it again so when it dies: its clients' URL still holds,
        and it reads back what it persisted)."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: run `make install` (it installs it) "
                               "or set REDIS_URL to a Redis you run")
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--requirepass", self.password,
                "--dir", str(self.folder), "--daemonize", "no", "--loglevel", "warning",
                "--logfile", str(self.folder / "redis.log"), "--maxmemory", self.maxmemory,
                "--maxmemory-policy", "noeviction"]
        # appendonly: every write is in the file (the OS's page cache) before it is answered, so a
        # server killed (kill -9) and started again has all that it acknowledged.
        return args + (["--save", "60 1", "--appendonly", "yes"] if self.persist
                       else ["--save", "", "--appendonly", "no"])

    def start(self) -> EmbeddedRedis:
        self.process = subprocess.Popen(self.command(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.wait(self.process)
        except RuntimeError:
            self.stop()
            raise
        return self

    def wait(self, process: subprocess.Popen[bytes], seconds: float = 10) -> None:
        """Until the server started as `process` answers; RuntimeError if it exits first or `seconds` pass."""
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + seconds
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start; see {self.folder / 'redis.log'}") from None
                time.sleep(0.05)
            finally:
                client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


RUN_FILE = "run.json"


def write_run_file(instance: str | os.PathLike[str], redis_url: str, address: str) -> Path:
    """Say in `instance` which private Redis the server running now (this process) uses."""
    path = Path(instance) / RUN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # it holds the Redis's password
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump({"redis_url": redis_url, "pid": os.getpid(), "address": address}, f)
    return path


def remove_run_file(instance: str | os.PathLike[str]) -> None:
    (Path(instance) / RUN_FILE).unlink(missing_ok=True)


def running_redis(instance: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The run file of a `ricochet serve` running from `instance` ({"redis_url", "pid",
    "address"}), if its process is alive and its Redis answers; else None."""
    try:
        run = json.loads((Path(instance) / RUN_FILE).read_text(encoding="utf-8"))
        os.kill(int(run["pid"]), 0)  # alive? (raises if not)
        redis.Redis.from_url(run["redis_url"], socket_connect_timeout=2, socket_timeout=2).ping()
    except (OSError, ValueError, KeyError, TypeError, redis.RedisError):
        return None
    return run
