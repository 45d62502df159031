"""Races in rooms (issue 69, after Lichess's Puzzle Racer), through the HTTP API
on a real Redis with the referee's clock injected: three players race through
the same puzzles, one faster; each hears the others' progress on the room's
event stream; the standings at the end match the solves."""

from __future__ import annotations

import json

import pytest

from service.app import create_app
from solver.model.puzzle import Puzzle, moves_to_json
from solver.play import race, robot
from solver.search.solve import solve


class Clock:
    def __init__(self) -> None:
        self.t = 3_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def room(redis_url):
    clock = Clock()
    client = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False, "CLOCK": clock,
                         "GAME_SSE_SECONDS": 0.5}).test_client()
    r = client.post("/v1/rooms", json={"name": "Ada", "mode": "race", "race_seconds": 60, "seed": "race-1",
                                       "board": "beginner"})
    assert r.status_code == 201, r.json
    assert r.json["room"]["mode"] == "race"
    rid, tokens = r.json["room"]["id"], {"Ada": r.json["token"]}
    for name in ("Bo", "Cy"):
        tokens[name] = client.post(f"/v1/rooms/{rid}/players", json={"name": name}).json["token"]
    return client, clock, rid, tokens


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _events(client, rid: str, since: int = 0) -> list[dict]:
    text = client.get(f"/v1/rooms/{rid}/events?since={since}").get_data(as_text=True)
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


def test_three_race_through_the_same_puzzles(room):
    client, clock, rid, tokens = room
    # Robots sit at games, not races; nobody but the host starts.
    assert client.post(f"/v1/rooms/{rid}/robots", json={"strength": "master"},
                       headers=_auth(tokens["Ada"])).status_code == 409
    assert client.post(f"/v1/rooms/{rid}/start", headers=_auth(tokens["Bo"])).status_code == 403
    started = client.post(f"/v1/rooms/{rid}/start", headers=_auth(tokens["Ada"]))
    assert started.status_code == 200, started.json
    start = clock.t
    view = started.json["room"]["race"]
    assert view["ends"] == start + 60 and len(view["puzzles"]) == 1 and "seed" not in view
    # Ada solves at the optimum every 4 s, Bo every 10 s, Cy every 10 s a move longer than the optimum.
    pace = {"Ada": 4, "Bo": 10, "Cy": 10}
    dealt: dict[int, str] = {}
    tally = {name: {"points": 0, "solved": 0, "last": None} for name in pace}
    for second in range(1, 60):
        clock.t = start + second
        for name, every in pace.items():
            if second % every:
                continue
            current = client.get(f"/v1/rooms/{rid}").json["room"]["race"]
            at = current["players"][name]["at"]
            code = current["puzzles"][at]["code"]
            assert dealt.setdefault(at, code) == code  # the same puzzle at each place, for everyone
            puzzle = Puzzle.from_code(code)
            found = solve(puzzle, time_budget=10)
            moves = robot.solution(puzzle, found.moves, found.length + 1) if name == "Cy" else found.moves
            r = client.post(f"/v1/rooms/{rid}/race/solutions", json={"moves": moves_to_json(moves)},
                            headers=_auth(tokens[name]))
            assert r.status_code == 200, r.json
            result = r.json["result"]
            assert result["success"] and result["optimal_length"] == found.length
            assert result["points"] == race.points(len(moves), found.length)
            assert result["points"] == (3 if len(moves) == found.length else 2)
            tally[name]["points"] += result["points"]
            tally[name]["solved"] += 1
            tally[name]["last"] = clock.t
    # A solution that does not solve scores nothing, and the racer stays; a skip moves on for nothing.
    current = client.get(f"/v1/rooms/{rid}").json["room"]["race"]
    at = current["players"]["Bo"]["at"]
    wrong = client.post(f"/v1/rooms/{rid}/race/solutions", json={"moves": [{"robot": "red", "direction": "N"}]},
                        headers=_auth(tokens["Bo"]))
    assert wrong.status_code == 200 and not wrong.json["result"]["success"] and wrong.json["result"]["points"] == 0
    skipped = client.post(f"/v1/rooms/{rid}/race/solutions", json={"moves": None}, headers=_auth(tokens["Bo"]))
    assert skipped.json["room"]["race"]["players"]["Bo"]["at"] == at + 1
    # Everyone's progress on the room's stream; then time is up.
    heard = _events(client, rid)
    solved_by = {e["player"] for e in heard if e["type"] == "race_solution" and e["success"]}
    assert solved_by == {"Ada", "Bo", "Cy"}
    assert [e["version"] for e in heard] == sorted(e["version"] for e in heard)
    clock.t = start + 61
    late = client.post(f"/v1/rooms/{rid}/race/solutions", json={"moves": None}, headers=_auth(tokens["Ada"]))
    assert late.status_code == 409, late.json
    over = [e for e in _events(client, rid, heard[-1]["version"]) if e["type"] == "race_over"]
    assert len(over) == 1
    standings = over[0]["standings"]
    assert [s["player"] for s in standings] == ["Ada", "Bo", "Cy"]
    for row in standings:
        assert {k: row[k] for k in ("points", "solved", "last")} == tally[row["player"]], row
    final = client.get(f"/v1/rooms/{rid}").json["room"]["race"]
    assert final["finished"] and final["standings"] == standings
    assert tally["Ada"]["solved"] > tally["Bo"]["solved"] and tally["Bo"]["points"] > tally["Cy"]["points"]


def test_bad_race_requests(room):
    client, _, rid, tokens = room
    assert client.post(f"/v1/rooms/{rid}/race/solutions", json={"moves": None},
                       headers=_auth(tokens["Ada"])).status_code == 409  # not started
    assert client.post("/v1/rooms", json={"name": "A", "mode": "sprint"}).json["field"] == "mode"
    assert client.post("/v1/rooms", json={"name": "A", "mode": "race", "race_seconds": 5}).json["field"] == \
        "race_seconds"
    client.post(f"/v1/rooms/{rid}/start", headers=_auth(tokens["Ada"]))
    bad = client.post(f"/v1/rooms/{rid}/race/solutions", json={"moves": [{"robot": "pink", "direction": "N"}]},
                      headers=_auth(tokens["Ada"]))
    assert bad.status_code == 400, bad.json
    assert client.post(f"/v1/rooms/{rid}/race/solutions", json={"moves": None}).status_code == 401
