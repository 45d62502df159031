"""Ratings from play (Glicko-2), players, the next puzzle, votes, themes and
every optimal solution through the API, against a real Redis."""

from __future__ import annotations

import uuid

import pytest

from service.app import create_app
from solver.model.puzzle import Puzzle, moves_from_json
from solver.play.glicko import Rating, period, prior
from solver.production.themes import THEMES, themes
from solver.search.solve import solve
from workers.stores import Stores


@pytest.fixture()
def client(redis_url):
    return create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()


def test_glicko2_follows_glickmans_worked_example():
    after = period(Rating(1500, 200, 0.06), [(Rating(1400, 30), 1), (Rating(1550, 100), 0), (Rating(1700, 300), 0)])
    assert after.value == pytest.approx(1464.06, abs=0.01)
    assert after.deviation == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_the_prior_grows_with_length_and_helpers():
    assert prior(5).value < prior(9).value < prior(9, 3).value < prior(14).value


def _random(client, length: int, seed: str) -> dict:
    r = client.get(f"/v1/puzzles/random?length={length}&seed={seed}")
    assert r.status_code == 200, r.json
    return r.json


def test_a_first_attempt_rates_player_and_puzzle_and_later_ones_do_not(client):
    made = _random(client, 8, "rate-" + uuid.uuid4().hex)
    player = "p" + uuid.uuid4().hex[:10]
    body = {"puzzle": {"code": made["code"]}, "moves": made["solution"], "player": player}
    first = client.post("/v1/verify", json=body).json["attempt"]
    assert first["rated"] and first["won"] and first["player"]["change"] > 0
    assert first["puzzle"]["plays"] == 1 and first["puzzle"]["wins"] == 1
    assert first["puzzle"]["value"] < made["rating"]["value"]  # beaten by a stranger: easier than thought
    again = client.post("/v1/verify", json={**body, "moves": []}).json["attempt"]
    assert not again["rated"] and again["player"]["change"] == 0 and again["puzzle"]["plays"] == 1
    shown = client.get(f"/v1/players/{player}").json
    assert shown["attempts"] == 2 and shown["wins"] == 1 and shown["scope"] == "public"
    assert shown["rating"]["value"] == first["player"]["value"]
    loser = client.post("/v1/verify", json={**body, "moves": [], "player": player + "x"}).json["attempt"]
    assert loser["rated"] and not loser["won"] and loser["player"]["change"] < 0
    assert loser["puzzle"]["plays"] == 2 and loser["puzzle"]["value"] > first["puzzle"]["value"]
    assert client.get(f"/v1/puzzles/random?length=8&seed={made['seed']}").json["rating"]["plays"] == 2


def test_players_are_scoped_by_api_key(client, redis_url):
    key, _ = Stores.from_url(redis_url).keys.create("app-" + uuid.uuid4().hex[:8])
    made = _random(client, 6, "scope-" + uuid.uuid4().hex)
    player = "p" + uuid.uuid4().hex[:10]
    body = {"puzzle": {"code": made["code"]}, "moves": made["solution"], "player": player}
    assert client.post("/v1/verify", json=body, headers={"X-API-Key": key}).json["attempt"]["rated"]
    assert client.get(f"/v1/players/{player}").status_code == 404  # the public scope has no such player
    mine = client.get(f"/v1/players/{player}", headers={"X-API-Key": key}).json
    assert mine["attempts"] == 1 and mine["scope"].startswith("app-")
    assert client.post("/v1/verify", json=body).json["attempt"]["rated"]  # a public player of that id: its first


@pytest.mark.parametrize("player", ["", "a" * 65, "has space", "é", "a/b"])
def test_a_bad_player_id_is_400(client, player):
    made = {"puzzle": {"code": "ARhuAA9_if0mAA0"}, "moves": [], "player": player}
    r = client.post("/v1/verify", json=made)
    assert r.status_code == 400 and r.json["field"] == "player"


def test_the_next_puzzle_is_never_one_seen_and_sits_near_the_player(client):
    player = "n" + uuid.uuid4().hex[:10]
    seen = set()
    distances = []
    for _ in range(10):
        r = client.get(f"/v1/puzzles/next?player={player}")
        assert r.status_code == 200, r.json
        assert r.json["code"] not in seen
        seen.add(r.json["code"])
        distances.append(abs(r.json["rating"]["value"] - r.json["aim"]))
        p = Puzzle.from_code(r.json["code"])
        assert solve(p).length == r.json["optimal_length"] == len(r.json["solution"])
        won = len(seen) % 2 == 0
        client.post("/v1/verify", json={"puzzle": {"code": r.json["code"]}, "player": player,
                                        "moves": r.json["solution"] if won else []})
    assert sorted(distances)[len(distances) // 2] <= 200
    easiest = client.get(f"/v1/puzzles/next?player={player}&difficulty=easiest").json
    hardest = client.get(f"/v1/puzzles/next?player={player}&difficulty=hardest").json
    assert "aim" in easiest and "aim" in hardest, (easiest, hardest)
    assert hardest["aim"] - easiest["aim"] == 1200
    assert hardest["optimal_length"] > easiest["optimal_length"]


def test_train_starts_a_new_player_at_six_moves_or_fewer(client):
    """Issue 56, defect 9: a new player's first puzzles are short, whatever the aim."""
    player = "new" + uuid.uuid4().hex[:10]
    for _ in range(3):
        r = client.get(f"/v1/puzzles/next?player={player}")
        assert r.status_code == 200 and r.json["optimal_length"] <= 6, r.json
        client.post("/v1/verify", json={"puzzle": {"code": r.json["code"]}, "player": player, "moves": []})


def test_next_filters_by_theme(client):
    player = "t" + uuid.uuid4().hex[:10]
    for theme in ("unique", "short"):
        r = client.get(f"/v1/puzzles/next?player={player}&theme={theme}&difficulty=easiest")
        assert r.status_code == 200 and theme in r.json["themes"], r.json
    r = client.get(f"/v1/puzzles/next?player={player}&theme=nonsense")
    assert r.status_code == 400 and r.json["field"] == "theme"


def test_votes_make_popularity(client):
    made = _random(client, 5, "vote-" + uuid.uuid4().hex)
    url = f"/v1/puzzles/{made['code']}/vote"
    assert client.post(url, json={"player": "a", "up": True}).json["popularity"] == 100
    assert client.post(url, json={"player": "b", "up": False}).json["popularity"] == 0
    assert client.post(url, json={"player": "b", "up": True}).json == {"code": made["code"], "popularity": 100,
                                                                        "up": 2, "down": 0}
    assert client.post(url, json={"player": "b", "up": 1}).status_code == 400
    assert client.get(f"/v1/puzzles/random?length=5&seed={made['seed']}").json["popularity"] == 100


# Each theme on a puzzle that has it, and a puzzle that does not (found by a search over random real puzzles).
HAS = {"solo": "ARy2AQ_xJVdGAAI", "one-helper": "ASxaAB_128Gq8AAQ", "two-helpers": "AT-GAQ9OJXr0AAU",
       "three-helpers": "AT17AB_6TA9y4wAF", "blocker-moved-again": "ATfbAB_D4TCVWQAH", "diagonal": "AQh8AB_-5AE1ywAG",
       "vortex": "ASxaAB_128Gq8AAQ", "ricochet-rule": "ARWcAB96Z-olHAAM", "turn-at-the-end": "ASxaAB_128Gq8AAQ",
       "unique": "ARlcAA9feuI_AAw", "many-ways": "ARhMAg_Po827AAA", "short": "ARWcAB96Z-olHAAM",
       "long": "ASyHAR8JMdetZwAH"}
LACKS = {"solo": "ASxaAB_128Gq8AAQ", "one-helper": "ARy2AQ_xJVdGAAI", "vortex": "ARlcAA9feuI_AAw",
         "turn-at-the-end": "ARWcAB96Z-olHAAM"}


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_each_theme_on_a_puzzle_that_has_it_and_one_that_does_not(theme, quadrant_test_puzzles):
    if theme == "very-long":
        deepest = max(quadrant_test_puzzles, key=lambda t: t["optimal_moves"])
        has = Puzzle.from_json({k: deepest[k] for k in ("board", "robots", "target")})
    else:
        has = Puzzle.from_code(HAS[theme])
    lacks = Puzzle.from_code(LACKS.get(theme, "ASxaAB_128Gq8AAQ" if theme != "one-helper" else "ARy2AQ_xJVdGAAI"))
    assert theme in themes(has, solve(has).moves, time_budget=10)
    assert theme not in themes(lacks, solve(lacks).moves, time_budget=10)


def test_solutions_lists_every_distinct_optimal_solution(client):
    code = HAS["many-ways"]
    r = client.get(f"/v1/puzzles/{code}/solutions?limit=500")
    assert r.status_code == 200 and r.json["complete"]
    assert r.json["count"] == len(r.json["solutions"]) >= 10 and r.json["orderings"] >= r.json["count"]
    p = Puzzle.from_code(code)
    for moves in r.json["solutions"]:
        verdict = client.post("/v1/verify", json={"puzzle": {"code": code}, "moves": moves}).json
        assert verdict["optimal"], verdict
    assert len({tuple(map(str, moves_from_json(m))) for m in r.json["solutions"]}) == r.json["count"]
    assert p.code() == r.json["code"]
    assert client.get(f"/v1/puzzles/{code}/solutions?limit=2").json["solutions"] == r.json["solutions"][:2]
    assert client.get(f"/v1/puzzles/{code}/solutions?limit=0").status_code == 400


def test_the_grade_follows_the_rating_once_enough_players_tried(client):
    made = _random(client, 12, "graded-" + uuid.uuid4().hex)
    assert "graded_by" not in made["difficulty"]
    body = {"puzzle": {"code": made["code"]}, "moves": made["solution"]}
    for i in range(8):  # everyone solves it: it is easier than its length said
        assert client.post("/v1/verify", json={**body, "player": f"g{i}-{made['seed'][-8:]}"}).json["attempt"]["won"]
    again = _random(client, 12, made["seed"])
    assert again["code"] == made["code"] and again["rating"]["plays"] == 8
    assert again["rating"]["value"] < made["rating"]["value"]
    assert again["difficulty"]["graded_by"] == "rating"
    from solver.play.grades import grade_of_rating as grade_for

    assert again["difficulty"]["grade"] == grade_for(again["rating"]["value"])
    shown = client.get(f"/v1/puzzles/{made['code']}").json
    assert shown["rating"] == again["rating"] and shown["themes"] == again["themes"]
