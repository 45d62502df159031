"""Packs: fan-out over a real worker, determinism, idempotency, and a worker killed mid-pack."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from service.app import create_app
from solver.puzzle import Puzzle
from solver.solve import solve
from tests.helpers import wait_for_job
from workers.embedded import EmbeddedRedis
from workers.tasks import pack_item, pack_request


def test_pack_is_generated_in_order_and_deterministic(redis_url, celery_worker):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    body = {"count": 12, "min_length": 5, "max_length": 7, "seed": "t1"}
    r = client.post("/v1/packs", json=body)
    assert r.status_code == 202 and r.headers["Location"].startswith("/v1/jobs/")
    job = wait_for_job(client, r.headers["Location"])
    assert job["state"] == "succeeded" and job["progress"] == 1.0 and job["pack_id"] == r.json["id"]
    pack = client.get(f"/v1/packs/{job['pack_id']}").json
    assert pack["count"] == 12 and len(pack["puzzles"]) == 12
    request = pack_request(body)
    for i, item in enumerate(pack["puzzles"]):
        assert item.pop("index") == i
        assert json.dumps(item, sort_keys=True) == json.dumps(pack_item(request, i), sort_keys=True)
        assert 5 <= solve(Puzzle.from_json(item)).length == item["optimal_length"] <= 7
    lines = client.get(f"/v1/packs/{job['pack_id']}?format=ndjson")
    assert lines.mimetype == "application/x-ndjson"
    assert [json.loads(x) for x in lines.data.decode().splitlines()] == [{**p, "index": i} for i, p in
                                                                          enumerate(pack["puzzles"])]
    sheet = client.get(f"/v1/packs/{job['pack_id']}.svg?solution=true")
    assert sheet.status_code == 200 and sheet.mimetype == "image/svg+xml"
    assert sheet.data.count(b"<svg") == 13 and sheet.data.count(b"polyline") >= 12
    assert all(p["code"].encode() in sheet.data for p in pack["puzzles"])
    assert client.get(f"/v1/packs/{job['pack_id']}.svg?page=2").status_code == 404
    assert client.get(f"/v1/packs/{job['pack_id']}.svg?page=x").json["field"] == "page"


def test_idempotency_key_returns_the_same_job(redis_url, celery_worker):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    body = {"count": 2, "min_length": 4, "max_length": 4, "seed": "t2"}
    first = client.post("/v1/packs", json=body, headers={"Idempotency-Key": "abc-123"})
    second = client.post("/v1/packs", json=body, headers={"Idempotency-Key": "abc-123"})
    assert first.json["id"] == second.json["id"]
    assert client.post("/v1/packs", json=body).json["id"] != first.json["id"]
    wait_for_job(client, first.headers["Location"])


@pytest.mark.parametrize("body,field", [
    ({"count": 0, "min_length": 5, "max_length": 6}, "count"),
    ({"count": 5000, "min_length": 5, "max_length": 6}, "count"),
    ({"count": 5, "min_length": 8, "max_length": 6}, "min_length"),
    ({"count": 5, "min_length": 5}, "max_length"),
    ({"count": 5, "min_length": 5, "max_length": 6, "colour": "red"}, "colour"),
])
def test_bad_pack_requests(redis_url, body, field):
    r = create_app({"REDIS_URL": redis_url}).test_client().post("/v1/packs", json=body)
    assert r.status_code == 400 and r.json["field"] == field


def test_pack_not_ready_and_unknown(redis_url):
    from workers.stores import Stores

    client = create_app({"REDIS_URL": redis_url}).test_client()
    job = Stores.from_url(redis_url).create_job("pack", {"count": 1, "min_length": 3, "max_length": 3})
    r = client.get(f"/v1/packs/{job['id']}")
    assert r.status_code == 409 and r.headers["Location"] == f"/v1/jobs/{job['id']}"
    assert client.get("/v1/packs/nope").status_code == 404


def _start_worker(url: str) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": url, "RICOCHET_VISIBILITY_TIMEOUT": "3"}
    return subprocess.Popen([sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "warning",
                             "--concurrency", "1", "--without-gossip", "--without-mingle"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.mark.slow
def test_a_worker_killed_mid_pack_loses_nothing(tmp_path):
    with EmbeddedRedis(tmp_path / "redis", persist=False) as redis:
        client = create_app({"REDIS_URL": redis.url}).test_client()
        body = {"count": 20, "min_length": 8, "max_length": 10, "seed": "fault"}
        worker = _start_worker(redis.url)
        try:
            r = client.post("/v1/packs", json=body)
            deadline = time.monotonic() + 120
            while client.get(r.headers["Location"]).json["progress"] < 0.1:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            os.killpg(worker.pid, signal.SIGKILL)  # the worker and its pool, mid-chunk
            worker.wait()
            assert client.get(r.headers["Location"]).json["state"] == "running"
            worker = _start_worker(redis.url)
            job = wait_for_job(client, r.headers["Location"], timeout=240)
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
        assert job["state"] == "succeeded"
        puzzles = client.get(f"/v1/packs/{job['pack_id']}").json["puzzles"]
        request = pack_request(body)
        assert len(puzzles) == 20
        assert [p["code"] for p in puzzles] == [pack_item(request, i)["code"] for i in range(20)]


@pytest.mark.slow
def test_redis_restarted_mid_pack(tmp_path):
    """While Redis is down the API answers 503 with Retry-After; afterwards it
    recovers by itself and the pack completes (or is reported failed), never
    'succeeded' with puzzles missing."""
    redis = EmbeddedRedis(tmp_path / "redis", persist=True).start()
    client = create_app({"REDIS_URL": redis.url}).test_client()
    body = {"count": 20, "min_length": 8, "max_length": 10, "seed": "restart"}
    worker = _start_worker(redis.url)
    try:
        r = client.post("/v1/packs", json=body)
        location = r.headers["Location"]
        deadline = time.monotonic() + 120
        while client.get(location).json["progress"] < 0.1:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        redis.stop()
        down = client.get(location)
        assert down.status_code == 503 and down.mimetype == "application/problem+json"
        assert int(down.headers["Retry-After"]) > 0
        assert client.get("/readyz").status_code == 503
        time.sleep(8)  # the worker meets the outage mid-chunk
        redis.start()
        job = wait_for_job(client, location, timeout=300)
        assert job["state"] in ("succeeded", "failed"), job
        if job["state"] == "succeeded":
            puzzles = client.get(f"/v1/packs/{job['pack_id']}").json["puzzles"]
            request = pack_request(body)
            assert [p["code"] for p in puzzles] == [pack_item(request, i)["code"] for i in range(20)]
        else:
            assert job["error"]
            assert client.get(f"/v1/packs/{job['id']}").status_code == 409
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
        redis.stop()
