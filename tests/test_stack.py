"""The whole stack from deploy/Procfile (gunicorn API, workers, beat) on a private Redis."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from workers.embedded import EmbeddedRedis, free_port

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_procfile_stack_serves_the_daily_puzzle(tmp_path):
    port = free_port()
    roles = dict(line.split(":", 1) for line in (ROOT / "deploy" / "Procfile").read_text().splitlines() if line)
    assert set(roles) == {"web", "worker", "analysis", "webhooks", "beat"}
    with EmbeddedRedis(tmp_path / "redis", persist=False) as redis:
        env = {**os.environ, "REDIS_URL": redis.url, "RICOCHET_BIND": f"127.0.0.1:{port}",
               "RICOCHET_WEB_WORKERS": "2", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        procs = [subprocess.Popen(shlex.split(cmd), cwd=tmp_path if role == "beat" else ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for role, cmd in roles.items()]
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                assert time.monotonic() < deadline, "the stack did not become ready"
                assert all(p.poll() is None for p in procs), "a process of the stack died"
                time.sleep(0.5)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/daily", timeout=60) as r:
                daily = json.loads(r.read())
                assert r.headers["ETag"] and daily["optimal_length"] >= 5
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
