"""Webhooks: Standard Webhooks signatures checked by the `standardwebhooks`
package, retries under one webhook-id, a worker killed and Redis restarted
mid-delivery, private addresses refused, redirects not followed, days announced.

These tests run their own Redis and worker: the worker needs the webhook
settings (private receivers allowed, short retries)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from service.app import create_app
from tests.helpers import issued_key, wait_for_job
from workers.embedded import EmbeddedRedis

ENV = {"RICOCHET_WEBHOOKS_ALLOW_PRIVATE": "on", "RICOCHET_WEBHOOKS_RETRY": "0.2", "RICOCHET_WEBHOOKS_ATTEMPTS": "5",
       "RICOCHET_WEBHOOKS_TIMEOUT": "3"}
PACK = {"count": 3, "min_length": 8, "max_length": 10, "seed": "hooks"}  # the starter pools hold them: no search


def start_worker(url: str, log: Path, beat: Path | None = None) -> subprocess.Popen:
    """A worker (with the beat embedded, given a folder for its schedule) with the webhook settings."""
    args = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "warning",
            "--concurrency", "1", "--without-gossip", "--without-mingle", "--queues", "ricochet,packs"]
    if beat is not None:
        args += ["--beat", "--schedule", str(beat / "beat-schedule")]
    with log.open("ab") as out:
        proc = subprocess.Popen(args, env={**os.environ, "REDIS_URL": url, **ENV}, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    from workers.app import make_celery

    app, deadline = make_celery(url), time.monotonic() + 60
    while True:
        try:
            if app.control.ping(timeout=0.5):
                return proc
        except Exception:  # the broker just restarted: ask again
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop(proc, signal.SIGKILL)
            raise AssertionError(f"the worker did not start: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Receiver:
    """An HTTP receiver on 127.0.0.1 that records what it is sent.  Paths:
    /ok answers 200; /flaky 500 three times, then 200; /hold keeps its first
    request until `release` is set, then 200; /moved answers 302 to /ok.  `arrived` is
    set once /hold is asked."""

    def __init__(self) -> None:
        self.got: list[dict] = []
        self.arrived = threading.Event()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                path = self.path
                earlier = sum(1 for g in receiver.got if g["path"] == path)
                receiver.got.append({"path": path, "headers": dict(self.headers), "body": body.decode(),
                                     "at": time.time()})
                if path == "/hold":
                    receiver.arrived.set()
                status = 200
                if path == "/flaky" and earlier < 3:
                    status = 500
                elif path == "/hold" and earlier == 0:
                    receiver.release.wait(30)
                elif path == "/moved":
                    status = 302
                self.send_response(status)
                if status == 302:
                    self.send_header("Location", "/ok")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def on(self, path: str) -> list[dict]:
        return [g for g in self.got if g["path"] == path]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """A Redis, a worker with the webhook settings, the API (private receivers allowed) and a receiver."""
    folder = tmp_path_factory.mktemp("hooks")
    with EmbeddedRedis(folder / "redis", persist=False) as redis:
        worker = start_worker(redis.url, folder / "worker.log")
        receiver = Receiver()
        client = create_app({"REDIS_URL": redis.url, "WEBHOOKS_ALLOW_PRIVATE": True}).test_client()
        try:
            yield redis.url, client, receiver
        finally:
            receiver.close()
            stop(worker)


def register(client, key: dict, url: str, events: list[str]) -> dict:
    r = client.post("/v1/webhooks", json={"url": url, "events": events}, headers=key)
    assert r.status_code == 201, r.json
    assert r.json["secret"].startswith("whsec_") and r.headers["Location"] == f"/v1/webhooks/{r.json['id']}"
    return r.json


def wait_until(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_a_packs_job_succeeded_arrives_signed_within_5_s(stack):
    url, client, receiver = stack
    key = issued_key(url)
    hook = register(client, key, f"{receiver.base}/ok", ["job.succeeded", "job.failed"])
    listed = client.get("/v1/webhooks", headers=key).json["webhooks"]
    assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]
    assert client.get("/v1/webhooks").status_code == 401  # webhooks belong to a key
    assert client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=issued_key(url)).status_code == 404

    queued = client.post("/v1/packs", json=PACK, headers=key)
    job = wait_for_job(client, queued.headers["Location"])
    assert job["state"] == "succeeded"
    got = wait_until(lambda: receiver.on("/ok"), 30)
    assert len(got) == 1
    event = Webhook(hook["secret"]).verify(got[0]["body"], got[0]["headers"])  # raises unless signed right
    assert event["type"] == "job.succeeded" and event["data"]["id"] == job["id"]
    assert event["data"]["pack_url"] == f"/v1/packs/{job['id']}" and event["data"]["made"] == 3
    assert got[0]["at"] - job["finished"] < 5.0, got[0]["at"] - job["finished"]
    print(f"job.succeeded arrived {got[0]['at'] - job['finished']:.3f} s after the job ended")
    with pytest.raises(WebhookVerificationError):  # another secret does not verify it
        Webhook(register(client, key, f"{receiver.base}/ok?another", ["day.published"])["secret"]).verify(
            got[0]["body"], got[0]["headers"])
    deliveries = client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=key).json["deliveries"]
    assert len(deliveries) == 1 and deliveries[0]["state"] == "succeeded"
    assert deliveries[0]["id"] == got[0]["headers"]["webhook-id"]
    assert [a["status"] for a in deliveries[0]["attempts"]] == [200] and deliveries[0]["event"] == event
    # Packs the pools hold whole (the worker warm now) may end before their 202 is sent: announced all the same.
    for seed in ("quick-1", "quick-2"):
        quick = wait_for_job(client, client.post("/v1/packs", json={**PACK, "seed": seed},
                                                 headers=key).headers["Location"])
        arrived = wait_until(lambda q=quick: [g for g in receiver.on("/ok") if q["id"] in g["body"]], 10)
        assert arrived and arrived[0]["at"] - quick["finished"] < 5.0, seed


def test_a_receiver_failing_three_times_gets_it_once_under_one_id(stack):
    url, client, receiver = stack
    key = issued_key(url)
    hook = register(client, key, f"{receiver.base}/flaky", ["job.succeeded"])
    job = wait_for_job(client, client.post("/v1/packs", json={**PACK, "seed": "flaky"},
                                           headers=key).headers["Location"])
    assert job["state"] == "succeeded"

    def settled():
        found = client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=key).json["deliveries"]
        return found if found and found[0]["state"] != "pending" else None

    deliveries = wait_until(settled, 60)
    assert deliveries and len(deliveries) == 1 and deliveries[0]["state"] == "succeeded"
    attempts = deliveries[0]["attempts"]
    assert [a["status"] for a in attempts] == [500, 500, 500, 200]
    assert attempts[0]["error"] == "HTTP 500" and attempts[-1]["error"] is None
    gaps = [b["at"] - a["at"] for a, b in zip(attempts, attempts[1:])]
    assert gaps[0] >= 0.2 and gaps[1] >= 0.8 and gaps[2] >= 3.2, gaps  # 0.2 s, then 4 times longer each
    time.sleep(1.0)
    got = receiver.on("/flaky")
    assert len(got) == 4 and {g["headers"]["webhook-id"] for g in got} == {deliveries[0]["id"]}
    assert len({g["headers"]["webhook-timestamp"] for g in got}) >= 2  # each attempt signed at its time
    for g in got:
        Webhook(hook["secret"]).verify(g["body"], g["headers"])


def test_private_addresses_are_refused_without_the_setting(stack):
    url, _, _ = stack
    client = create_app({"REDIS_URL": url}).test_client()  # the default: RICOCHET_WEBHOOKS_ALLOW_PRIVATE off
    key = issued_key(url)
    for private in ("http://127.0.0.1:8080/hook", "http://localhost/hook", "http://10.1.2.3/x",
                    "http://192.168.0.1/x", "http://169.254.169.254/latest", "http://[::1]/x", "http://0.0.0.0/x"):
        r = client.post("/v1/webhooks", json={"url": private, "events": ["job.succeeded"]}, headers=key)
        assert r.status_code == 422 and r.json["type"] == "/problems/address-not-allowed", (private, r.json)
        assert r.json["field"] == "url"
    bad = client.post("/v1/webhooks", json={"url": "ftp://example.org/x", "events": ["job.succeeded"]}, headers=key)
    assert bad.status_code == 422 and bad.json["field"] == "url"
    wrong = client.post("/v1/webhooks", json={"url": "https://example.org/x", "events": ["job.done"]}, headers=key)
    assert wrong.status_code == 400 and wrong.json["field"].startswith("events")
    assert client.get("/v1/webhooks", headers=key).json == {"webhooks": []}


def test_multicast_and_addresses_embedding_private_ipv4_are_refused(stack):
    url, _, _ = stack
    client = create_app({"REDIS_URL": url}).test_client()  # the default: RICOCHET_WEBHOOKS_ALLOW_PRIVATE off
    key = issued_key(url)
    for host in ("224.0.0.1", "239.255.255.250", "[ff02::1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]",
                 "[::127.0.0.1]", "[::ffff:10.0.0.1]", "[2002:a9fe:a9fe::]"):
        r = client.post("/v1/webhooks", json={"url": f"http://{host}/hook", "events": ["job.succeeded"]}, headers=key)
        assert r.status_code == 422 and r.json["type"] == "/problems/address-not-allowed", (host, r.json)
        assert r.json["field"] == "url" and f"resolves to {host.strip('[]')}," in r.json["detail"], r.json
    assert client.get("/v1/webhooks", headers=key).json == {"webhooks": []}


def test_urls_no_delivery_could_send_are_refused_at_registration(stack):
    url, client, receiver = stack  # private receivers allowed: these are refused all the same
    key = issued_key(url)
    for bad in (f"{receiver.base}/ok\r\nX-Injected: 1", f"{receiver.base}/o k", f"{receiver.base}/ok\x00",
                f"{receiver.base}/\x7f", f"{receiver.base}/\x85", f"{receiver.base}/caf\u00e9", "http://ex\tample.org/"):
        r = client.post("/v1/webhooks", json={"url": bad, "events": ["job.succeeded"]}, headers=key)
        assert r.status_code == 422 and r.json["field"] == "url", (bad, r.json)
        assert "control characters" in r.json["detail"], (bad, r.json)
    for port in ("99999", "0", "x"):
        r = client.post("/v1/webhooks", json={"url": f"http://127.0.0.1:{port}/ok", "events": ["job.succeeded"]},
                        headers=key)
        assert r.status_code == 422 and "port is a number from 1 to 65535" in r.json["detail"], (port, r.json)
    assert client.get("/v1/webhooks", headers=key).json == {"webhooks": []}


def test_one_url_is_registered_once_per_key(stack):
    """Two registrations of one URL would deliver each event to it twice: the second is 409,
    naming the first; another key may register the same URL."""
    url, client, receiver = stack
    key, other = issued_key(url), issued_key(url)
    hook = {"url": f"{receiver.base}/ok", "events": ["job.succeeded"]}
    first = client.post("/v1/webhooks", json=hook, headers=key)
    assert first.status_code == 201, first.json
    again = client.post("/v1/webhooks", json={**hook, "events": ["job.failed"]}, headers=key)
    assert again.status_code == 409 and first.json["id"] in again.json["detail"], again.json
    assert client.post("/v1/webhooks", json=hook, headers=other).status_code == 201
    assert [h["id"] for h in client.get("/v1/webhooks", headers=key).json["webhooks"]] == [first.json["id"]]
    assert client.delete(f"/v1/webhooks/{first.json['id']}", headers=key).status_code == 204
    assert client.post("/v1/webhooks", json={**hook, "events": ["job.failed"]}, headers=key).status_code == 201


def test_one_url_registered_at_once_from_many_clients_is_registered_once(stack):
    """Eight registrations of one URL under one key at the same moment: one 201, seven
    409 naming it (each had read the key's list before any was written)."""
    from concurrent.futures import ThreadPoolExecutor

    url, _, receiver = stack
    key = issued_key(url)
    # The apps made here: Python 3.11's compile() is not thread-safe, and Flask compiles each route.
    clients = [create_app({"REDIS_URL": url, "WEBHOOKS_ALLOW_PRIVATE": True}).test_client() for _ in range(8)]
    gate = threading.Barrier(8, timeout=30)
    hook = {"url": f"{receiver.base}/at-once", "events": ["job.succeeded"]}

    def post(client):
        gate.wait()
        return client.post("/v1/webhooks", json=hook, headers=key)

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(post, clients))
    made = [a.json["id"] for a in answers if a.status_code == 201]
    assert len(made) == 1 and sorted(a.status_code for a in answers) == [201] + [409] * 7, [a.json for a in answers]
    assert all(made[0] in a.json["detail"] for a in answers if a.status_code == 409)
    assert [h["id"] for h in clients[0].get("/v1/webhooks", headers=key).json["webhooks"]] == made


def test_redirects_are_not_followed_and_a_test_event_is_signed(stack):
    url, client, receiver = stack
    key = issued_key(url)
    moved = register(client, key, f"{receiver.base}/moved", ["job.failed"])
    sent = client.post(f"/v1/webhooks/{moved['id']}/test", headers=key)
    assert sent.status_code == 202 and sent.json["type"] == "webhook.test" and sent.json["state"] == "pending"

    def attempted():
        found = client.get(f"/v1/webhooks/{moved['id']}/deliveries", headers=key).json["deliveries"]
        return found[0]["attempts"] if found and found[0]["attempts"] else None

    attempts = wait_until(attempted, 30)
    assert attempts[0]["status"] == 302 and "redirects are not followed" in attempts[0]["error"]
    assert client.delete(f"/v1/webhooks/{moved['id']}", headers=key).status_code == 204
    assert client.delete(f"/v1/webhooks/{moved['id']}", headers=key).status_code == 404
    assert not any(g["headers"]["webhook-id"] == sent.json["id"] for g in receiver.on("/ok"))
    hook = register(client, key, f"{receiver.base}/ok", ["day.published"])
    probe = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key).json
    got = wait_until(lambda: [g for g in receiver.on("/ok") if g["headers"]["webhook-id"] == probe["id"]], 30)
    assert Webhook(hook["secret"]).verify(got[0]["body"], got[0]["headers"])["type"] == "webhook.test"


def test_a_worker_killed_and_redis_restarted_mid_delivery_lose_nothing(tmp_path):
    """...and today's puzzle is announced once, as the first worker starts, to the webhooks there then."""
    redis = EmbeddedRedis(tmp_path / "redis", persist=True).start()
    receiver = Receiver()
    client = create_app({"REDIS_URL": redis.url, "WEBHOOKS_ALLOW_PRIVATE": True}).test_client()
    key = issued_key(redis.url)
    hook = register(client, key, f"{receiver.base}/hold", ["job.failed"])
    days = register(client, key, f"{receiver.base}/ok", ["day.published"])
    worker = start_worker(redis.url, tmp_path / "worker.log", beat=tmp_path)
    try:
        held = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key)
        assert held.status_code == 202 and receiver.arrived.wait(30)
        stop(worker, signal.SIGKILL)  # mid-delivery: the receiver holds the request
        receiver.release.set()
        probe = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key)  # queued while no worker runs
        assert probe.status_code == 202
        redis.stop()
        redis.start()  # the same port, password and files
        worker = start_worker(redis.url, tmp_path / "worker.log", beat=tmp_path)

        def settled():
            found = client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=key).json["deliveries"]
            return found if len(found) == 2 and all(d["state"] == "succeeded" for d in found) else None

        deliveries = wait_until(settled, 90)
        assert deliveries, client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=key).json
        time.sleep(1.0)
        got = receiver.on("/hold")
        ids = [g["headers"]["webhook-id"] for g in got]
        assert set(ids) == {d["id"] for d in deliveries} == {held.json["id"], probe.json["id"]}  # none lost
        assert ids.count(probe.json["id"]) == 1 and ids.count(held.json["id"]) == 2  # cut, then sent again
        assert len({g["body"] for g in got if g["headers"]["webhook-id"] == held.json["id"]}) == 1
        for g in got:
            Webhook(hook["secret"]).verify(g["body"], g["headers"])
        announced = receiver.on("/ok")  # the beat swept every 5 s meanwhile, and the new worker once more
        assert len(announced) == 1, announced
        event = Webhook(days["secret"]).verify(announced[0]["body"], announced[0]["headers"])
        today = client.get("/v1/daily").json
        assert event["type"] == "day.published" and event["data"]["code"] == today["code"]
        assert event["data"]["number"] == today["number"] and event["data"]["url"] == f"/v1/daily/{today['date']}"
    finally:
        receiver.close()
        stop(worker)
        redis.stop()


def test_solve_jobs_send_succeeded_and_failed(stack, sample_puzzles, quadrant_test_puzzles):
    url, _, receiver = stack
    key = issued_key(url)
    # A solve the worker ends within its 30 s, and one past its 0.05 s (the longest sample took more than
    # 0.05 s once on a loaded machine: its job then failed too).
    clients = [create_app({"REDIS_URL": url, "WEBHOOKS_ALLOW_PRIVATE": True, "SOLVE_TIME_BUDGET": 0.001,
                           "JOB_TIME_BUDGET": budget}).test_client() for budget in (30.0, 0.05)]
    client = clients[1]
    hook = register(client, key, f"{receiver.base}/ok", ["job.succeeded", "job.failed"])
    longest = max(sample_puzzles, key=lambda r: r["optimal_length"])
    hard = quadrant_test_puzzles[0]
    ends = {}
    for client, row in zip(clients, (longest, hard)):
        puzzle = {k: row[k] for k in ("board", "robots", "target", "rules") if k in row}
        queued = client.post("/v1/solve", json=puzzle, headers=key)
        assert queued.status_code == 202, queued.json
        ends[queued.json["id"]] = wait_for_job(client, queued.headers["Location"], 120)
    for job_id, job in ends.items():
        got = wait_until(lambda j=job_id: [g for g in receiver.on("/ok") if j in g["body"]], 30)
        event = Webhook(hook["secret"]).verify(got[0]["body"], got[0]["headers"])
        assert event["type"] == f"job.{job['state']}" and event["data"]["kind"] == "solve", event
        assert event["data"]["status"] == job["result"]["status"]
        assert event["data"]["optimal_length"] == (job["result"]["length"] if job["state"] == "succeeded" else None)
    assert sorted(j["state"] for j in ends.values()) == ["failed", "succeeded"]
    succeeded = next(j for j in ends.values() if j["state"] == "succeeded")
    assert succeeded["result"]["length"] == longest["optimal_length"]
