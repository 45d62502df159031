"""Webhooks: Standard Webhooks signatures checked by the `standardwebhooks`
package, retries under one webhook-id, a worker killed and Redis restarted
mid-delivery, private addresses refused, redirects not followed, days announced.

These tests run their own Redis and worker: the worker needs the webhook
settings (private receivers allowed, short retries)."""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from service.app import create_app
from tests.helpers import issued_key, wait_for_job
from workers.app import make_celery
from workers.embedded import EmbeddedRedis
from workers.webhooks import EVENTS, JITTER, RETRY_AFTER_MOST, Policy, due, next_attempt, public, retry_after, schedule

ENV = {"RICOCHET_WEBHOOKS_ALLOW_PRIVATE": "on", "RICOCHET_WEBHOOKS_RETRY": "0.2", "RICOCHET_WEBHOOKS_ATTEMPTS": "5",
       "RICOCHET_WEBHOOKS_TIMEOUT": "3", "RICOCHET_WEBHOOKS_DISABLE_AFTER": "8"}
PACK = {"count": 3, "min_length": 8, "max_length": 10, "seed": "hooks"}  # the starter pools hold them: no search


def start_worker(url: str, log: Path, beat: Path | None = None) -> list[subprocess.Popen]:
    """The worker for solves and packs, and the webhooks queue's own (with the beat embedded, given a
    folder for its schedule), both with the webhook settings: started when both answer a ping."""
    from service.cli.worker import webhook_command
    from workers.app import make_celery

    tag = uuid.uuid4().hex[:8]
    main = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--loglevel", "warning",
            "--concurrency", "1", "--without-gossip", "--without-mingle", "--queues", "ricochet,packs",
            "--hostname", f"main-{tag}@%h"]
    hooks = webhook_command(f"webhooks-{tag}@%h")
    if beat is not None:
        hooks += ["--beat", "--schedule", str(beat / "beat-schedule")]
    procs = []
    with log.open("ab") as out:
        for args in (main, hooks):
            procs.append(subprocess.Popen(args, env={**os.environ, "REDIS_URL": url, **ENV}, stdout=out,
                                          stderr=subprocess.STDOUT, start_new_session=True))
    app, deadline = make_celery(url), time.monotonic() + 60
    while True:
        try:
            if len(app.control.ping(timeout=0.5)) >= 2:
                return procs
        except Exception:  # the broker just restarted: ask again
            pass
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            stop(procs, signal.SIGKILL)
            raise AssertionError(f"the workers did not start: {log.read_text()[-2000:]}")


def stop(procs: list[subprocess.Popen], sig: int = signal.SIGTERM) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Receiver:
    """An HTTP receiver on 127.0.0.1 that records what it is sent.  Paths:
    /ok... answers 200; /flaky 500 three times, then 200; /hold keeps its first
    request until `release` is set, then 200; /moved answers 302 to /ok; /gone
    410; /busy 503 with Retry-After: 30; /later 429 with Retry-After two hours
    on, as an HTTP date; /down... 500.  `arrived` is set once /hold is asked."""

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
                base = path.split("?")[0]  # a query tells endpoints apart; the path says what to answer
                status = {"/gone": 410, "/busy": 503, "/later": 429, "/moved": 302}.get(base, 200)
                if path == "/flaky" and earlier < 3 or base == "/down":
                    status = 500
                elif path == "/hold" and earlier == 0:
                    receiver.release.wait(30)
                self.send_response(status)
                if status == 302:
                    self.send_header("Location", "/ok")
                if base == "/busy":
                    self.send_header("Retry-After", "30")
                if base == "/later":
                    self.send_header("Retry-After", email.utils.formatdate(time.time() + 7200, usegmt=True))
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
        workers = start_worker(redis.url, folder / "worker.log")
        receiver = Receiver()
        client = create_app({"REDIS_URL": redis.url, "WEBHOOKS_ALLOW_PRIVATE": True}).test_client()
        try:
            yield redis.url, client, receiver
        finally:
            receiver.close()
            stop(workers)


def register(client, key: dict, url: str, events: list[str]) -> dict:
    r = client.post("/v1/webhooks", json={"url": url, "events": events}, headers=key)
    assert r.status_code == 201, r.json
    assert r.json["secret"].startswith("whsec_") and r.headers["Location"] == f"/v1/webhooks/{r.json['id']}"
    return r.json


def settled(client, hook_id: str, key: dict) -> list | None:
    """A hook's deliveries once the first is no longer pending (its attempt written down), else None."""
    found = client.get(f"/v1/webhooks/{hook_id}/deliveries", headers=key).json["deliveries"]
    return found if found and found[0]["state"] != "pending" else None


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
    # The receiver heard it before the worker had its answer and wrote the attempt down: a moment later.
    deliveries = wait_until(lambda: settled(client, hook["id"], key), 10)
    assert deliveries and len(deliveries) == 1 and deliveries[0]["state"] == "succeeded", deliveries
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

    deliveries = wait_until(lambda: settled(client, hook["id"], key), 60)
    assert deliveries and len(deliveries) == 1 and deliveries[0]["state"] == "succeeded"
    attempts = deliveries[0]["attempts"]
    assert [a["status"] for a in attempts] == [500, 500, 500, 200]
    assert attempts[0]["error"] == "HTTP 500" and attempts[-1]["error"] is None
    # On the documented schedule from the first attempt (0.2 s, then each wait 4 times the last: 0, 0.2, 1.0,
    # 4.2 s), each within 10% of the wait before it; late only by what the worker and the broker take.
    offsets = [a["at"] - attempts[0]["at"] for a in attempts]
    for k, (offset, planned) in enumerate(zip(offsets, schedule(Policy(retry=0.2, attempts=5)))):
        wait = 0.2 * 4 ** (k - 1) if k else 0.0
        assert planned - JITTER * wait - 0.01 <= offset <= planned + JITTER * wait + 1.5, (k, offsets)
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
                 "[::127.0.0.1]", "[::ffff:10.0.0.1]", "[2002:a9fe:a9fe::]",
                 # loopback IPv4-mapped and -translated, and behind NAT64's well-known and local-use prefixes
                 "[::ffff:127.0.0.1]", "[::ffff:0:7f00:1]", "[64:ff9b:1::7f00:1]", "[64:ff9b:1:7f00:1::]",
                 "[::ffff:0:a00:1]"):
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
    workers = start_worker(redis.url, tmp_path / "worker.log", beat=tmp_path)
    try:
        held = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key)
        assert held.status_code == 202 and receiver.arrived.wait(30)
        stop(workers, signal.SIGKILL)  # mid-delivery: the receiver holds the request
        receiver.release.set()
        probe = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key)  # queued while no worker runs
        assert probe.status_code == 202
        redis.stop()
        redis.start()  # the same port, password and files
        workers = start_worker(redis.url, tmp_path / "worker.log", beat=tmp_path)

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
        stop(workers)
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


# -- the schedule, Retry-After and addresses as pure functions ---------------------------------


def test_the_retry_schedule_is_the_documented_one_with_bounded_jitter():
    policy = Policy()  # the defaults: 5 s, 9 attempts
    assert schedule(policy)[:5] == [0, 5, 25, 105, 425]  # docs/webhooks.md: 0, 5 s, 25 s, 105 s, 7 min ...
    assert 29 * 3600 < schedule(policy)[-1] < 31 * 3600  # the ninth at about 30 h
    first = 1_000_000.0
    for made, planned in enumerate(schedule(policy)[1:], start=1):
        wait = 5 * 4 ** (made - 1)
        assert due(policy, first, made) == first + planned
        assert due(policy, first, made, -1.0) == pytest.approx(first + planned - wait / 10)
        assert due(policy, first, made, 1.0) == pytest.approx(first + planned + wait / 10)
        assert due(policy, first, made, 7.0) == due(policy, first, made, 1.0)  # jitter is bounded
    assert due(policy, first, 9) is None and next_attempt(policy, first, 9, first + 40) is None
    # Late attempts do not push the schedule: the third is due at 25 s whenever the second ended.
    assert next_attempt(policy, first, 2, first + 12.0) == first + 25
    assert next_attempt(policy, first, 2, first + 30.0) == first + 30  # never before the attempt ended
    assert next_attempt(policy, first, 1, first + 1.0, retry_after=30) == first + 31  # a receiver's Retry-After


def test_retry_after_is_read_as_seconds_or_a_date_within_an_hour():
    now = 1_800_000_000.0
    assert retry_after("30", now) == 30 and retry_after(" 0 ", now) == 0
    assert retry_after("999999", now) == RETRY_AFTER_MOST == 3600
    assert retry_after(email.utils.formatdate(now + 90, usegmt=True), now) == pytest.approx(90)
    assert retry_after(email.utils.formatdate(now - 90, usegmt=True), now) == 0  # past: now
    assert retry_after(email.utils.formatdate(now + 86400, usegmt=True), now) == 3600
    for nothing in (None, "", "soon", "-5", "1.5e3", "\u0663"):
        assert retry_after(nothing, now) is None, nothing


def test_loopback_and_private_addresses_in_ipv6_forms_are_not_public():
    for ip in ("::ffff:127.0.0.1", "::ffff:0:7f00:1", "64:ff9b::7f00:1", "64:ff9b:1::7f00:1", "64:ff9b:1::808:808",
               "::ffff:0:a00:1", "::127.0.0.1", "2002:7f00:1::", "::1"):
        assert not public(ip), ip
    for ip in ("8.8.8.8", "2606:4700:4700::1111", "64:ff9b::808:808", "::ffff:8.8.8.8"):
        assert public(ip), ip


# -- endpoints' lifecycle ---------------------------------------------------------------------


def deliveries_of(client, key: dict, hook: dict) -> list[dict]:
    r = client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=key)
    assert r.status_code == 200, r.json
    return r.json["deliveries"]


def listed(client, key: dict, hook: dict) -> dict:
    return next(h for h in client.get("/v1/webhooks", headers=key).json["webhooks"] if h["id"] == hook["id"])


def test_a_410_disables_the_endpoint_after_one_attempt_and_tells_the_keys_others(stack):
    url, client, receiver = stack
    key = issued_key(url)
    gone = register(client, key, f"{receiver.base}/gone", ["job.succeeded"])
    other = register(client, key, f"{receiver.base}/ok?others", ["day.published"])  # told whatever its events
    assert listed(client, key, gone)["enabled"] is True and listed(client, key, gone)["disabled"] is None
    sent = client.post(f"/v1/webhooks/{gone['id']}/test", headers=key).json

    def failed():
        found = deliveries_of(client, key, gone)
        return found if found and found[0]["state"] == "failed" else None

    delivery = wait_until(failed, 30)
    assert delivery and delivery[0]["id"] == sent["id"], deliveries_of(client, key, gone)
    assert [a["status"] for a in delivery[0]["attempts"]] == [410] and delivery[0]["next_attempt"] is None
    shown = listed(client, key, gone)
    assert shown["enabled"] is False and "410" in shown["disabled"]["reason"], shown
    told = wait_until(lambda: [g for g in receiver.on("/ok?others")
                               if '"webhook.disabled"' in g["body"] and gone["id"] in g["body"]], 30)
    event = Webhook(other["secret"]).verify(told[0]["body"], told[0]["headers"])
    assert event["type"] == "webhook.disabled" and event["data"]["webhook"] == gone["id"]
    assert event["data"]["url"] == gone["url"] and "410" in event["data"]["reason"]
    time.sleep(1.0)
    assert len(receiver.on("/gone")) == 1  # one attempt, no retry
    # Disabled: nothing more is sent, a test is refused until it is enabled again.
    refused = client.post(f"/v1/webhooks/{gone['id']}/test", headers=key)
    assert refused.status_code == 409 and "enabled" in refused.json["detail"], refused.json
    enabled = client.patch(f"/v1/webhooks/{gone['id']}", json={"enabled": True}, headers=key)
    assert enabled.status_code == 200 and enabled.json["enabled"] is True and enabled.json["disabled"] is None
    assert client.post(f"/v1/webhooks/{gone['id']}/test", headers=key).status_code == 202


def test_a_receivers_retry_after_delays_the_next_attempt(stack):
    url, client, receiver = stack
    key = issued_key(url)
    for path, least, most in (("/busy", 30, 31.5), ("/later", 3600, 3601.5)):  # 503 + 30 s; 429 + a date 2 h on
        hook = register(client, key, f"{receiver.base}{path}", ["job.failed"])
        client.post(f"/v1/webhooks/{hook['id']}/test", headers=key)

        def attempted(hook=hook):
            found = deliveries_of(client, key, hook)
            return found[0] if found and found[0]["attempts"] else None

        delivery = wait_until(attempted, 30)
        first = delivery["attempts"][0]
        assert delivery["state"] == "pending" and first["retry_after"] == pytest.approx(least, abs=1), delivery
        # The next attempt is scheduled no sooner than the receiver asked (a schedule of 0.2 s otherwise),
        # and an HTTP date two hours on is held to an hour.
        assert least <= delivery["next_attempt"] - first["at"] <= most, delivery
        assert f"Retry-After {first['retry_after']:g} s" in first["error"]
    time.sleep(1.5)
    assert len(receiver.on("/busy")) == 1 and len(receiver.on("/later")) == 1  # not before


def test_failing_without_a_success_for_the_set_time_disables_the_endpoint(stack):
    url, client, receiver = stack  # RICOCHET_WEBHOOKS_DISABLE_AFTER=8 for these workers
    key = issued_key(url)
    down = register(client, key, f"{receiver.base}/down", ["job.failed"])
    other = register(client, key, f"{receiver.base}/ok?down-others", ["job.succeeded"])
    client.post(f"/v1/webhooks/{down['id']}/test", headers=key)
    assert wait_until(lambda: listed(client, key, down)["failing_since"], 30)
    assert listed(client, key, down)["enabled"] is True  # failing for less than 8 s: kept
    time.sleep(8.5 - (time.time() - listed(client, key, down)["failing_since"]))
    client.post(f"/v1/webhooks/{down['id']}/test", headers=key)  # fails again, 8 s after the first failure
    shown = wait_until(lambda: (lambda h: h if not h["enabled"] else None)(listed(client, key, down)), 30)
    assert shown and "no attempt succeeded for 8 s" in shown["disabled"]["reason"], listed(client, key, down)
    told = wait_until(lambda: [g for g in receiver.on("/ok?down-others") if '"webhook.disabled"' in g["body"]], 30)
    event = Webhook(other["secret"]).verify(told[0]["body"], told[0]["headers"])
    assert event["data"]["webhook"] == down["id"] and event["data"]["failing_since"], event
    # A success resets the count: enabled again, the endpoint starts afresh.
    enabled = client.patch(f"/v1/webhooks/{down['id']}", json={"enabled": True}, headers=key).json
    assert enabled["enabled"] and enabled["failing_since"] is None


def test_a_rotated_secret_signs_beside_the_new_one_during_the_overlap(stack):
    url, client, receiver = stack
    key = issued_key(url)
    hook = register(client, key, f"{receiver.base}/ok?rotated", ["job.succeeded"])
    rotated = client.post(f"/v1/webhooks/{hook['id']}/rotate", headers=key)
    assert rotated.status_code == 200, rotated.json
    assert rotated.json["secret"].startswith("whsec_") and rotated.json["secret"] != hook["secret"]
    assert 23.9 * 3600 < rotated.json["previous_secret_expires"] - time.time() <= 24 * 3600
    assert listed(client, key, hook)["previous_secret_expires"] == rotated.json["previous_secret_expires"]
    assert "secret" not in listed(client, key, hook)
    probe = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key).json
    got = wait_until(lambda: [g for g in receiver.on("/ok?rotated") if g["headers"]["webhook-id"] == probe["id"]], 30)
    signatures = got[0]["headers"]["webhook-signature"].split(" ")
    assert len(signatures) == 2 and all(s.startswith("v1,") for s in signatures)
    for secret in (hook["secret"], rotated.json["secret"]):  # either secret verifies it
        assert Webhook(secret).verify(got[0]["body"], got[0]["headers"])["type"] == "webhook.test"
    with pytest.raises(WebhookVerificationError):
        Webhook(register(client, key, f"{receiver.base}/ok?stranger", ["job.failed"])["secret"]).verify(
            got[0]["body"], got[0]["headers"])
    assert client.post("/v1/webhooks/wh_none/rotate", headers=key).status_code == 404


def test_a_settled_delivery_is_replayed_once_under_its_id(stack):
    url, client, receiver = stack
    key = issued_key(url)
    hook = register(client, key, f"{receiver.base}/ok?replay", ["job.succeeded"])
    probe = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key).json
    retry = f"/v1/webhooks/{hook['id']}/deliveries/{probe['id']}/retry"
    assert wait_until(lambda: deliveries_of(client, key, hook)[0]["state"] == "succeeded", 30)
    replayed = client.post(retry, headers=key)
    assert replayed.status_code == 202 and replayed.json["id"] == probe["id"], replayed.json
    got = wait_until(lambda: (lambda g: g if len(g) == 2 else None)(receiver.on("/ok?replay")), 30)
    assert got and {g["headers"]["webhook-id"] for g in got} == {probe["id"]} and got[0]["body"] == got[1]["body"]
    Webhook(hook["secret"]).verify(got[1]["body"], got[1]["headers"])
    assert wait_until(lambda: deliveries_of(client, key, hook)[0]["state"] == "succeeded", 30)
    assert [a["status"] for a in deliveries_of(client, key, hook)[0]["attempts"]] == [200, 200]
    assert client.post(f"/v1/webhooks/{hook['id']}/deliveries/msg_none/retry", headers=key).status_code == 404
    assert client.post(retry, headers=issued_key(url)).status_code == 404  # another key's
    busy = register(client, key, f"{receiver.base}/busy?replay", ["job.succeeded"])  # pending for 30 s
    pending = client.post(f"/v1/webhooks/{busy['id']}/test", headers=key).json
    again = client.post(f"/v1/webhooks/{busy['id']}/deliveries/{pending['id']}/retry", headers=key)
    assert again.status_code == 409 and "pending" in again.json["detail"], again.json


def test_a_delivery_held_by_another_attempt_is_looked_at_again_shortly(stack):
    """A replay asked for the moment its delivery settled meets the settling attempt's
    lease: its task comes back within seconds instead of leaving it to the beat's sweep
    (the replay test above was lost that way once, on a loaded machine)."""
    from workers.stores import Stores
    from workers.webhooks import LOOK_AGAIN, attempt

    url, client, receiver = stack
    key = issued_key(url)
    hook = register(client, key, f"{receiver.base}/ok?held", ["job.succeeded"])
    probe = client.post(f"/v1/webhooks/{hook['id']}/test", headers=key).json
    assert wait_until(lambda: deliveries_of(client, key, hook)[0]["state"] == "succeeded", 30)
    store, policy = Stores.from_url(url).webhooks, Policy(allow_private=True)
    assert store.lease(hook["id"], probe["id"], 30)  # an attempt that has settled it and not yet let go
    store.replay(hook["id"], probe["id"], time.time())
    held = attempt(store, hook["id"], probe["id"], policy)
    assert held.wait is not None and 0 < held.wait <= LOOK_AGAIN and len(receiver.on("/ok?held")) == 1
    store.release(hook["id"], probe["id"])
    assert attempt(store, hook["id"], probe["id"], policy).wait is None  # a replay is one attempt
    assert len(receiver.on("/ok?held")) == 2


def test_patch_changes_the_url_and_events_and_checks_them(stack):
    url, client, receiver = stack
    key = issued_key(url)
    hook = register(client, key, f"{receiver.base}/ok?before", ["job.succeeded"])
    taken = register(client, key, f"{receiver.base}/ok?taken", ["job.succeeded"])
    path = f"/v1/webhooks/{hook['id']}"
    changed = client.patch(path, json={"url": f"{receiver.base}/ok?after", "events": ["day.published", "job.failed"]},
                           headers=key)
    assert changed.status_code == 200, changed.json
    assert changed.json["url"] == f"{receiver.base}/ok?after" and changed.json["events"] == ["day.published",
                                                                                           "job.failed"]
    assert listed(client, key, hook)["url"] == f"{receiver.base}/ok?after"
    probe = client.post(f"{path}/test", headers=key).json
    assert wait_until(lambda: [g for g in receiver.on("/ok?after") if g["headers"]["webhook-id"] == probe["id"]], 30)
    clash = client.patch(path, json={"url": taken["url"]}, headers=key)
    assert clash.status_code == 409 and taken["id"] in clash.json["detail"]
    for body, status, field in (({}, 400, "url"), ({"events": ["job.done"]}, 400, "events"),
                                ({"enabled": "yes"}, 400, "enabled"), ({"secret": "x"}, 400, "secret"),
                                ({"url": "http://10.0.0.1/x"}, 422, "url")):
        strict = create_app({"REDIS_URL": url}).test_client() if status == 422 else client
        r = strict.patch(path, json=body, headers=key)
        assert r.status_code == status and r.json["field"].startswith(field), (body, r.json)
    assert client.patch("/v1/webhooks/wh_none", json={"enabled": True}, headers=key).status_code == 404
    assert client.patch(path, json={"enabled": True}, headers=issued_key(url)).status_code == 404
    off = client.patch(path, json={"enabled": False}, headers=key).json
    assert off["enabled"] is False and "PATCH" in off["disabled"]["reason"]


def test_a_key_sends_at_most_5_tests_a_minute(stack):
    url, client, receiver = stack
    key = issued_key(url)
    hook = register(client, key, f"{receiver.base}/ok?tests", ["job.succeeded"])
    answers = [client.post(f"/v1/webhooks/{hook['id']}/test", headers=key) for _ in range(6)]
    assert [a.status_code for a in answers] == [202] * 5 + [429]
    refused = answers[-1]
    assert refused.json["type"] == "/problems/rate-limited" and "5 test events a minute" in refused.json["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert client.post(f"/v1/webhooks/{hook['id']}/test", headers=issued_key(url)).status_code == 404
    other = issued_key(url)  # another key's own count
    mine = register(client, other, f"{receiver.base}/ok?tests", ["job.succeeded"])
    assert client.post(f"/v1/webhooks/{mine['id']}/test", headers=other).status_code == 202


def test_the_contract_lists_every_event_with_its_data():
    from service.contract import build

    document = build()
    section = document["webhooks"]
    assert set(section) == {*EVENTS, "webhook.test", "webhook.disabled"}
    schemas = document["components"]["schemas"]
    for name, item in section.items():
        ref = item["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = schemas[ref.rsplit("/", 1)[1]]
        assert body["properties"]["type"]["enum"] == [name] and set(body["required"]) == {"type", "timestamp", "data"}
        data = body["properties"]["data"]
        assert "$ref" in data and schemas[data["$ref"].rsplit("/", 1)[1]]["properties"], name
    assert set(schemas["JobEventData"]["properties"]) >= {"id", "kind", "state", "job_url", "pack_url", "made"}
    assert set(schemas["DisabledEventData"]["required"]) >= {"webhook", "url", "reason", "disabled_at"}


# -- keys: revoked, and fair shares of the workers ---------------------------------------------------


def test_a_revoked_keys_endpoints_receive_nothing_afterwards(stack):
    """Revoked with `ricochet keys revoke`: its endpoints are disabled (a pending retry fails, a day's
    announcement skips them); a new key of the same name lists, enables and deletes them, and the
    operator lists and deletes them with `ricochet keys webhooks`."""
    from application import Context
    from application.webhooks import sweep
    from workers.stores import Stores

    url, client, receiver = stack
    stores = Stores.from_url(url)
    name = f"revoked-{uuid.uuid4().hex[:8]}"
    key = {"X-API-Key": stores.keys.create(name)[0]}
    busy = register(client, key, f"{receiver.base}/busy?revoked", ["job.failed"])  # retried in 30 s
    days = register(client, key, f"{receiver.base}/ok?revoked-days", ["day.published"])
    pending = client.post(f"/v1/webhooks/{busy['id']}/test", headers=key).json
    assert wait_until(lambda: deliveries_of(client, key, busy)[0]["attempts"], 30)
    ricochet = [str(Path(sys.executable).parent / "ricochet"), "keys"]
    env = {**os.environ, "REDIS_URL": url}
    revoked = subprocess.run([*ricochet, "revoke", name], env=env, capture_output=True, text=True, timeout=60)
    assert revoked.returncode == 0 and "2 webhook(s) disabled" in revoked.stderr, revoked.stderr
    after = time.time()
    # The pending retry, made due now, fails without a request; tomorrow's puzzle skips the days endpoint.
    stores.webhooks.reschedule(busy["id"], pending["id"], time.time())
    tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
    ctx = Context(stores=stores, pools=None, answers=None, send=make_celery(url).send)  # type: ignore[arg-type]
    sweep(ctx, tomorrow)
    failed = wait_until(lambda: stores.webhooks.delivery(busy["id"], pending["id"])["state"] == "failed", 30)
    assert failed, stores.webhooks.delivery(busy["id"], pending["id"])
    assert "revoked" in stores.webhooks.delivery(busy["id"], pending["id"])["attempts"][-1]["error"]
    assert not stores.webhooks.deliveries(days["id"])  # no day.published queued for it
    time.sleep(1.0)
    assert not [g for g in receiver.got if "revoked" in g["path"] and g["at"] > after]  # nothing afterwards

    again = {"X-API-Key": stores.keys.create(name)[0]}  # a new key of the same name: its owner again
    hooks = client.get("/v1/webhooks", headers=again).json["webhooks"]
    assert {h["id"] for h in hooks} == {busy["id"], days["id"]}
    assert all(not h["enabled"] and "revoked" in h["disabled"]["reason"] for h in hooks)
    assert client.patch(f"/v1/webhooks/{days['id']}", json={"enabled": True}, headers=again).json["enabled"]
    assert client.delete(f"/v1/webhooks/{days['id']}", headers=again).status_code == 204
    listing = subprocess.run([*ricochet, "webhooks", name], env=env, capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and [json.loads(line)["id"] for line in listing.stdout.splitlines()] == [busy["id"]]
    gone = subprocess.run([*ricochet, "webhooks", name, "--delete-all"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert gone.returncode == 0 and busy["id"] in gone.stderr
    assert client.get("/v1/webhooks", headers=again).json == {"webhooks": []}
    missing = subprocess.run([*ricochet, "webhooks", name, "--delete", "wh_none"], env=env, capture_output=True,
                             text=True, timeout=60)
    assert missing.returncode != 0 and "no webhook" in missing.stderr


class Silent:
    """A receiver that accepts connections and never answers (it holds them until closed)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.held: list[socket.socket] = []
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/never"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def test_30_webhook_tests_to_a_silent_receiver_do_not_delay_another_keys_pack_or_solve(stack, sample_puzzles):
    """Issue 67's flood: six keys send five tests each (the most a key may in a minute) to a receiver that
    never answers.  Deliveries run on the webhooks queue's own worker: another key's pack and queued solve
    take what they take alone, within a few seconds."""
    url, _, _ = stack
    client = create_app({"REDIS_URL": url, "WEBHOOKS_ALLOW_PRIVATE": True, "SOLVE_TIME_BUDGET": 0.001}).test_client()
    solved = max(sample_puzzles, key=lambda r: r["optimal_length"])  # test_solve_jobs_send_... solved it
    rows = [r for r in sample_puzzles if r is not solved]
    lengths = [r["optimal_length"] for r in rows]
    twins = [r for r in rows if r["optimal_length"] == max(n for n in lengths if lengths.count(n) > 1)]
    puzzles = iter({k: row[k] for k in ("board", "robots", "target", "rules") if k in row} for row in twins[:2])
    other = issued_key(url)

    def timed(seed: str) -> tuple[float, float]:  # a pack, then a queued solve (a puzzle not solved before)
        started = time.monotonic()
        pack = wait_for_job(client, client.post("/v1/packs", json={**PACK, "seed": seed},
                                                headers=other).headers["Location"], 120)
        packed = time.monotonic() - started
        started = time.monotonic()
        queued = client.post("/v1/solve", json=next(puzzles), headers=other)
        assert queued.status_code == 202, queued.json
        solved = wait_for_job(client, queued.headers["Location"], 120)
        assert pack["state"] == solved["state"] == "succeeded", (pack, solved)
        return packed, time.monotonic() - started

    silent = Silent()
    try:
        wait_for_job(client, client.post("/v1/packs", json={**PACK, "seed": "flood-warm"},  # the pools loaded
                                         headers=other).headers["Location"], 120)
        alone = timed("flood-alone")
        keys = [issued_key(url) for _ in range(6)]
        hooks = [(k, register(client, k, f"{silent.url}?{i}", ["job.failed"])) for i, k in enumerate(keys)]
        sent = [client.post(f"/v1/webhooks/{h['id']}/test", headers=k).status_code for k, h in hooks for _ in range(5)]
        assert sent == [202] * 30
        assert wait_until(lambda: silent.held, 30)  # the flood has reached the receiver
        flooded = timed("flood-during")
        assert any(d["state"] == "pending" for k, h in hooks for d in deliveries_of(client, k, h))  # still on
        print(f"alone: pack {alone[0]:.2f} s, solve {alone[1]:.2f} s; during 30 silent tests: pack "
              f"{flooded[0]:.2f} s, solve {flooded[1]:.2f} s")
        assert flooded[0] < alone[0] + 5 and flooded[1] < alone[1] + 5, (alone, flooded)
    finally:
        silent.close()
