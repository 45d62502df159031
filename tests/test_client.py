"""The Python client (ricochet_client, clients/python, installed editable by
`make install`) against a live HTTP server: real Redis, real worker.  Its
built wheel in a venv of its own is tests/test_python_client.py's."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from ricochet_client import Client, InvalidInput, NotFound, RateLimited, Unprocessable, Unreachable
from werkzeug.serving import make_server

from service.app import create_app
from solver.play import daily


@pytest.fixture(scope="module")
def api(redis_url, celery_worker):
    server = make_server("127.0.0.1", 0, create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}),
                         threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Client(f"http://127.0.0.1:{server.server_port}")
    server.shutdown()


def test_daily_solution_hint_and_verify(api):
    today = api.daily()
    assert today.date == daily.today().isoformat() and today.number == daily.number(daily.today())
    assert api.daily(today.number).code == today.code == api.daily(today.date).code
    moves = api.daily_solution(today.date)
    assert len(moves) == today.optimal_length
    hint = api.daily_hint(today.date, 4)
    assert hint.first_move == moves[0] and hint.optimal_length == today.optimal_length
    verdict = api.verify(today.puzzle, moves)
    assert verdict.solved and verdict.optimal and verdict.optimality == "proven" and verdict.attempt is None
    assert not api.verify(today.code, moves[:-1]).solved
    rated = api.verify(today.code, moves, player="client-ann")
    assert rated.attempt is not None and "rated" in rated.attempt
    assert api.player("client-ann")["attempts"] == 1


def test_archive_follows_every_page(api):
    days = list(api.archive("2026-01-01", "2026-02-15", page_size=10))
    assert [d["number"] for d in days] == list(range(1, 47))


def test_future_days_and_bad_input_raise_typed_errors(api):
    tomorrow = (daily.today() + dt.timedelta(days=1)).isoformat()
    with pytest.raises(NotFound) as e:
        api.daily(tomorrow)
    assert e.value.kind == "not-yet-published" and e.value.status == 404
    with pytest.raises(InvalidInput) as e:
        api.random(length=5, robots=7)
    assert e.value.field == "robots" and e.value.kind == "invalid-input"
    with pytest.raises(Unprocessable) as e:
        api.random(length=99)
    assert e.value.kind == "out-of-range"
    with pytest.raises(Unreachable):
        Client("http://127.0.0.1:9", timeout=2).daily()


def test_random_solve_difficulty_hint_and_picture(api):
    made = api.random(7, seed="client")
    answer = api.solve(made.puzzle)
    assert answer.status == "optimal" and answer.length == made.optimal_length == 7
    assert api.solve(made.code).length == 7
    assert api.difficulty(made.code)["optimal_length"] == 7
    assert api.hint(made.code, 3).robots == list(dict.fromkeys(m["robot"] for m in made.solution))
    assert api.picture(made.code)[:4] == b"\x89PNG"


def test_pack_waits_and_streams(api):
    job = api.pack(6, 6, 8, seed="client", idempotency_key="client-pack")
    seen = []
    job.wait(timeout=240, progress=lambda j: seen.append(j.progress))
    assert job.state == "succeeded"
    puzzles = job.puzzles()
    assert [p.code for p in puzzles] == [p.code for p in job.stream()]
    assert all(6 <= p.optimal_length <= 8 for p in puzzles) and len(puzzles) == 6
    assert api.pack(6, 6, 8, seed="client", idempotency_key="client-pack").id == job.id


def test_a_game_round(api):
    game = api.new_game(["ann", "bob"], seed="client-game")
    assert game.state["phase"] == "bidding"
    game.bid("ann", 30)
    assert game.state["round"]["bids"][0]["moves"] == 30
    assert game.look()["game"]["version"] == game.state["version"]


def test_next_for_a_player_and_the_generated_operations(api):
    made = api.next("client-bob", solution=False)
    assert made.solution == [] and made.optimal_length >= 2 and "aim" in made.raw
    with pytest.raises(NotFound):
        api.api.get_player_attempts("client-bob")
    assert api.verify(made.code, [], player="client-bob").attempt is not None
    reply = api.api.get_player_attempts("client-bob", limit=5)
    assert reply.status == 200 and reply.data["id"] == "client-bob"
    assert [a["code"] for a in reply.data["attempts"]] == [made.code]
    assert api.api.healthz().data == {"status": "ok"}
    assert api.api.get_puzzle(f"{made.code}.svg").data.startswith("<svg")
    assert api.last_rate_limit is reply.rate_limit or api.last_rate_limit is not None


def test_a_429_carries_its_problem_and_when_to_retry(redis_url, celery_worker):
    from tests.helpers import served

    with served(create_app({"REDIS_URL": redis_url, "RATE_LIMIT_SEARCH": "2 per minute"})) as base:
        client = Client(base)
        with pytest.raises(RateLimited) as e:
            for _ in range(5):
                client.random(4, seed="client-429")
    assert e.value.status == 429 and e.value.problem["status"] == 429 and e.value.kind == "rate-limited"
    assert e.value.retry_after is not None and e.value.retry_after > 0
    assert client.last_rate_limit is e.value.rate_limit
    if e.value.rate_limit.limits:  # RateLimit / RateLimit-Policy (issue 66), read when the server sends them
        assert e.value.rate_limit.remaining == 0 and e.value.rate_limit.tightest.quota == 2
