"""State a stranger cannot grow (issue 67): an address without an API key adds
at most its day's bytes of games and rooms, what it adds expires when idle, and
a Redis at its maxmemory answers 503 with Retry-After (never a 500) with
/readyz saying so.  Real Redis servers, a real worker, the real app."""

from __future__ import annotations

import time
import uuid

import pytest
import redis

from service.app import create_app
from service.cli.serve import stop
from tests.helpers import issued_key, start_worker
from workers.embedded import EmbeddedRedis
from workers.stores import Full, Stores
from workers.stores.base import Client
from workers.stores.games import GAME_TTL
from workers.stores.rooms import ROOM_TTL

BUDGET = 60_000  # bytes a day: a few games and rooms of 16 players


def _at(address: str) -> dict[str, str]:
    return {"REMOTE_ADDR": address}


def _players(n: int = 16) -> list[str]:
    return [f"{'é' * 30}{k:02d}" for k in range(n)]


@pytest.fixture(scope="module")
def budgeted(redis_url):
    """The API with rate limits on and a small day's budget of games and rooms."""
    quotas = {"solve": 3600, "pack": 200_000, "state_bytes_a_day": BUDGET}
    return create_app({"REDIS_URL": redis_url, "QUOTAS": quotas, "RATE_LIMIT_DEFAULT": "100000 per minute"})


def test_an_address_adds_at_most_its_days_budget_of_games_and_rooms(budgeted, redis_url):
    client, stores = budgeted.test_client(), Stores.from_url(redis_url)
    address = f"10.67.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    at = _at(address)
    answers = []
    for k in range(200):  # as fast as the app answers: far past the budget if nothing bounded it
        if k % 2:
            r = client.post("/v1/games", json={"players": _players(), "seed": k}, environ_base=at)
        else:
            r = client.post("/v1/rooms", json={"name": _players()[0], "seed": k}, environ_base=at)
        answers.append(r.status_code)
        if r.status_code == 429:
            break
        assert r.status_code == 201, r.json
    made = answers.count(201)
    assert answers[-1] == 429 and 3 <= made < 20, answers
    refused = r.json
    assert "games and rooms today" in refused["detail"] and "API key" in refused["detail"], refused
    assert 0 < int(r.headers["Retry-After"]) <= 86_400
    # What it added is counted, and no more than one creation past the budget.
    stored = stores.games.stored_today(f"addr:{address}")
    assert BUDGET <= stored < BUDGET + 25_000, stored

    # Past the budget: no game, no room, no seat, no move adds state; looking still works.
    assert client.post("/v1/games", json={"players": ["a"]}, environ_base=at).status_code == 429
    assert client.post("/v1/rooms", json={"name": "a"}, environ_base=at).status_code == 429
    other = _at("10.68.0.1" if address != "10.68.0.1" else "10.68.0.2")
    game = client.post("/v1/games", json={"players": ["Ada", "Bo"], "seed": 3}, environ_base=other)
    assert game.status_code == 201, game.json  # another address has its own budget
    gid, tokens = game.json["game"]["id"], game.json["tokens"]
    room = client.post("/v1/rooms", json={"name": "Cy"}, environ_base=other).json["room"]
    seat = client.post(f"/v1/rooms/{room['id']}/players", json={"name": "Di"}, environ_base=at)
    assert seat.status_code == 429, seat.json
    bid = client.post(f"/v1/games/{gid}/bids", json={"moves": 9}, environ_base=at,
                      headers={"Authorization": f"Bearer {tokens['Ada']}"})
    assert bid.status_code == 429, bid.json
    assert client.get(f"/v1/games/{gid}", environ_base=at).json["game"]["version"] == game.json["game"]["version"]
    assert stores.games.stored_today(f"addr:{address}") == stored  # the refusals added nothing
    # The same seat and bid from the other address go through, and are charged to it.
    spent = stores.games.stored_today("addr:" + other["REMOTE_ADDR"])
    assert client.post(f"/v1/games/{gid}/bids", json={"moves": 9}, environ_base=other,
                       headers={"Authorization": f"Bearer {tokens['Ada']}"}).status_code == 200
    assert stores.games.stored_today("addr:" + other["REMOTE_ADDR"]) > spent
    # An API key has no such limit.
    keyed = client.post("/v1/games", json={"players": ["a"]}, environ_base=at, headers=issued_key(redis_url))
    assert keyed.status_code == 201, keyed.json


def test_games_and_rooms_expire_when_idle(budgeted, redis_url):
    """Every key a game or a room keeps has an expiry, refreshed by a change: an idle
    game goes after GAME_TTL (two days), a room nobody started after ROOM_TTL."""
    client, plain = budgeted.test_client(), redis.Redis.from_url(redis_url)
    at = _at("10.69.0.1")
    room = client.post("/v1/rooms", json={"name": "Ada"}, environ_base=at).json
    rid = room["room"]["id"]
    client.post(f"/v1/rooms/{rid}/players", json={"name": "Bo"}, environ_base=at)
    for key in (f"room:{rid}", f"room:{rid}:tokens"):
        assert 0 < plain.ttl(key) <= ROOM_TTL <= 6 * 3600, key
    started = client.post(f"/v1/rooms/{rid}/start", headers={"Authorization": f"Bearer {room['token']}"},
                          environ_base=at).json
    gid = started["game"]["id"]
    keys = [k.decode() for k in plain.scan_iter(f"game:{gid}*")] + [f"room:{rid}", f"room:{rid}:tokens"]
    assert len(keys) >= 5, keys
    for key in keys:
        assert 0 < plain.ttl(key) <= GAME_TTL <= 2 * 86_400, key
    assert plain.ttl(f"stored:addr:10.69.0.1:{time.strftime('%Y-%m-%d', time.gmtime())}") <= 2 * 86_400


@pytest.fixture()
def tiny(tmp_path):
    """A Redis of 2 MB that refuses writes when full (noeviction, as every deployment's),
    with a worker on it, so /readyz is ready until Redis fills."""
    with EmbeddedRedis(tmp_path / "redis", persist=False, maxmemory="2mb") as server:
        worker = start_worker(server.url, "ricochet")
        try:
            yield server
        finally:
            stop(worker)


def test_a_full_redis_answers_503_with_retry_after_and_readyz_says_so(tiny):
    app = create_app({"REDIS_URL": tiny.url, "RATE_LIMITS_ENABLED": False})
    client = app.test_client()
    deadline = time.monotonic() + 60
    while client.get("/readyz").status_code != 200:  # the worker's first reply
        assert time.monotonic() < deadline, client.get("/readyz").json
        time.sleep(0.5)
    # A transaction queued before Redis fills, executed after: Redis discards it (EXECABORT).
    late = Client.from_url(tiny.url, single_connection_client=True)
    late.execute_command("MULTI")
    late.execute_command("SET", "late", "1")

    answers: list[int] = []
    for k in range(1000):
        if k % 2:
            r = client.post("/v1/games", json={"players": _players(), "seed": k})
        else:
            r = client.post("/v1/rooms", json={"name": _players()[0], "seed": k})
        answers.append(r.status_code)
        if r.status_code == 503:
            break
    assert 500 not in answers and set(answers) == {201, 503} and answers[-1] == 503, answers
    assert r.headers["Retry-After"] == "60" and "full" in r.json["detail"], r.json
    # Every other write is refused alike, reads go on, and readiness says no.
    assert client.get("/v1/rooms/" + _first_room(tiny.url)).status_code == 200
    refused = [client.post("/v1/games", json={"players": ["a"]}),
               client.post("/v1/rooms", json={"name": "a"}),
               client.post("/v1/verify", json={"puzzle": {"code": "x"}, "moves": []}),
               client.get("/readyz")]
    assert [x.status_code for x in refused[:2]] == [503, 503], [x.json for x in refused]
    assert refused[2].status_code in (200, 400)  # no store write needed: never a 500
    ready = refused[3]
    assert ready.status_code == 503 and ready.headers["Retry-After"] == "60" and "full" in ready.json["detail"]

    redis.Redis.from_url(tiny.url).config_set("maxmemory", "1mb")  # surely over, whatever was freed meanwhile
    with pytest.raises(Full):
        late.execute_command("EXEC")

    redis.Redis.from_url(tiny.url).config_set("maxmemory", "64mb")  # room again: ready again
    assert client.get("/readyz").status_code == 200
    assert client.post("/v1/games", json={"players": ["a"]}).status_code == 201


def _first_room(url: str) -> str:
    plain = redis.Redis.from_url(url)
    return next(k.decode().split(":")[1] for k in plain.scan_iter("room:*:tokens"))
