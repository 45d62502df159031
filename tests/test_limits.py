"""Limits a client can rely on: rate limits (429 + Retry-After), body size (413)."""

from __future__ import annotations

import uuid

from service.app import create_app
from tests.helpers import issued_key


def test_rate_limit_answers_429_problem_with_retry_after():
    client = create_app({"TESTING": True, "RATE_LIMIT_DEFAULT": "3 per minute"}).test_client()
    assert [client.get("/v1/boards").status_code for _ in range(3)] == [200, 200, 200]
    r = client.get("/v1/boards")
    assert r.status_code == 429 and r.mimetype == "application/problem+json"
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    assert "3 per 1 minute" in r.json["detail"] and r.json["limit"] == "3 per 1 minute"
    # Another route has its own counter; health and documentation are never limited.
    assert client.get("/v1/daily/2026-01-01").status_code == 200
    assert all(client.get("/healthz").status_code == 200 for _ in range(10))
    assert client.get("/openapi.yaml").status_code == 200


def test_searching_routes_have_the_tighter_limit():
    client = create_app({"TESTING": True, "RATE_LIMIT_SEARCH": "2 per minute"}).test_client()
    body = {"code": "AQ2VAA8uIr0PAAk"}
    assert [client.post("/v1/solve", json=body).status_code for _ in range(3)] == [200, 200, 429]
    assert client.post("/v1/verify", json={"puzzle": body, "moves": []}).status_code == 200


def test_limits_are_counted_in_redis_across_api_processes(redis_url):
    # Two app instances stand for two API processes sharing one Redis.
    prefix = uuid.uuid4().hex  # a client address of its own, so other tests' counts do not matter
    config = {"TESTING": True, "REDIS_URL": redis_url, "RATE_LIMIT_DEFAULT": "4 per minute"}
    first, second = create_app(config).test_client(), create_app(config).test_client()
    env = {"REMOTE_ADDR": f"10.{int(prefix[:2], 16)}.{int(prefix[2:4], 16)}.{int(prefix[4:6], 16)}"}
    codes = [c.get("/v1/boards", environ_base=env).status_code for c in (first, second, first, second, first)]
    assert codes == [200, 200, 200, 200, 429]


def test_limits_can_be_turned_off():
    client = create_app({"TESTING": True, "RATE_LIMIT_DEFAULT": "1 per minute",
                         "RATE_LIMITS_ENABLED": False}).test_client()
    assert all(client.get("/v1/boards").status_code == 200 for _ in range(5))


def test_oversized_body_is_413_problem():
    client = create_app({"TESTING": True}).test_client()
    r = client.post("/v1/solve", data=b"{" + b" " * (2 << 20) + b"}", content_type="application/json")
    assert r.status_code == 413 and r.mimetype == "application/problem+json"
    assert "larger than the limit of 1024 KiB (1 MiB)" in r.json["detail"]


def test_only_issued_keys_are_clients(redis_url, tmp_path):
    """`ricochet keys create` issues a key (printed once, stored hashed); it is
    its own client.  Invented keys are all 401, so they are no way around an
    address's limits; a revoked key is refused too."""
    import os
    import subprocess
    import sys

    from workers.stores import Stores

    env = {**os.environ, "REDIS_URL": redis_url}
    ricochet = [sys.executable, "-m", "service.cli"]
    made = subprocess.run([*ricochet, "keys", "create", "limits-test", "--quota-pack", "70"], env=env,
                          capture_output=True, text=True, check=True)
    key = made.stdout.strip()
    assert key.startswith("rr_") and "shown only now" in made.stderr
    assert key not in str(Stores.from_url(redis_url).redis.keys("*"))  # only its hash is kept
    listed = subprocess.run([*ricochet, "keys", "list"], env=env, capture_output=True, text=True, check=True)
    assert '"name": "limits-test"' in listed.stdout and '"pack": 70' in listed.stdout and key not in listed.stdout
    client = create_app({"REDIS_URL": redis_url, "RATE_LIMIT_DEFAULT": "5 per minute"}).test_client()
    assert client.get("/v1/boards", headers={"X-API-Key": key}).status_code == 200
    invented = [client.get("/v1/boards", headers={"X-API-Key": f"made-up-{i}"}) for i in range(1300)]
    assert all(r.status_code == 401 and r.json["field"] == "X-API-Key" for r in invented)
    assert [client.get("/v1/boards").status_code for _ in range(6)][-1] == 429  # the address's own limit holds
    subprocess.run([*ricochet, "keys", "revoke", "limits-test"], env=env, check=True, capture_output=True)
    from service import limits

    limits._known.clear()  # what KEY_CACHE_SECONDS does in time: the record is looked up again
    assert client.get("/v1/boards", headers={"X-API-Key": key}).status_code == 401


def test_a_detail_repeats_at_most_64_characters_of_an_id(redis_url):
    client = create_app({"TESTING": True, "REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()
    long = "x" * 3000
    for path, key in ((f"/v1/jobs/{long}", {}), (f"/v1/packs/{long}", {}), (f"/v1/rooms/{long}", {}),
                      (f"/v1/games/{long}", {}), (f"/v1/players/{long}", {}), (f"/problems/{long}", {}),
                      (f"/v1/webhooks/{long}/deliveries", issued_key(redis_url))):
        r = client.get(path, headers=key)
        assert 400 <= r.status_code < 500 and r.mimetype == "application/problem+json", (path[:30], r.status_code)
        assert "x" * 65 not in r.text and len(r.json["detail"]) < 300, (path[:30], r.json["detail"][:200])
    r = client.get("/oembed", query_string={"url": f"http://localhost/{long}"})
    assert r.status_code == 404 and r.json["detail"].startswith("http://localhost/xxx") and "x…" in r.json["detail"]
    assert len(r.json["detail"]) < 200, r.json["detail"]
