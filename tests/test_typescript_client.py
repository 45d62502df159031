"""The TypeScript client (clients/typescript/): its node tests against a live
server of the suite's (a real Redis and worker), installed with `npm ci` from
its lock file; and its types are the ones openapi-typescript makes of today's
openapi.yaml."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from service.app import create_app
from tests.helpers import served
from workers.webhooks import event_body, message_id, new_secret, signature

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "typescript"
NPM = shutil.which("npm")
GENERATE = "openapi-typescript ../../openapi.yaml --default-non-nullable false -o src/schema.ts"

pytestmark = pytest.mark.skipif(NPM is None, reason="needs Node.js and npm: `make browser` installs them")


@pytest.fixture(scope="module")
def installed() -> Path:
    """clients/typescript with its node_modules: `npm ci` from package-lock.json when they are missing."""
    if not (CLIENT / "node_modules" / ".package-lock.json").exists():
        subprocess.run([NPM, "ci", "--no-audit", "--no-fund"], cwd=CLIENT, check=True, capture_output=True,
                       timeout=600)
    return CLIENT


def signed_sample() -> dict:
    """A job.succeeded delivery as the service signs one."""
    secret, msg, now = new_secret(), message_id("job:sample"), int(time.time())
    body = event_body("job.succeeded", {"id": "sample", "kind": "pack", "state": "succeeded"})
    return {"secret": secret, "body": body,
            "headers": {"webhook-id": msg, "webhook-timestamp": str(now),
                        "webhook-signature": signature(secret, msg, now, body)}}


def test_the_typescript_client_against_a_live_server(installed, redis_url, celery_worker):
    with served(create_app({"REDIS_URL": redis_url})) as base:
        env = {**os.environ, "RICOCHET_BASE_URL": base, "RICOCHET_WEBHOOK_SAMPLE": json.dumps(signed_sample())}
        run = subprocess.run([NPM, "test"], cwd=installed, env=env, capture_output=True, text=True, timeout=600)
    print(run.stdout[-3000:])
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-3000:]
    assert "# fail 0" in run.stdout and "# pass 5" in run.stdout


def test_the_generated_types_are_todays_openapi(installed, tmp_path):
    """src/schema.ts is what `npm run generate` makes of openapi.yaml now: regenerated and compared."""
    scripts = json.loads((CLIENT / "package.json").read_text())["scripts"]
    assert scripts["generate"] == GENERATE
    out = tmp_path / "schema.ts"
    command = GENERATE.replace("-o src/schema.ts", f"-o {out}").split()
    subprocess.run([str(installed / "node_modules" / ".bin" / command[0]), *command[1:]], cwd=installed, check=True,
                   capture_output=True, timeout=300)
    assert out.read_text() == (CLIENT / "src" / "schema.ts").read_text(), \
        "clients/typescript/src/schema.ts is stale: run `npm run generate` in clients/typescript"
