"""The examples/ clients, run against a live HTTP server (real Redis, real worker)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from service.app import create_app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def base_url(redis_url, celery_worker):
    server = make_server("127.0.0.1", 0, create_app({"REDIS_URL": redis_url}), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def _run(command: list[str], base_url: str, tmp_path: Path) -> str:
    done = subprocess.run(command, cwd=tmp_path, env={**os.environ, "RICOCHET_URL": base_url,
                                                      "PYTHONPATH": str(EXAMPLES)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", ["daily", "verify", "pack"])
def test_python_example(name, base_url, tmp_path):
    out = _run([sys.executable, str(EXAMPLES / f"{name}.py")], base_url, tmp_path)
    if name == "daily":
        assert "puzzle #" in out and "-" in out.splitlines()[1] and "hint:" in out
    if name == "verify":
        lines = out.splitlines()
        assert "solved=False" in lines[0] and "solved=True" in lines[1] and "optimal=True" in lines[1]
    if name == "pack":
        assert len(out.splitlines()) == 6


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl and jq")
@pytest.mark.parametrize("name", ["daily", "verify", "pack"])
def test_curl_example(name, base_url, tmp_path):
    out = _run(["sh", str(EXAMPLES / f"{name}.sh")], base_url, tmp_path)
    if name == "daily":
        assert "revalidated with If-None-Match: 304" in out
    if name == "verify":
        assert '"solved":false' in out and '"optimal":true' in out
    if name == "pack":
        assert out.count('"optimal_length"') == 6
