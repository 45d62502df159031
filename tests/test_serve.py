"""`ricochet serve`, the README's one command: gunicorn with the production
settings, a private Redis and a worker, and long packs from the shipped pools."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from workers.embedded import free_port


def _get(url: str, body: dict | None = None) -> tuple[int, dict, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, dict(r.headers), json.loads(r.read())


@pytest.mark.slow
def test_ricochet_serve_runs_gunicorn_redis_and_a_worker(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["RICOCHET_WEB_WORKERS"] = "2"
    ricochet = str(Path(sys.executable).parent / "ricochet")
    serve = subprocess.Popen([ricochet, "serve", "--port", str(port), "--instance", str(tmp_path)], cwd=tmp_path,
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if _get(base + "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            assert serve.poll() is None, serve.stderr.read().decode()
            assert time.monotonic() < deadline, "ricochet serve did not become ready"
            time.sleep(0.5)
        status, headers, daily = _get(base + "/v1/daily")
        assert status == 200 and headers["Server"].startswith("gunicorn") and daily["optimal_length"] >= 5
        status, headers, job = _get(base + "/v1/packs", {"count": 30, "min_length": 20, "max_length": 22,
                                                          "seed": "serve"})
        assert status == 202
        deadline = time.monotonic() + 60
        while job["state"] in ("pending", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
            job = _get(base + headers["Location"])[2]
        assert job["state"] == "succeeded" and job["result"]["made"] == 30
    finally:
        os.kill(serve.pid, signal.SIGTERM)
        serve.wait(timeout=60)
    deadline = time.monotonic() + 20
    while left := subprocess.run(["pgrep", "-s", str(serve.pid)], capture_output=True, text=True).stdout.split():
        assert time.monotonic() < deadline, f"processes of the stack still running: {left}"
        time.sleep(0.2)
