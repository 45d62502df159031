"""Packs: fan-out over a real worker, determinism, idempotency, and a worker killed mid-pack."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from application import packs
from service.app import create_app
from solver.formats.lines import ndjson_line
from solver.model.moves import check
from solver.model.puzzle import Move, Puzzle
from solver.production.themes import THEMES
from solver.search.solve import solve
from tests.helpers import issued_key, made_pack, pack_request, start_worker, unpooled_board, wait_for_job
from workers.app import make_celery
from workers.embedded import EmbeddedRedis


def test_pack_is_generated_in_order_and_deterministic(redis_url, celery_worker):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    body = {"count": 12, "min_length": 5, "max_length": 7, "seed": "t1"}
    r = client.post("/v1/packs", json=body)
    assert r.status_code == 202 and r.headers["Location"].startswith("/v1/jobs/")
    job = wait_for_job(client, r.headers["Location"])
    assert job["state"] == "succeeded" and job["progress"] == 1.0 and job["pack_id"] == r.json["id"]
    pack = client.get(f"/v1/packs/{job['pack_id']}").json
    assert pack["count"] == 12 and len(pack["puzzles"]) == 12
    assert pack["pairs"] == len({(p["board"], tuple(Puzzle.from_code(p["code"]).goal.cell)) for p in pack["puzzles"]})
    request, library = pack_request(body), make_celery(redis_url).library  # the pools the workers see
    for i, shown in enumerate(pack["puzzles"]):
        item = dict(shown)
        assert item.pop("index") == i
        played = {k: item.pop(k) for k in ("rating", "popularity", "themes")}  # what play makes of it, beside
        assert played["rating"]["plays"] == 0 and played["popularity"] == 0
        assert set(played["themes"]) <= set(THEMES) and ("short" in played["themes"]) == (item["optimal_length"] <= 4)
        assert json.dumps(item, sort_keys=True) == json.dumps(packs.item(request, i, library), sort_keys=True)
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
    # Without a server: the same items with the same fields (no play yet: the same ratings), by two processes.
    cli = subprocess.run([sys.executable, "-m", "service.cli", "pack", "--count", "12", "--min-length", "5",
                          "--max-length", "7", "--seed", "t1", "-j", "2"], capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "REDIS_URL"})
    assert [json.loads(x) for x in cli.stdout.splitlines()] == pack["puzzles"]


def _reimported(row: dict[str, str]) -> Puzzle:
    """The puzzle a row of the export's CSV gives back (as tests/test_export.py reads one)."""
    robots = {c: tuple(map(int, xy.split(","))) for c, xy in (part.split(":") for part in row["robots"].split())}
    colour, _, symbol = row["target"].partition("-")
    target = {"symbol": "vortex"} if row["target"] == "vortex" else {"colour": colour, "symbol": symbol}
    rules = {"ricochet": row["ricochet"], "vortex_sightline": row["vortex_sightline"] == "true"}
    return Puzzle.from_json({"board": row["board"], "robots": robots, "target": target, "rules": rules})


def test_a_pack_in_csv_is_the_exports_csv_by_either_path(redis_url, celery_worker):
    """GET /v1/packs/{id}?format=csv (or Accept text/csv) and `ricochet pack --format csv` write the same pack
    by the export's CSV writer: the export's header, one row per item in order, each giving its puzzle back with
    a solution of its optimal length; only the source differs (the CLI's pack has no id).  NDJSON stays as it
    was: `ricochet pack`'s default is --format ndjson, compact lines of the items GET /v1/packs/{id} shows."""
    app = create_app({"REDIS_URL": redis_url, "EXPORT_LINES": 1})
    client = app.test_client()
    asked = ["--count", "6", "--min-length", "5", "--max-length", "8", "--seed", "csv"]
    job, pack = made_pack(client, {"count": 6, "min_length": 5, "max_length": 8, "seed": "csv"})
    r = client.get(f"/v1/packs/{job['pack_id']}?format=csv")
    assert r.status_code == 200 and r.mimetype == "text/csv" and r.headers["X-Pack-State"] == "succeeded"
    assert client.get(f"/v1/packs/{job['pack_id']}", headers={"Accept": "text/csv"}).data == r.data
    header = client.get("/v1/puzzles/export?format=csv").data.decode()  # the export cut to its header row
    assert r.data.decode().splitlines(keepends=True)[0] == header
    rows = list(csv.DictReader(io.StringIO(r.data.decode())))
    assert [row["code"] for row in rows] == [p["code"] for p in pack["puzzles"]] and len(rows) == 6
    for row, item in zip(rows, pack["puzzles"], strict=True):
        p, moves = _reimported(row), [Move(*m.split("-")) for m in row["solution"].split()]
        assert p.code() == row["code"] and row["source"] == f"pack:{job['pack_id']}"
        assert check(p, moves).solved and len(moves) == int(row["optimal_length"]) == item["optimal_length"]
        assert (float(row["rating"]), int(row["plays"]), row["themes"].split()) == (
            item["rating"]["value"], item["rating"]["plays"], item["themes"])
    no_redis = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    made = [subprocess.run([sys.executable, "-m", "service.cli", "pack", *asked, *more], capture_output=True,
                           text=True, check=True, env=no_redis).stdout
            for more in (["--format", "csv"], [], ["--format", "ndjson"])]
    cli = list(csv.DictReader(io.StringIO(made[0])))
    assert made[0].splitlines(keepends=True)[0] == header and {row["source"] for row in cli} == {"pack"}
    assert [{**row, "source": "pack"} for row in rows] == cli
    ndjson = made[1].splitlines(keepends=True)  # compact lines of the items, as before
    assert made[1] == made[2] and ndjson == [ndjson_line(json.loads(line)) for line in ndjson]
    assert [json.loads(line) for line in ndjson] == pack["puzzles"]
    bad = client.get(f"/v1/packs/{job['pack_id']}?format=xlsx")
    assert bad.status_code == 400 and bad.json["field"] == "format" and "json, ndjson or csv" in bad.json["detail"]


def test_idempotency_key_returns_the_same_job(redis_url, celery_worker):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    body = {"count": 2, "min_length": 4, "max_length": 4, "seed": "t2"}
    first = client.post("/v1/packs", json=body, headers={"Idempotency-Key": "abc-123"})
    second = client.post("/v1/packs", json=body, headers={"Idempotency-Key": "abc-123"})
    assert first.json["id"] == second.json["id"]
    assert client.post("/v1/packs", json=body).json["id"] != first.json["id"]
    other = client.post("/v1/packs", json={**body, "count": 3}, headers={"Idempotency-Key": "abc-123"})
    assert other.status_code == 422 and other.json["field"] == "Idempotency-Key"
    elsewhere = client.post("/v1/packs", json=body, headers={"Idempotency-Key": "abc-123"},
                            environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert elsewhere.status_code == 202 and elsewhere.json["id"] != first.json["id"]  # keys are per client
    wait_for_job(client, first.headers["Location"])
    from workers.stores import Stores  # a key whose job has expired: 410, and keys are the client's

    fingerprint = hashlib.sha256(json.dumps(pack_request(body), sort_keys=True).encode()).hexdigest()
    Stores.from_url(redis_url).jobs.for_idempotency_key("addr:127.0.0.1:expired", "nojob", fingerprint)
    gone = client.post("/v1/packs", json=body, headers={"Idempotency-Key": "expired"})
    assert gone.status_code == 410, gone.json


def test_a_refused_request_leaves_its_idempotency_key_free(redis_url, celery_worker):
    """A request refused for its quota records nothing: its retry, once there is
    room, is a new request under the same key (not a 409 or 422 for a day)."""
    body = {"count": 2, "min_length": 4, "max_length": 4, "seed": "refused"}
    tight = create_app({"REDIS_URL": redis_url, "QUOTAS": {"solve": 100, "pack": 1}}).test_client()
    headers = {"Idempotency-Key": "retry-me", **issued_key(redis_url)}
    refused = tight.post("/v1/packs", json=body, headers=headers)
    assert refused.status_code == 429 and refused.json["type"] == "/problems/quota-exceeded"
    roomy = create_app({"REDIS_URL": redis_url}).test_client()
    retried = roomy.post("/v1/packs", json=body, headers=headers)
    assert retried.status_code == 202, retried.json
    assert roomy.post("/v1/packs", json=body, headers=headers).json["id"] == retried.json["id"]
    wait_for_job(roomy, retried.headers["Location"])


@pytest.mark.parametrize("body,field", [
    ({"count": 0, "min_length": 5, "max_length": 6}, "count"),
    ({"count": 5000, "min_length": 5, "max_length": 6}, "count"),
    ({"count": 5, "min_length": 8, "max_length": 6}, "min_length"),
    ({"count": 5, "min_length": 5}, "max_length"),
    ({"count": 5, "min_length": 5, "max_length": 6, "colour": "red"}, "colour"),
    ({"count": 5, "min_length": 5, "max_length": 6, "board": "nope"}, "board"),
    ({"count": 5, "min_length": 5, "max_length": 6, "ricochet": "sometimes"}, "ricochet"),
    ({"count": 5, "min_length": 5, "max_length": 31}, "max_length"),
])
def test_bad_pack_requests(redis_url, body, field):
    r = create_app({"REDIS_URL": redis_url}).test_client().post("/v1/packs", json=body)
    assert r.status_code == 400 and r.json["field"] == field


def test_lengths_no_pool_holds_are_refused_at_once(redis_url):
    r = create_app({"REDIS_URL": redis_url}).test_client().post(
        "/v1/packs", json={"count": 5, "min_length": 29, "max_length": 30})
    assert r.status_code == 422 and r.json["field"] == "min_length" and "longest" in r.json["detail"]


def test_lengths_below_a_fair_puzzle_are_refused_at_once(redis_url):
    """A one-move round is void: a pack that could hold one is refused at POST,
    not accepted and failed item by item later."""
    r = create_app({"REDIS_URL": redis_url}).test_client().post(
        "/v1/packs", json={"count": 5, "min_length": 1, "max_length": 3})
    assert r.status_code == 422 and r.json["field"] == "min_length" and "from 2" in r.json["detail"]


def test_long_packs_come_from_pools_at_once_and_spread_over_them(redis_url, celery_worker):
    """Lengths beyond 20 from the starter set's pools, no two puzzles alike."""
    from solver.production.packs import variety_key

    client = create_app({"REDIS_URL": redis_url}).test_client()
    puzzles = made_pack(client, {"count": 60, "min_length": 18, "max_length": 23, "seed": "long"}, 60)[1]["puzzles"]
    assert len(puzzles) == 60 and {p["optimal_length"] for p in puzzles} == set(range(18, 24))
    assert len({variety_key(p) for p in puzzles}) == 60
    for p in puzzles[:3]:
        assert solve(Puzzle.from_json(p), state_budget=3 << 30).length == p["optimal_length"]
        # Hints follow the pack's own solution, at once, long as it is.
        hint = client.get(f"/v1/puzzles/{p['code']}/hint?level=4").json
        assert hint["optimal_length"] == p["optimal_length"] and hint["first_move"] == p["solution"][0], hint


def test_a_pack_with_impossible_items_finishes_the_rest(redis_url, celery_worker):
    """No fair puzzle has one move: those items are recorded as failed, with the
    reason, and the other items are made.  (The API refuses such a pack at once
    now; a job recorded before it did is still finished so.)"""
    from workers.stores import Stores

    client = create_app({"REDIS_URL": redis_url}).test_client()
    request = pack_request({"count": 6, "min_length": 1, "max_length": 3, "seed": "miss"})
    created = Stores.from_url(redis_url).jobs.create("pack", request)
    make_celery(redis_url).send_task("ricochet.pack", args=[created["id"]])
    job = wait_for_job(client, f"/v1/jobs/{created['id']}")
    assert job["state"] == "succeeded", job
    failed = job["result"]["failed"]
    assert len(failed) == 2 and all("1 move" in f["error"] for f in failed)
    pack = client.get(f"/v1/packs/{job['pack_id']}").json
    assert pack["count"] == 4 and pack["failed"] == failed
    assert {p["index"] for p in pack["puzzles"]} | {f["index"] for f in failed} == set(range(6))
    assert all(2 <= p["optimal_length"] <= 3 for p in pack["puzzles"])


def test_a_cancelled_pack_stops_its_worker_within_seconds(redis_url, celery_worker):
    """Long searched items on a custom-spec board no pool holds: cancel, then
    the worker is free for the next job within seconds; NDJSON streams what
    was made before."""
    spec = unpooled_board()
    client = create_app({"REDIS_URL": redis_url}).test_client()
    body = {"count": 4, "min_length": 19, "max_length": 19, "seed": "cancel", "board": spec}
    r = client.post("/v1/packs", json=body)
    location = r.headers["Location"]
    deadline = time.monotonic() + 30
    while client.get(location).json["state"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    partial = client.get(f"/v1/packs/{r.json['id']}?format=ndjson")
    assert partial.status_code == 200 and partial.headers["X-Pack-State"] == "running"
    cancelled = client.delete(location)
    assert cancelled.status_code == 200 and cancelled.json["state"] == "cancelled"
    assert client.delete(location).json["state"] == "cancelled"  # twice is harmless
    assert client.get(f"/v1/packs/{r.json['id']}").status_code == 409
    started = time.monotonic()
    quick = client.post("/v1/packs", json={"count": 1, "min_length": 3, "max_length": 3, "seed": "after"})
    job = wait_for_job(client, quick.headers["Location"], timeout=60)
    # Not cancelled, the pack would hold the worker (concurrency 1) for its other items first: about 17 s
    # each on a quiet machine (each searches 5,000 placements in vain), so at least 50 s. Cancelled, the
    # next job took 2-4 s quiet and 16 s with six test processes on two cores.
    assert job["state"] == "succeeded" and time.monotonic() - started < 40
    assert client.get(location).json["state"] == "cancelled"
    assert client.delete("/v1/jobs/nope").status_code == 404


def test_pack_not_ready_and_unknown(redis_url):
    from workers.stores import Stores

    client = create_app({"REDIS_URL": redis_url}).test_client()
    job = Stores.from_url(redis_url).jobs.create("pack", {"count": 1, "min_length": 3, "max_length": 3})
    r = client.get(f"/v1/packs/{job['id']}")
    assert r.status_code == 409 and r.headers["Location"] == f"/v1/jobs/{job['id']}"
    assert client.get("/v1/packs/nope").status_code == 404


def _start_worker(url: str, visibility: int = 3, log: Path | None = None) -> subprocess.Popen:
    return start_worker(url, "ricochet,packs", log, RICOCHET_VISIBILITY_TIMEOUT=str(visibility))


@pytest.mark.slow
def test_a_worker_killed_mid_pack_loses_nothing(tmp_path):
    """The broker would hand the dead worker's chunk out again only after its
    visibility timeout (30 minutes, longer than any task); the chunk's silent
    heartbeat brings it back at the next recover_chunks beat instead."""
    from workers import tasks  # noqa: F401 - the tasks, on every app the factory makes
    from workers.messages import RECOVER_CHUNKS
    from workers.stores import Stores

    with EmbeddedRedis(tmp_path / "redis", persist=False) as redis:
        client = create_app({"REDIS_URL": redis.url}).test_client()
        body = {"count": 20, "min_length": 8, "max_length": 10, "seed": "fault", "board": unpooled_board()}
        worker = _start_worker(redis.url, visibility=1800)
        try:
            r = client.post("/v1/packs", json=body)
            stores = Stores.from_url(redis.url)
            beats = f"pack:{r.json['id']}:beats"
            deadline = time.monotonic() + 120
            # Mid-chunk: some items made, and a chunk running (it has beaten).
            while client.get(r.headers["Location"]).json["progress"] < 0.1 or not stores.redis.hlen(beats):
                assert time.monotonic() < deadline
                time.sleep(0.02)
            os.killpg(worker.pid, signal.SIGKILL)  # the worker and its pool, mid-chunk
            worker.wait()
            assert client.get(r.headers["Location"]).json["state"] == "running"
            # Should the kill have fallen before any chunk was received (so none has a
            # heartbeat), the broker hands the message out again after 3 s.
            worker = _start_worker(redis.url, visibility=3)
            celery = make_celery(redis.url, stores=stores)  # the beat's app, given this test's stores
            deadline = time.monotonic() + 10
            while not celery.tasks[RECOVER_CHUNKS.name](silence=1.0) and time.monotonic() < deadline:  # a beat
                time.sleep(0.5)
            job = wait_for_job(client, r.headers["Location"], timeout=240)
        finally:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
        assert job["state"] == "succeeded", job
        puzzles = client.get(f"/v1/packs/{job['pack_id']}").json["puzzles"]
        request = pack_request(body)
        assert len(puzzles) == 20
        assert [p["code"] for p in puzzles] == [packs.item(request, i, celery.library)["code"] for i in range(20)]


@pytest.mark.slow
def test_redis_restarted_mid_pack(tmp_path):
    """While Redis is down the API answers 503 with Retry-After; the worker's
    writes in the middle of the outage are retried until Redis is back, and the
    pack completes with every puzzle."""
    from solver.production import packs
    from solver.production.pools import Library, packaged
    from workers.stores import Stores

    redis = EmbeddedRedis(tmp_path / "redis", persist=True).start()
    worker = None
    try:
        client = create_app({"REDIS_URL": redis.url}).test_client()
        body = {"count": 20, "min_length": 8, "max_length": 10, "seed": "restart", "board": unpooled_board()}
        # What the pack must hold, as a worker of this deployment plans and makes it
        # (the starter pools, then this Redis's), worked out before the restart.
        library = Library([packaged(), Stores.from_url(redis.url).pools])
        request = pack_request(body)
        expected = [packs.item(request, planned, library)["code"] for planned in packs.plan_for(request, library)]
        log = tmp_path / "worker.log"  # read back if the pack does not complete
        worker = _start_worker(redis.url, log=log)
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
        _meet_the_worker(redis.port)  # the worker meets the outage mid-chunk
        redis.start()
        job = wait_for_job(client, location, timeout=300)
        # The workers' writes wait the outage out (a patient store): nothing is lost.
        assert job["state"] == "succeeded", (job, log.read_text(errors="replace")[-4000:])
        puzzles = client.get(f"/v1/packs/{job['pack_id']}").json["puzzles"]
        assert [p["code"] for p in puzzles] == expected
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGTERM)
            worker.wait(timeout=30)
        redis.stop()


def _meet_the_worker(port: int) -> None:
    """Wait, while Redis is down, for the worker to try it: listen on Redis's port
    until the worker's retried command connects, then free the port."""
    with socket.create_server(("127.0.0.1", port)) as listener:
        listener.settimeout(60)
        connection, _ = listener.accept()
        connection.close()


def test_a_full_queue_refuses_new_work_with_retry_after(redis_url):
    """No worker takes from this queue here: once it holds its limit, new packs are refused."""
    client = create_app({"REDIS_URL": redis_url, "MAX_QUEUED": {"ricochet": 200, "packs": 0}}).test_client()
    r = client.post("/v1/packs", json={"count": 1, "min_length": 3, "max_length": 3})
    assert r.status_code == 503 and r.headers["Retry-After"] and "queue is full" in r.json["detail"]


def test_queued_work_is_charged_to_each_clients_hourly_quota(redis_url):
    """A pack costs count x max_length puzzle-moves; past the quota, 429 with
    Retry-After, and the headers say what is left.  An API key is its own client."""
    client = create_app({"REDIS_URL": redis_url, "QUOTAS": {"solve": 3600, "pack": 50}}).test_client()
    body = {"count": 10, "min_length": 3, "max_length": 5, "seed": "quota"}
    key = issued_key(redis_url)
    first = client.post("/v1/packs", json=body, headers=key)
    assert first.status_code == 202 and first.headers["X-Quota-Limit"] == "50"
    assert first.headers["X-Quota-Remaining"] == "0" and int(first.headers["X-Quota-Reset"]) > 0
    over = client.post("/v1/packs", json={**body, "count": 1}, headers=key)
    assert over.status_code == 429 and int(over.headers["Retry-After"]) > 0 and over.json["quota"] == "pack"
    assert "quota of 50 puzzle-moves" in over.json["detail"]
    other = client.post("/v1/packs", json=body, headers=issued_key(redis_url))
    assert other.status_code == 202
    roomy = client.post("/v1/packs", json=body, headers=issued_key(redis_url, {"pack": 500}))  # a key's own quota
    assert roomy.status_code == 202 and roomy.headers["X-Quota-Limit"] == "500"


def test_a_received_chunk_beats_before_it_starts(redis_url):
    """The worker's main process beats for a chunk as it takes the message, so a
    worker that dies before the chunk starts leaves a silent chunk to recover."""
    from types import SimpleNamespace

    from workers import tasks
    from workers.messages import PACK_CHUNK
    from workers.stores import Stores

    stores = Stores.from_url(redis_url)
    chunk = make_celery(redis_url, stores=stores).tasks[PACK_CHUNK.name]  # the task on an app with these stores
    stores.packs.track_chunks("received-pack", {"3": [[3, 9], [4, 9]]})
    try:
        tasks.chunk_received(request=SimpleNamespace(name="ricochet.pack_chunk", task=chunk, kwargs={},
                                                     args=["received-pack", [[3, 9], [4, 9]]]))
        tasks.chunk_received(request=SimpleNamespace(name="ricochet.solve", args=["x", {}, 1.0]))  # not a chunk
        assert set(stores.redis.hkeys("pack:received-pack:beats")) == {b"3"}
        mine = [c for c in stores.packs.silent_chunks(0.0) if c[0] == "received-pack"]
        assert mine == [("received-pack", "3", [[3, 9], [4, 9]])]
        tasks.chunk_received(request=SimpleNamespace(name="ricochet.pack_chunk", task=chunk, kwargs={},
                                                     args=["received-pack"]))  # refused, logged
    finally:
        stores.packs.forget_chunks("received-pack")


@pytest.mark.parametrize("args,says", [(["--count", "2"], "--length"), (["--count", "0", "--length", "6"], "count"),
                                       (["--count", "2", "--length", "6", "--board", "nope"], "board"),
                                       (["--count", "2", "--length", "6", "-j", "0"], "--jobs")])
def test_pack_command_refuses_bad_requests(args, says):
    out = subprocess.run([sys.executable, "-m", "service.cli", "pack", *args], capture_output=True, text=True)
    assert out.returncode == 2 and says in out.stderr and not out.stdout
