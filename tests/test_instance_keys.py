"""`ricochet keys` beside a running `ricochet serve` (the embedded default, no
REDIS_URL): serve says how, and one command issues a key the server accepts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import serve_ready
from workers.embedded import RUN_FILE, free_port

RICOCHET = str(Path(sys.executable).parent / "ricochet")


def _status(url: str, key: str | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"X-API-Key": key} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.slow
def test_one_command_issues_a_key_the_running_server_accepts(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["RICOCHET_WEB_WORKERS"] = "1"
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen([RICOCHET, "serve", "--port", str(port)], cwd=tmp_path, env=env,
                                 stdout=subprocess.DEVNULL, stderr=out, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        serve_ready(serve, base + "/healthz", log.read_text)
        said = log.read_text()
        assert f"issue an API key for this server with: {RICOCHET} keys create NAME" in said, said
        run_file = tmp_path / "instance" / RUN_FILE
        assert run_file.stat().st_mode & 0o077 == 0  # it holds the Redis's password: its owner's alone

        issued = subprocess.run([RICOCHET, "keys", "create", "newcomer"], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=60)
        assert issued.returncode == 0, issued.stderr
        key = issued.stdout.strip()
        assert key.startswith("rr_") and f"server at http://127.0.0.1:{port}" in issued.stderr
        assert _status(base + "/v1/webhooks", key) == (200, {"webhooks": []})  # the server knows the key
        assert _status(base + "/v1/webhooks", "rr_not-issued")[0] == 401
        listed = subprocess.run([RICOCHET, "keys", "list"], cwd=tmp_path, env=env, capture_output=True, text=True,
                                timeout=60)
        assert [json.loads(line)["name"] for line in listed.stdout.splitlines()] == ["newcomer"]
    finally:
        os.kill(serve.pid, signal.SIGTERM)
        serve.wait(timeout=60)
    assert not run_file.exists()
    gone = subprocess.run([RICOCHET, "keys", "create", "late"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert gone.returncode == 2 and "REDIS_URL" in gone.stderr and "ricochet serve" in gone.stderr
