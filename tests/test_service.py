"""The first API endpoints through Flask's test client."""

from __future__ import annotations

import json

import pytest

from service.app import create_app
from solver.model.puzzle import Puzzle


@pytest.fixture()
def client():
    return create_app({"TESTING": True}).test_client()


def test_healthz(client):
    assert client.get("/healthz").json == {"status": "ok"}


def test_solve_answers_the_formats_shape(client, sample_puzzles):
    row = sample_puzzles[0]
    r = client.post("/v1/solve", json={k: row[k] for k in ("board", "robots", "target", "rules")})
    assert r.status_code == 200 and r.json["status"] == "optimal" and r.json["length"] == row["optimal_length"]
    again = client.post("/v1/solve", json={"code": r.json["code"]})
    assert again.json["length"] == row["optimal_length"]


def test_verify_says_whether_optimal(client, sample_puzzles):
    row = sample_puzzles[0]
    body = {"puzzle": {k: row[k] for k in ("board", "robots", "target", "rules")}, "moves": row["oracle_solution"]}
    r = client.post("/v1/verify", json=body)
    assert r.json["solved"] and r.json["optimal"] and r.json["optimal_length"] == row["optimal_length"]


@pytest.mark.parametrize("path,body,field", [
    ("/v1/solve", {"board": "green-A,green-B,red-B,blue-B"}, "robots"),
    ("/v1/solve", {"code": "!!"}, "code"),
    ("/v1/verify", {"puzzle": {"code": "AQ2VAA8uIr0PAAk"}, "moves": [{"robot": "pink", "direction": "N"}]},
     "moves[0].robot"),
    ("/v1/verify", {"puzzle": {"board": 3, "robots": {}, "target": {}}, "moves": []}, "puzzle.board"),
])
def test_bad_input_is_a_400_problem(client, path, body, field):
    r = client.post(path, json=body)
    assert r.status_code == 400 and r.mimetype == "application/problem+json"
    assert r.json["field"] == field and r.json["detail"]


def test_not_json_and_unknown_routes(client):
    r = client.post("/v1/solve", data="nope", content_type="text/plain")
    assert r.status_code == 400 and "JSON" in r.json["detail"]
    assert client.get("/v1/nothing").status_code == 404
    assert client.get("/v1/solve").status_code == 405


def test_board_pictures(client):
    r = client.get("/v1/boards/green-A,yellow-B,red-B,blue-B.svg")
    assert r.status_code == 200 and r.mimetype == "image/svg+xml" and b"<svg" in r.data
    r = client.get("/v1/boards/green-A,green-B,red-B,blue-B")
    assert r.status_code == 400 and "used twice" in r.json["detail"]
    r = client.get("/v1/puzzles/AQ2VAA8uIr0PAAk.svg?solution=true")
    assert r.status_code == 200 and b"polyline" in r.data
    assert json.loads(client.get("/v1/puzzles/AQ2VAA8uIr0PAAk").data)["code"] == "AQ2VAA8uIr0PAAk"


def test_difficulty_report(client, sample_puzzles):
    row = next(r for r in sample_puzzles if r["optimal_length"] >= 7)
    r = client.post("/v1/difficulty", json={k: row[k] for k in ("board", "robots", "target", "rules")})
    assert r.status_code == 200 and r.json["optimal_length"] == row["optimal_length"]
    assert r.json["grade"] in ("beginner", "easy", "medium", "hard", "expert", "extreme")
    assert 0 <= r.json["percentile"] <= 100


def test_random_puzzle_by_length_and_by_grade(client):
    r = client.get("/v1/puzzles/random?length=6&seed=abc")
    assert r.status_code == 200 and r.json["optimal_length"] == 6
    assert client.get("/v1/puzzles/random?length=6&seed=abc").json["code"] == r.json["code"]
    g = client.get("/v1/puzzles/random?grade=medium&seed=abc")
    assert g.status_code == 200 and g.json["difficulty"]["grade"] == "medium"


@pytest.mark.parametrize("query,status,field", [
    ("", 400, "length"), ("length=5&grade=easy", 400, "length"), ("length=x", 400, "length"),
    ("length=99", 422, "length"), ("grade=godlike", 400, "grade"), ("length=5&robots=7", 400, "robots"),
    ("length=1", 422, "length"), ("length=5&colour=red", 400, "colour"), ("length=5&seed=", 400, "seed"),
    ("length=5&board=green-A,green-B,red-B,blue-B", 400, "board"),
])
def test_random_puzzle_bad_queries(client, query, status, field):
    r = client.get(f"/v1/puzzles/random?{query}")
    assert r.status_code == status and r.json["field"] == field


def test_docs_cors_and_contract(client):
    page = client.get("/docs")
    assert page.status_code == 200 and b"/v1/daily/{day}" in page.data
    assert client.get("/openapi.yaml").data.startswith(b"openapi: 3.1.0")
    r = client.get("/v1/boards", headers={"Origin": "https://example.org"})
    assert r.headers["Access-Control-Allow-Origin"] in ("*", "https://example.org")


def test_validation_names_every_bad_field(client):
    r = client.post("/v1/packs", json={"count": "3", "min_length": 31, "colour": "red"})
    assert r.status_code == 400 and r.json["field"] == "count"
    fields = {e["field"]: e["message"] for e in r.json["errors"]}
    assert fields == {"count": "must be an integer", "min_length": "must be an integer from 1 to 30",
                      "max_length": "is required", "colour": fields["colour"]}
    assert "unknown field" in fields["colour"]
    r = client.post("/v1/verify", json={"puzzle": {"code": "AQ2VAA8uIr0PAAk"}, "moves": "N"})
    assert r.status_code == 400 and r.json["field"] == "moves" and "list of moves" in r.json["detail"]


def test_verify_knows_the_optimum_of_published_and_solved_puzzles(redis_url):
    """A long daily puzzle is verified as optimal at once, not after a search
    that the request's budget cannot finish; unknown optima are said to be so."""
    client = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 0.001}).test_client()
    day = "2026-01-04"  # a Sunday: 17 to 20 moves
    puzzle = client.get(f"/v1/daily/{day}").json["puzzle"]
    moves = client.get(f"/v1/daily/{day}/solution").json["moves"]
    r = client.post("/v1/verify", json={"puzzle": puzzle, "moves": moves}).json
    assert r["solved"] and r["optimal"] and r["optimality"] == "proven" and r["optimal_length"] == len(moves)
    # Not known, and no time to search: the verdict says so instead of guessing.
    from solver.production import bank

    entry = max(bank.entries(), key=lambda e: e["length"])
    other = Puzzle.from_code(entry["code"]).to_json()
    r = client.post("/v1/verify", json={"puzzle": other, "moves": entry["solution"]}).json
    assert r["solved"] and r["optimality"] == "unknown"
    assert r["optimal"] is False and r["optimal_length"] is None


@pytest.mark.parametrize("path,body", [
    ("/v1/solve", b"[" * 100_000 + b"]" * 100_000),
    ("/v1/verify", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
    ("/v1/packs", b"[" * 40 + b"]" * 40),
])
def test_deeply_nested_json_is_refused_before_parsing(client, path, body):
    r = client.post(path, data=body, content_type="application/json")
    assert r.status_code == 400 and r.mimetype == "application/problem+json"
    assert "nests" in r.json["detail"]


@pytest.mark.parametrize("url,field", [
    ("/v1/daily/²", "day"),               # str.isdigit() is true, int() refuses it: this was a 500
    ("/v1/daily/٣", "day"),               # an Arabic-Indic 3 is not day 3
    ("/v1/daily/20260103", "day"),        # fromisoformat reads it; the contract says YYYY-MM-DD
    ("/v1/games/any?since=²", "since"),
    ("/v1/games/any/events?since=²", "since"),
    ("/?length=²", "length"),
    ("/?length=17", "length"),
])
def test_numbers_in_urls_are_ascii_digits_or_a_400(client, url, field):
    r = client.get(url)
    assert r.status_code == 400 and r.mimetype == "application/problem+json" and r.json["field"] == field


def test_a_search_in_a_request_ends_within_the_requests_budget(client, monkeypatch):
    """Every solve of a request's search gets what is left of the request's
    budget, so a search that runs out ends with a clear 422 (it used to outlive
    gunicorn's timeout inside one 60 s solve).  A 20-move 5-robot puzzle is never
    found in a tenth of a second: its budget here."""
    from application import puzzles

    monkeypatch.setattr(puzzles, "RANDOM_SEARCH_BUDGET", 0.1)
    r = client.get("/v1/puzzles/random?length=20&robots=5&seed=b")
    assert r.status_code == 422 and "ask for a pack" in r.json["detail"], r.json


def test_metrics_name_their_charset_once():
    r = create_app({"TESTING": True}).test_client().get("/metrics")
    assert r.status_code == 200 and r.headers["Content-Type"].lower().count("charset") == 1, r.headers["Content-Type"]
    assert r.mimetype == "text/plain" and r.mimetype_params["charset"] == "utf-8" and "version" in r.mimetype_params
