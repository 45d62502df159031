"""The Python client as an integrator gets it (clients/python, the distribution
ricochet-client): its generated part is what clients/python/generate.py makes of
today's openapi.yaml, an operation added to the contract becomes a method, and
its wheel, installed into a fresh venv with no compiler on PATH and nothing of
the service, runs the common flows against a live server."""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from service.app import create_app
from tests.helpers import served
from workers.webhooks import event_body, message_id, new_secret, signature

ROOT = Path(__file__).resolve().parents[1]
CLIENT = ROOT / "clients" / "python"
SERVICE_PACKAGES = {"flask", "celery", "numpy", "redis", "hiredis", "kombu", "marshmallow", "reportlab", "gunicorn",
                    "werkzeug", "ricochet-service", "pyyaml", "apispec", "resvg-py"}


def _generator():
    spec = importlib.util.spec_from_file_location("ricochet_client_generate", CLIENT / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _contract() -> dict:
    return yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))


def test_the_generated_module_is_todays_contract():
    made = _generator().generate(_contract())
    assert made == (CLIENT / "ricochet_client" / "_generated.py").read_text(encoding="utf-8"), \
        "clients/python/ricochet_client/_generated.py is stale: run python clients/python/generate.py"


def test_every_operation_of_the_contract_is_a_method_of_the_client():
    import ricochet_client

    generate = _generator()
    operations = {op["operationId"]: (verb.upper(), path) for path, item in _contract()["paths"].items()
                  for verb, op in item.items() if verb in generate.METHODS}
    assert len(operations) >= 50
    client = ricochet_client.Client("http://127.0.0.1:9")
    missing = [op for op in operations if not callable(getattr(client.api, generate.snake(op), None))]
    assert missing == []
    assert {op: entry[:2] for op, entry in ricochet_client.OPERATIONS.items()} == operations


class _Echo(BaseHTTPRequestHandler):
    """Answers every request with what it received, as JSON."""

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        reply = json.dumps({"method": self.command, "path": self.path, "body": body,
                            "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("RateLimit-Policy", '"burst";q=10;w=60')
        self.send_header("RateLimit", '"burst";r=9;t=60')
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST = do_PATCH = do_DELETE = _answer

    def log_message(self, *args) -> None:
        pass


PLANTED = {
    "operationId": "plantThing",
    "summary": "An operation the service does not have yet",
    "parameters": [{"in": "path", "name": "thing_id", "required": True, "schema": {"type": "string"}},
                   {"in": "query", "name": "from", "schema": {"type": "string", "format": "date"}},
                   {"in": "header", "name": "Idempotency-Key", "schema": {"type": "string"}}],
    "requestBody": {"required": True, "content": {"application/json": {"schema": {
        "type": "object", "required": ["colour"],
        "properties": {"colour": {"type": "string", "enum": ["red", "green"]}, "size": {"type": "integer"}}}}}},
    "responses": {"201": {"description": "made", "content": {"application/json": {"schema": {
        "type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}}}}},
}


def test_an_operation_added_to_the_contract_gets_a_method(tmp_path):
    """Coverage by construction: a new path in openapi.yaml (and a webhooks section)
    gives the regenerated client a method that sends it, and typed events."""
    contract = copy.deepcopy(_contract())
    contract["paths"]["/v1/things/{thing_id}"] = {"patch": PLANTED}
    contract["webhooks"] = {"thing.planted": {"post": {"requestBody": {"content": {"application/json": {"schema": {
        "type": "object", "required": ["type", "data"],
        "properties": {"type": {"const": "thing.planted"}, "data": {"type": "object", "properties": {
            "thing_id": {"type": "string"}}}}}}}}, "responses": {"200": {"description": "received"}}}}}
    source = _generator().generate(contract)
    assert "def plant_thing(" in source and "class ThingPlantedEvent(TypedDict):" in source
    package = tmp_path / "planted_client"
    shutil.copytree(CLIENT / "ricochet_client", package, ignore=shutil.ignore_patterns("__pycache__"))
    (package / "_generated.py").write_text(source, encoding="utf-8")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.path.insert(0, str(tmp_path))
    try:
        planted = importlib.import_module("planted_client")
        client = planted.Client(f"http://127.0.0.1:{server.server_port}", api_key="k")
        reply = client.api.plant_thing("t 1", from_="2026-01-02", idempotency_key="once", colour="red")
        assert planted.OPERATIONS["plantThing"] == ("PATCH", "/v1/things/{thing_id}", "plant_thing")
        assert planted.WEBHOOK_EVENTS == {"thing.planted": "ThingPlantedEvent"}
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "planted_client" or m.startswith("planted_client.")]:
            del sys.modules[name]
        server.shutdown()
    sent = reply.data
    assert sent["method"] == "PATCH" and sent["path"] == "/v1/things/t%201?from=2026-01-02"
    assert sent["body"] == {"colour": "red"}  # None leaves a property out
    assert sent["headers"]["idempotency-key"] == "once" and sent["headers"]["x-api-key"] == "k"
    assert reply.rate_limit.remaining == 9 and reply.rate_limit.tightest.quota == 10
    assert client.last_rate_limit is reply.rate_limit


def test_webhook_signatures_rotation_tampering_and_age():
    from ricochet_client import WebhookVerificationError, verify_webhook

    old, new, now = new_secret(), new_secret(), int(time.time())
    body = event_body("day.published", {"number": 7})
    both = f"{signature(old, 'msg_1', now, body)} {signature(new, 'msg_1', now, body)}"
    headers = {"Webhook-Id": "msg_1", "Webhook-Timestamp": str(now), "Webhook-Signature": both}
    assert verify_webhook(old, headers, body)["data"] == {"number": 7}
    assert verify_webhook(new, headers, body.encode())["type"] == "day.published"
    for secret, sent, stamp in ((new_secret(), body, now), (new, body.replace("7", "8"), now),
                                (new, body, now - 301)):
        with pytest.raises(WebhookVerificationError):
            verify_webhook(secret, {**headers, "Webhook-Timestamp": str(stamp)}, sent)


SCRIPT = r'''
import json, os, shutil, sys
import ricochet_client
from ricochet_client import Client, verify_webhook

api = Client(os.environ["RICOCHET_URL"])
out = {"file": ricochet_client.__file__, "compilers": [shutil.which(c) for c in ("gcc", "cc", "clang")]}
today = api.daily()
moves = api.daily_solution(today.date)
out["daily"] = {"number": today.number, "length": today.optimal_length, "moves": len(moves)}
answer = api.solve(today.code)
out["solve"] = {"status": answer.status, "length": answer.length}
verdict = api.verify(today.puzzle, moves, player="wheel-ann")
out["verify"] = {"solved": verdict.solved, "optimal": verdict.optimal, "attempt": verdict.attempt}
made = api.next("wheel-ann", solution=False)
out["next"] = {"code": made.code, "length": made.optimal_length, "solution": made.solution}
job = api.pack(3, 6, 8, seed="wheel").wait(timeout=240)
out["pack"] = {"state": job.state, "lengths": [p.optimal_length for p in job.puzzles()]}
sample = json.loads(os.environ["RICOCHET_WEBHOOK_SAMPLE"])
out["webhook"] = verify_webhook(sample["secret"], sample["headers"], sample["body"])
limit = api.last_rate_limit
out["rate_limit"] = None if limit is None else {"limits": len(limit.limits), "remaining": limit.remaining}
print(json.dumps(out))
'''


def _wheel(tmp_path: Path) -> Path:
    out = tmp_path / "dist"
    build = tmp_path / "build-copy"  # built from a copy, so no build/ or egg-info lands in the checkout
    shutil.copytree(CLIENT, build, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    str(build), "-w", str(out)], check=True, capture_output=True, timeout=300)
    (wheel,) = out.glob("ricochet_client-*.whl")
    return wheel


@pytest.mark.slow
def test_the_wheel_in_a_fresh_venv_against_a_live_server(tmp_path, redis_url, celery_worker):
    wheel = _wheel(tmp_path)
    assert wheel.stat().st_size < 1_000_000
    names = zipfile.ZipFile(wheel).namelist()
    assert {"ricochet_client/py.typed", "ricochet_client/_generated.py"} <= set(names)
    assert not [n for n in names if n.startswith(("service/", "solver/", "tests/")) or n.endswith("generate.py")]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bare = tmp_path / "bin-without-compilers"
    bare.mkdir()
    env = {"PATH": f"{venv / 'bin'}:{bare}", "HOME": str(tmp_path), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", str(wheel)], env=env, cwd=tmp_path,
                   check=True, timeout=300)
    listed = subprocess.run([python, "-m", "pip", "list", "--format", "json"], env=env, cwd=tmp_path, check=True,
                            capture_output=True, text=True, timeout=120).stdout
    installed = {p["name"].lower() for p in json.loads(listed)}
    assert "ricochet-client" in installed and not installed & SERVICE_PACKAGES, installed
    assert installed <= {"ricochet-client", "pip", "setuptools", "wheel"}, installed
    with served(create_app({"REDIS_URL": redis_url})) as base:
        run = subprocess.run([python, "-c", SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                             env={**env, "RICOCHET_URL": base, "RICOCHET_WEBHOOK_SAMPLE": json.dumps(_sample())})
    assert run.returncode == 0, run.stderr[-4000:]
    out = json.loads(run.stdout)
    assert out["file"].startswith(str(venv)) and out["compilers"] == [None, None, None]
    assert out["daily"]["moves"] == out["daily"]["length"] == out["solve"]["length"]
    assert out["solve"]["status"] == "optimal"
    assert out["verify"]["solved"] and out["verify"]["optimal"] and "rated" in out["verify"]["attempt"]
    assert out["next"]["length"] >= 2 and out["next"]["solution"] == []
    assert out["pack"] == {"state": "succeeded", "lengths": out["pack"]["lengths"]}
    assert len(out["pack"]["lengths"]) == 3 and all(6 <= n <= 8 for n in out["pack"]["lengths"])
    assert out["webhook"]["type"] == "job.succeeded" and out["webhook"]["data"]["id"] == "sample"


def _sample() -> dict:
    """A job.succeeded delivery as the service signs one, during a rotation: signed by an old secret too."""
    secret, msg, now = new_secret(), message_id("job:sample"), int(time.time())
    body = event_body("job.succeeded", {"id": "sample", "kind": "pack", "state": "succeeded"})
    signatures = f"{signature(new_secret(), msg, now, body)} {signature(secret, msg, now, body)}"
    return {"secret": secret, "body": body,
            "headers": {"webhook-id": msg, "webhook-timestamp": str(now), "webhook-signature": signatures}}


def test_the_client_reads_no_service_module():
    """The distribution stands alone: its modules import the standard library and each other only."""
    import ast

    for path in (CLIENT / "ricochet_client").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                assert node.module.partition(".")[0] in sys.stdlib_module_names | {"__future__"}, (path, node.module)
            if isinstance(node, ast.Import):
                assert all(a.name.partition(".")[0] in sys.stdlib_module_names for a in node.names), path
    assert "dependencies = []" in (CLIENT / "pyproject.toml").read_text(encoding="utf-8")


class _SlowJob(BaseHTTPRequestHandler):
    """A job that runs for two polls, asking each time to be polled no sooner than in 1 s."""

    polls: list[float] = []
    paths: list[str] = []

    def do_GET(self) -> None:
        self.polls.append(time.monotonic())
        self.paths.append(self.path)
        state = "succeeded" if len(self.polls) > 2 else "running"
        reply = json.dumps({"id": "j1", "kind": "solve", "state": state, "progress": 0.5}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Retry-After", "1")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args) -> None:
        pass


def test_a_job_is_polled_no_sooner_than_retry_after_at_its_location():
    from ricochet_client import Client

    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowJob)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        job = Client(f"http://127.0.0.1:{server.server_port}").job("j1")
        job.location = "/elsewhere/j1"  # as a 202's Location names it
        job.wait(every=0.01, timeout=30)
    finally:
        server.shutdown()
    assert job.state == "succeeded" and _SlowJob.paths == ["/v1/jobs/j1", "/elsewhere/j1", "/elsewhere/j1"]
    gaps = [b - a for a, b in zip(_SlowJob.polls, _SlowJob.polls[1:])]
    assert all(gap >= 0.9 for gap in gaps), gaps  # every=0.01 alone would poll a hundred times a second


def test_the_limits_in_either_draft_form():
    from ricochet_client import RateLimit

    named = RateLimit.from_headers({"RateLimit-Policy": '"burst";q=100;w=60, "day";q=1000;w=86400',
                                    "RateLimit": '"burst";r=50;t=30, "day";r=7;t=100',
                                    "X-Quota-Kind": "packs", "X-Quota-Limit": "100", "X-Quota-Remaining": "0",
                                    "X-Quota-Reset": "1795000000", "Retry-After": "3374"})
    assert (named.tightest.policy, named.remaining, named.reset, named.tightest.quota) == ("day", 7, 100.0, 1000)
    assert named.quota.remaining == 0 and named.quota.kind == "packs" and named.retry_after == 3374
    older = RateLimit.from_headers({"RateLimit-Policy": "10;w=1, 50;w=60",
                                    "RateLimit": "limit=10, remaining=9, reset=1"})
    assert older.limits[0].quota == 10 and older.limits[0].window == 1 and older.remaining == 9
    assert RateLimit.from_headers({"RateLimit": "not a structured field ("}).limits == ()
