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
from tests.helpers import get_json, served
from tests.pages import Tour, context, english_left, one_of, play


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


# -- the race on the room's page, in real browsers --------------------------------------------

RACE_SECONDS = 30


@pytest.fixture(scope="module")
def base_url(redis_url):
    with served(create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False, "GAME_STREAMS": 32})) as url:
        yield url


def _log_has(page, text: str) -> None:
    page.wait_for_function("text => [...document.querySelectorAll('#log li')].some(li => li.textContent"
                           ".includes(text))", arg=text, timeout=20_000)


@pytest.mark.parametrize("host_lang,host_size,guest_lang,guest_size",  # two Chromium pages for the race's 30 s:
                         one_of([("en", "phone", "ru", "desktop"), ("de", "desktop", "en", "phone"),  # the suite
                                 ("ru", "phone", "de", "desktop")]))  # plays one, RICOCHET_EVERY_TOUR each
def test_a_race_in_the_room_page(browser, base_url, host_lang, host_size, guest_lang, guest_size):
    """The host opens a race, a guest joins by the link; the host solves by touch or
    keys, the guest skips, each sees the other's progress live; at the end both read
    the same standings."""
    host_ctx = context(browser, host_lang, host_size, seen_how_to_play=True)
    guest_ctx = context(browser, guest_lang, guest_size, seen_how_to_play=True)
    try:
        host, guest = host_ctx.new_page(), guest_ctx.new_page()
        tour, seat = Tour(host, "race", host_lang, host_size), Tour(guest, "race-guest", guest_lang, guest_size)
        host.goto(f"{base_url}/together?lang={host_lang}")
        host.fill("#create-name", "Ada")
        host.click('input[name="mode"][value="race"]')
        host.fill("#race-seconds", str(RACE_SECONDS))
        host.click('input[name="board"][value="beginner"]')
        host.click("#create button[type=submit]")
        host.wait_for_selector("#room-link:not(:empty)")
        link = host.text_content("#room-link")
        rid = link.rsplit("/", 1)[1]
        assert str(RACE_SECONDS) in host.text_content("#room-rules")
        assert host.is_hidden("#robot-form")  # robots sit at games, not races
        tour.state("lobby")
        guest.goto(f"{link}?lang={guest_lang}")
        guest.fill("#join-name", "Bo")
        guest.click("#join button")
        host.wait_for_function("document.querySelectorAll('#seated li').length === 2")
        host.click("#start")
        for page in (host, guest):
            page.wait_for_selector("#table:not([hidden]) .robot", timeout=30_000)
        tour.state("puzzle")
        seat.state("puzzle")
        race = get_json(f"{base_url}/v1/rooms/{rid}")["room"]["race"]
        puzzle = Puzzle.from_code(race["puzzles"][0]["code"])
        assert host.get_attribute("#board", "data-code") == guest.get_attribute("#board", "data-code") == puzzle.code()
        found = solve(puzzle, time_budget=10)
        play(host, moves_to_json(found.moves), host_size == "phone")
        host.wait_for_function("document.querySelector('#status').textContent.includes('+3')", timeout=20_000)
        _log_has(guest, "Ada")  # the guest hears the host's solve
        assert guest.eval_on_selector("#scores tbody tr", "tr => tr.dataset.player") == "Ada"
        seat.state("other-solved")
        guest.click("#race-skip")
        _log_has(host, "Bo")  # and the host the guest's skip
        for page in (host, guest):  # the next puzzle on a fresh board: the last one's robots went with it
            page.wait_for_function("document.querySelectorAll('#board .robot').length === 4")
        tour.state("solved")
        for page in (host, guest):
            page.wait_for_selector("#over:not([hidden])", timeout=(RACE_SECONDS + 20) * 1000)
        final = get_json(f"{base_url}/v1/rooms/{rid}")["room"]["race"]
        assert final["finished"] and [s["player"] for s in final["standings"]] == ["Ada", "Bo"]
        for page in (host, guest):
            assert "Ada" in page.text_content("#phase")
            assert page.eval_on_selector_all("#scores tbody tr", "rows => rows.map(r => r.dataset.player)") == \
                ["Ada", "Bo"]
        tour.state("over")
        seat.state("over")
        for page, lang in ((host, host_lang), (guest, guest_lang)):
            if lang != "en":
                assert english_left(page, lang) == []
        assert tour.errors == [] and seat.errors == []
    finally:
        host_ctx.close()
        guest_ctx.close()
