"""The Python client (ricochet_client) against a live HTTP server: real Redis, real worker."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from werkzeug.serving import make_server

from ricochet_client import Client, InvalidInput, NotFound, Unprocessable, Unreachable
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
    assert verdict.solved and verdict.optimal and verdict.optimality == "proven"
    assert not api.verify(today.code, moves[:-1]).solved


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
