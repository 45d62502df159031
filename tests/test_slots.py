"""Event streams and exports are limited per client over every web process
(service.limits.hold, workers/stores/slots.py), not only per process: two apps
on one Redis stand for two web processes; one client that holds its share is
refused 429 with Retry-After in the other too, while another client still gets
in; a place is given back when its answer ends, and lapses if never given back."""

from __future__ import annotations

import time

from service.app import create_app
from workers.stores import Stores

ANN, BOB = {"REMOTE_ADDR": "10.1.0.1"}, {"REMOTE_ADDR": "10.1.0.2"}


def _apps(redis_url: str):
    config = {"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False, "GAME_SSE_SECONDS": 30.0, "GAME_STREAMS": 64,
              "EXPORT_LINES": 3}
    return create_app(config).test_client(), create_app(config).test_client()


def test_one_client_cannot_take_every_event_stream(redis_url):
    one, other = _apps(redis_url)
    r = one.post("/v1/games", json={"players": ["ann", "bob"]})
    assert r.status_code == 201, r.json
    events = f"/v1/games/{r.json['game']['id']}/events"
    most = one.application.config.get("STREAMS_PER_CLIENT", 4)
    held = []
    try:
        for i in range(most):  # in both processes: the count is the client's, not a process's
            r = (one if i % 2 else other).get(events, buffered=False, environ_base=ANN)
            assert r.status_code == 200, r.json
            next(r.response)  # the stream has started and holds its place
            held.append(r)
        refused = other.get(events, environ_base=ANN)
        assert refused.status_code == 429 and refused.json["type"] == "/problems/rate-limited"
        assert 1 <= int(refused.headers["Retry-After"]) <= 30 and "at once" in refused.json["detail"]
        r = other.get(events, buffered=False, environ_base=BOB)  # another client still gets one
        assert r.status_code == 200 and r.mimetype == "text/event-stream"
        next(r.response)
        r.close()
        held.pop().close()  # a stream that ends gives its place back
        r = one.get(events, buffered=False, environ_base=ANN)
        assert r.status_code == 200
        held.append(r)
    finally:
        for r in reversed(held):  # each stream keeps its request's context pushed: closed last-opened first
            r.close()
    assert Stores.from_url(redis_url).slots.held("stream", "addr:10.1.0.1") == 0


def test_one_client_runs_one_export_at_a_time(redis_url):
    one, other = _apps(redis_url)
    first = one.get("/v1/puzzles/export?format=ndjson", buffered=False, environ_base=ANN)
    assert first.status_code == 200
    next(first.response)
    try:
        refused = other.get("/v1/puzzles/export?format=ndjson", environ_base=ANN)  # another process: still ann's
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        r = other.get("/v1/puzzles/export?format=ndjson", environ_base=BOB)
        assert r.status_code == 200 and len(r.get_data().splitlines()) == 3
    finally:
        first.close()
    r = other.get("/v1/puzzles/export?format=ndjson", environ_base=ANN)
    assert r.status_code == 200, r.json


def test_the_deployment_runs_two_exports_at_once(redis_url):
    """Each export walks every pool (a CPU, and about 85 MiB more of its web
    process: docs/operations.md): two at once over every process, whoever asks;
    a third client is told 503 with Retry-After, even by a process with none."""
    apps = [*_apps(redis_url), *_apps(redis_url)]
    running = []
    try:
        for app, who in ((apps[0], ANN), (apps[1], BOB)):
            r = app.get("/v1/puzzles/export?format=csv", buffered=False, environ_base=who)
            assert r.status_code == 200
            next(r.response)
            running.append(r)
        third = apps[2].get("/v1/puzzles/export?format=csv", environ_base={"REMOTE_ADDR": "10.1.0.3"})
        assert third.status_code == 503 and int(third.headers["Retry-After"]) >= 1, third.status_code
        assert "in this deployment" in third.json["detail"]
    finally:
        for r in running:
            r.close()
    assert apps[2].get("/v1/puzzles/export?format=csv", environ_base={"REMOTE_ADDR": "10.1.0.3"}).status_code == 200


def test_a_place_never_given_back_lapses(redis_url):
    """A process that died holding a place: it lapses at its deadline, and the
    client's key goes with its last place."""
    slots = Stores.from_url(redis_url).slots
    assert slots.take("test", "addr:lapse", 1, 0.5)[0] is not None
    place, wait = slots.take("test", "addr:lapse", 1, 0.5)
    assert place is None and 0 < wait <= 0.5
    time.sleep(0.6)
    assert slots.take("test", "addr:lapse", 1, 0.5)[0] is not None
    assert 0 < slots.redis.ttl("ricochet:slots:test:addr:lapse") <= 1
