"""Limits a client can rely on: rate limits (429 + Retry-After), said on every
answer (RateLimit, RateLimit-Policy) and readable from other origins; hourly
quotas that charge only the work they accept; body size (413)."""

from __future__ import annotations

import threading
import uuid

import http_sf
import pytest

from service.app import create_app
from tests.helpers import issued_key, served


def _address() -> dict:
    """A client address of its own, so that no other test's counts matter."""
    n = uuid.uuid4().int
    return {"REMOTE_ADDR": f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"}


def _limits(r) -> tuple[dict, dict]:
    """An answer's RateLimit-Policy and RateLimit, parsed as the draft's structured
    field lists ({name: parameters}); a malformed field fails here."""
    def parse(name: str) -> dict:
        value = r.headers.get(name)
        return dict(http_sf.parse(value.encode(), tltype="list")) if value is not None else {}

    return parse("RateLimit-Policy"), parse("RateLimit")


def test_rate_limit_answers_429_problem_with_retry_after():
    client = create_app({"TESTING": True, "RATE_LIMIT_DEFAULT": "3 per minute"}).test_client()
    assert [client.get("/v1/boards").status_code for _ in range(3)] == [200, 200, 200]
    r = client.get("/v1/boards")
    assert r.status_code == 429 and r.mimetype == "application/problem+json"
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    assert "3 per 1 minute" in r.json["detail"] and r.json["limit"] == "default"
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


def test_every_v1_answer_says_its_limits_and_they_count_down(redis_url):
    """Every answer of a route (200, HEAD, 304, a problem, the 429 itself) carries
    RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers): the
    route's policy, what is left of it, counting down, and when the window turns;
    the 429 says the same numbers in its body and Retry-After."""
    client = create_app({"REDIS_URL": redis_url, "RATE_LIMIT_DEFAULT": "6 per minute"}).test_client()
    at = _address()
    day = "/v1/daily/2026-01-01"
    first = client.get(day, environ_base=at)
    answers = [first, client.head(day, environ_base=at),
               client.get(day, headers={"If-None-Match": first.headers["ETag"]}, environ_base=at),
               client.get("/v1/daily/2999-01-01", environ_base=at),  # not yet published: 404
               client.get("/v1/daily/yesterday-ish", environ_base=at),  # 400
               client.get(day, environ_base=at), client.get(day, environ_base=at)]
    assert [r.status_code for r in answers] == [200, 200, 304, 404, 400, 200, 429]
    resets = []
    for left, r in zip([5, 4, 3, 2, 1, 0, 0], answers):
        policy, state = _limits(r)
        assert policy == {"default": {"q": 6, "w": 60}}, (r.status_code, r.headers.get("RateLimit-Policy"))
        assert state["default"]["r"] == left, (r.status_code, r.headers.get("RateLimit"))
        resets.append(state["default"]["t"])
    assert all(0 < t <= 60 for t in resets) and resets == sorted(resets, reverse=True)
    refused = answers[-1]
    assert refused.json["limit"] == "default" and refused.json["violated-policies"] == ["default"]
    assert refused.json["remaining"] == 0
    assert refused.json["reset"] == int(refused.headers["Retry-After"]) == resets[-1]
    assert f"retry after {resets[-1]} s" in refused.json["detail"]
    # Another route counts on its own; a route that searches says "search", and the quota its work is charged to.
    solved = client.post("/v1/solve", json={"code": "AQ2VAA8uIr0PAAk"}, environ_base=at)
    policy, state = _limits(solved)
    assert policy["search"] == {"q": 120, "w": 60} and state["search"]["r"] == 119
    assert policy["solve"] == {"q": 3600, "w": 3600, "ricochet-unit": "worker-seconds"}
    if solved.status_code == 202:  # queued (a busy machine): charged, and said as X-Quota-* says it
        said = solved.headers
        assert state["solve"] == {"r": int(said["X-Quota-Remaining"]), "t": int(said["X-Quota-Reset"])}
    else:
        assert solved.status_code == 200 and "solve" not in state
    _, state = _limits(client.get("/v1/boards", environ_base=at))
    assert state == {"default": {"r": 5, "t": state["default"]["t"]}}
    # A key refused before anything is counted is told the policies only; health is never limited.
    refused_key = client.get("/v1/boards", headers={"X-API-Key": "made-up"}, environ_base=at)
    assert refused_key.status_code == 401 and _limits(refused_key) == ({"default": {"q": 6, "w": 60}}, {})
    assert "RateLimit" not in client.get("/healthz").headers


def test_several_limits_of_a_route_are_policies_of_their_own():
    client = create_app({"TESTING": True, "RATE_LIMIT_DEFAULT": "2 per second; 5 per minute"}).test_client()
    policy, state = _limits(client.get("/v1/boards"))
    assert policy == {"default-1s": {"q": 2, "w": 1}, "default-60s": {"q": 5, "w": 60}}
    assert state["default-1s"]["r"] == 1 and state["default-60s"]["r"] == 4


def test_a_refused_pack_is_not_charged_and_its_429_says_what_its_headers_say(redis_url):
    """Issue 66: a 429 said "100 left" with X-Quota-Remaining: 0.  Now what is left
    after a refusal is what was left before it, the body's numbers are the
    headers', and the next smaller request is judged against that."""
    unworked = redis_url.rsplit("/", 1)[0] + "/8"  # no worker takes these packs: they only need to be queued
    client = create_app({"REDIS_URL": unworked, "QUOTAS": {"solve": 3600, "pack": 100}}).test_client()
    key = issued_key(unworked)

    def pack(count: int):
        return client.post("/v1/packs", json={"count": count, "min_length": 3, "max_length": 4}, headers=key)

    first = pack(10)  # 40 puzzle-moves
    assert first.status_code == 202 and first.headers["X-Quota-Remaining"] == "60", first.json
    policy, state = _limits(first)
    assert policy["pack"] == {"q": 100, "w": 3600, "ricochet-unit": "puzzle-moves"}
    assert state["pack"] == {"r": 60, "t": int(first.headers["X-Quota-Reset"])}
    for count in (20, 16, 20):  # 80, 64, 80: each over the 60 left, and none charged
        over = pack(count)
        assert over.status_code == 429 and over.json["type"] == "/problems/quota-exceeded", over.json
        _, state = _limits(over)
        assert over.json["quota"] == over.headers["X-Quota-Kind"] == "pack"
        assert over.json["violated-policies"] == ["pack"]
        assert over.json["remaining"] == int(over.headers["X-Quota-Remaining"]) == state["pack"]["r"] == 60
        assert over.json["reset"] == int(over.headers["Retry-After"]) == int(over.headers["X-Quota-Reset"]) \
            == state["pack"]["t"]
        assert "quota of 100 puzzle-moves" in over.json["detail"] and "60 left" in over.json["detail"]
        assert "ask for at most 60 puzzle-moves" in over.json["detail"]
    fits = pack(15)  # exactly the 60 left
    assert fits.status_code == 202 and fits.headers["X-Quota-Remaining"] == "0" and _limits(fits)[1]["pack"]["r"] == 0
    last = pack(1)
    assert last.status_code == 429 and last.json["remaining"] == 0 and "0 left" in last.json["detail"]
    never = pack(30)  # 120: over the whole quota, whatever is left
    assert "a pack fits in at most 100 puzzle-moves" in never.json["detail"]


def test_refusals_never_take_from_what_is_left_even_at_once(redis_url):
    """Refused work is not counted even for a moment: while other requests of the
    client are refused at the same time, work that fits what is left is charged."""
    from workers.stores import Stores

    quotas = Stores.from_url(redis_url).quotas
    for round_ in range(30):
        client = f"addr:race-{uuid.uuid4().hex}"
        assert quotas.charge("pack", client, 40, 100).charged  # 60 left
        outcomes = _at_once(lambda cost, who=client: (cost, quotas.charge("pack", who, cost, 100).charged),
                            [80, 80, 61, 80, 60, 90])
        assert sorted(outcomes) == [(60, True), (61, False), (80, False), (80, False), (80, False), (90, False)], round_
        refused = quotas.charge("pack", client, 1, 100)
        assert not refused.charged and refused.used == 100


def _at_once(call, arguments: list) -> list:
    """`call` of each argument, in threads that start together: the results."""
    go = threading.Barrier(len(arguments))
    results: list = []

    def one(argument) -> None:
        go.wait()
        results.append(call(argument))

    threads = [threading.Thread(target=one, args=(a,)) for a in arguments]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_browsers_on_other_origins_may_read_the_limits():
    client = create_app({"TESTING": True}).test_client()
    origin = {"Origin": "https://club.example"}
    r = client.get("/v1/boards", headers=origin)
    preflight = client.options("/v1/packs", headers={**origin, "Access-Control-Request-Method": "POST",
                                                     "Access-Control-Request-Headers": "content-type, x-api-key"})
    assert preflight.status_code == 200 and preflight.headers["Access-Control-Allow-Origin"] in ("*", origin["Origin"])
    assert "x-api-key" in preflight.headers["Access-Control-Allow-Headers"].lower()
    for answer in (r, preflight):
        exposed = {h.strip().lower() for h in answer.headers["Access-Control-Expose-Headers"].split(",")}
        assert {"ratelimit", "ratelimit-policy", "retry-after", "x-quota-kind", "x-quota-limit", "x-quota-remaining",
                "x-quota-reset"} <= exposed, exposed


def test_a_page_on_another_origin_reads_the_limits(browser):
    """Chromium, on a page of another origin (another port), fetches a /v1 answer and reads its limits."""
    from flask import Flask

    elsewhere = Flask("elsewhere")
    elsewhere.add_url_rule("/", "page", lambda: "<!doctype html><title>a club's page</title>")
    api = create_app({"TESTING": True, "RATE_LIMIT_DEFAULT": "50 per minute"})
    with served(api) as api_url, served(elsewhere) as page_url:
        page = browser.new_page()
        try:
            page.goto(page_url)
            got = page.evaluate("""async (url) => {
                const r = await fetch(url + "/v1/boards");
                return [r.status, r.headers.get("RateLimit-Policy"), r.headers.get("RateLimit")];
            }""", api_url)
        finally:
            page.close()
    assert got[0] == 200 and got[1] == '"default";q=50;w=60' and got[2].startswith('"default";r=49;t=')


def test_the_front_passes_the_limits_through(tmp_path):
    """nginx before the API (service/front.conf.template) keeps every limit field."""
    from service.cli import front
    from tests.test_front import _ask, fronting

    if not front.available():
        pytest.skip("needs nginx (make install installs it)")
    with served(create_app({"TESTING": True, "RATE_LIMIT_DEFAULT": "2 per minute"})) as url, \
            fronting(tmp_path, url.removeprefix("http://")) as port:
        answers = [_ask(port, "/v1/boards")[0] for _ in range(3)]
    assert [r.status for r in answers] == [200, 200, 429]
    assert [r.getheader("RateLimit").split(";t=")[0] for r in answers] == ['"default";r=1', '"default";r=0',
                                                                          '"default";r=0']
    assert all(r.getheader("RateLimit-Policy") == '"default";q=2;w=60' for r in answers)
    assert answers[-1].getheader("Retry-After") == answers[-1].getheader("RateLimit").split(";t=")[1]
