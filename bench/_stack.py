"""What the benches that start a stack share: a private `ricochet serve`, and
waiting until a stack is ready."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def wait_ready(base: str, seconds: float = 90, path: str = "/readyz") -> None:
    """Return once GET base+path answers 200; SystemExit after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(base + path, timeout=5) as r:
                if r.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{base} did not become ready within {seconds:g} s")
        time.sleep(0.5)


@contextmanager
def private_serve() -> Iterator[tuple[str, subprocess.Popen]]:
    """`ricochet serve` on a free port with its own instance (its private Redis, not
    REDIS_URL's): its base URL and process, once /healthz answers; its stack stopped after."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        serve = subprocess.Popen([str(Path(sys.executable).parent / "ricochet"), "serve", "--port", str(port),
                                  "--instance", tmp], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_ready(base, path="/healthz")
            yield base, serve
        finally:
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(timeout=60)
