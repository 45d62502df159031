"""Rooms through the HTTP API (real Redis): open, join by name, start; a seat's
token is its token in the game; the link's room id alone acts for nobody."""

from __future__ import annotations

import pytest

from service.app import create_app


@pytest.fixture(scope="module")
def client(redis_url):
    return create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()


def _open(client, name="Ada", **body):
    r = client.post("/v1/rooms", json={"name": name, "options": {"timer_seconds": 30}, "seed": 7, **body})
    assert r.status_code == 201, r.json
    assert r.headers["Location"] == f"/v1/rooms/{r.json['room']['id']}"
    return r.json["room"], r.json["token"]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_room_gathers_players_and_starts_their_game(client):
    room, host = _open(client)
    assert room["players"] == ["Ada"] and room["host"] == "Ada" and room["game"] is None
    assert "seed" not in room and room["options"]["timer_seconds"] == 30
    r = client.post(f"/v1/rooms/{room['id']}/players", json={"name": "Bo"})
    assert r.status_code == 201, r.json
    bo = r.json["token"]
    assert r.json["room"]["players"] == ["Ada", "Bo"]
    # Names are seats: a taken one is refused, and only the host starts.
    assert client.post(f"/v1/rooms/{room['id']}/players", json={"name": "Bo"}).status_code == 409
    assert client.post(f"/v1/rooms/{room['id']}/start", headers=_bearer(bo)).status_code == 403
    assert client.post(f"/v1/rooms/{room['id']}/start").status_code == 401
    r = client.post(f"/v1/rooms/{room['id']}/start", headers=_bearer(host))
    assert r.status_code == 200, r.json
    game = r.json["game"]
    assert r.json["room"]["game"] == game["id"] and [p["name"] for p in game["players"]] == ["Ada", "Bo"]
    assert game["options"]["timer_seconds"] == 30 and isinstance(r.json["now"], float)
    # The seats' tokens act in the game; nobody joins a started room, and it starts once.
    bid = client.post(f"/v1/games/{game['id']}/bids", json={"moves": 9}, headers=_bearer(bo))
    assert bid.status_code == 200, bid.json
    assert bid.json["game"]["round"]["bids"][0]["player"] == "Bo"
    assert client.post(f"/v1/rooms/{room['id']}/players", json={"name": "Cy"}).status_code == 409
    assert client.post(f"/v1/rooms/{room['id']}/start", headers=_bearer(host)).status_code == 409
    assert client.get(f"/v1/rooms/{room['id']}").json["room"]["game"] == game["id"]


def test_a_seeded_room_deals_the_seeded_game(client):
    room, host = _open(client, board="beginner")
    started = client.post(f"/v1/rooms/{room['id']}/start", headers=_bearer(host)).json["game"]
    again, host2 = _open(client, board="beginner")
    other = client.post(f"/v1/rooms/{again['id']}/start", headers=_bearer(host2)).json["game"]
    assert started["board"] == other["board"] and started["robots"] == other["robots"]
    assert started["round"]["chip"] == other["round"]["chip"]
    assert len(started["players"]) == 1  # a room of one plays solitaire: the timer runs at once
    assert started["round"]["timer_ends"] is not None


@pytest.mark.parametrize("body,field", [({"name": ""}, "name"), ({"name": "x\ud800"}, "name"),
                                        ({"name": "A", "board": "nowhere"}, "board"),
                                        ({"name": "A", "options": {"timer_seconds": 1}}, "options.timer_seconds"),
                                        ({"name": "A", "surprise": 1}, "surprise")])
def test_bad_rooms_say_what_to_fix(client, body, field):
    r = client.post("/v1/rooms", json=body)
    assert r.status_code == 400, r.json
    assert r.json["field"] == field, r.json


def test_unknown_rooms_and_tokens(client):
    assert client.get("/v1/rooms/nope").status_code == 404
    assert client.post("/v1/rooms/nope/players", json={"name": "A"}).status_code == 404
    room, _ = _open(client)
    assert client.post(f"/v1/rooms/{room['id']}/start", headers=_bearer("wrong")).status_code == 403
    assert client.post("/v1/rooms/nope/start", headers=_bearer("wrong")).status_code == 404
