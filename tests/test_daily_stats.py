"""How others did on the day's puzzle (GET /v1/daily/{day}/stats), against a
real Redis: each player's first finish counted once, as the ratings judge
answers (solved, not solved, an answer shown), one player an address, only on
the day and the next; a future day 404, a bad one 400."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest

from service.app import create_app
from solver.model.moves import check
from solver.model.puzzle import Puzzle, moves_from_json
from solver.play import daily


@pytest.fixture()
def client(redis_url):
    return create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()


def _longer(code: str, solution: list[dict]) -> list[dict]:
    """A solve one move longer than the optimum: the optimal moves with one more
    among them that leaves them reaching the target (checked here, not searched;
    every day of the calendar has one)."""
    p = Puzzle.from_code(code)
    for at in range(len(solution)):
        for robot in dict(p.robots):
            for direction in "NESW":
                moves = [*solution[:at], {"robot": robot, "direction": direction}, *solution[at:]]
                verdict = check(p, moves_from_json(moves))
                if verdict.solved and verdict.length == len(solution) + 1:
                    return moves
    raise AssertionError("no move among the optimal ones leaves them solving the puzzle")


def _player(address: str, tag: str) -> str:
    return f"{address.replace('.', '-')}-{tag}"


def test_each_players_first_finish_counts_once_as_the_ratings_judge_it(client):
    today = daily.today()
    record = daily.daily_json(today)
    code, solution, optimal = record["code"], record["solution"], record["optimal_length"]
    url = f"/v1/daily/{today.isoformat()}/stats"
    before = client.get(url).json
    tag = uuid.uuid4().hex[:8]

    def plays(address: str, moves: list[dict], player: str = "", shown: bool = False) -> dict:
        at = {"REMOTE_ADDR": address}
        assert client.get("/v1/daily", environ_base=at).json["code"] == code  # handed without its answer: a round
        if shown:
            client.get(f"/v1/daily/{today.isoformat()}/solution", environ_base=at)
        body = {"puzzle": {"code": code}, "moves": moves, "player": player or _player(address, tag)}
        return client.post("/v1/verify", json=body, environ_base=at).json["attempt"]

    assert plays("10.71.0.1", solution)["rated"]  # solved in the fewest moves
    assert plays("10.71.0.2", _longer(code, solution))["rated"]  # solved in one more
    assert plays("10.71.0.3", [])["rated"]  # failed: not solved
    assert not plays("10.71.0.4", solution, shown=True)["rated"]  # the answer shown first: not solved
    # Once each: the same player again, another player at an address counted already.
    assert not plays("10.71.0.1", solution, player=_player("10.71.0.1", tag))["rated"]
    assert not plays("10.71.0.2", solution, player=f"another-{tag}")["rated"]
    r = client.get(url)
    after = r.json
    assert r.status_code == 200 and after["date"] == today.isoformat()
    grew = {k: after[k] - before[k] for k in ("players", "solved", "optimal")}
    assert grew == {"players": 4, "solved": 2, "optimal": 1}, (before, after)
    for moves, n in ((optimal, 1), (optimal + 1, 1)):
        assert after["moves"][str(moves)] - before["moves"].get(str(moves), 0) == n
    assert after["solved_share"] == round(after["solved"] / after["players"], 3)
    total = sum(int(moves) * n for moves, n in after["moves"].items())
    assert after["average_moves"] == round(total / after["solved"], 1)
    assert sum(after["moves"].values()) == after["solved"]
    assert r.headers["Cache-Control"] == "public, max-age=60" and r.headers["ETag"]
    assert client.get(url, headers={"If-None-Match": r.headers["ETag"]}).status_code == 304

    # A day more than a day past is counted no more: its figures stand as they were.
    old = today - dt.timedelta(days=3)
    at = {"REMOTE_ADDR": "10.71.0.5"}
    handed = client.get(f"/v1/daily/{old.isoformat()}", environ_base=at).json
    attempt = client.post("/v1/verify", json={"puzzle": {"code": handed["code"]}, "player": f"old-{tag}",
                                              "moves": daily.daily_json(old)["solution"]}, environ_base=at).json
    assert attempt["attempt"]["rated"]
    stood = client.get(f"/v1/daily/{daily.number(old)}/stats").json
    assert stood == {"date": old.isoformat(), "players": 0, "solved": 0, "optimal": 0, "solved_share": 0.0,
                     "average_moves": None, "moves": {}}


def test_a_future_day_is_404_and_a_bad_day_400(client):
    tomorrow = daily.today() + dt.timedelta(days=1)
    for day in (tomorrow.isoformat(), str(daily.number(tomorrow))):
        r = client.get(f"/v1/daily/{day}/stats")
        assert r.status_code == 404 and r.json["title"] == "Not yet published" and "00:00 UTC" in r.json["detail"]
    r = client.get("/v1/daily/today/stats")
    assert r.status_code == 400 and r.json["field"] == "day", r.json
    assert "YYYY-MM-DD" in r.json["detail"] and "day number" in r.json["detail"]
