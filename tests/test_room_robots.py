"""Robots at the table (issue 69): robot players of a strength, pure functions of
the game's seed, their seat and the puzzle (solver/play/robot.py), played through
the game's own rules (solver/play/game.py) and seated in a room by its host."""

from __future__ import annotations

import collections
import json

import pytest

from service.app import create_app
from service.i18n import catalogue
from solver.errors import InvalidInput
from solver.model.moves import check
from solver.model.puzzle import moves_to_json
from solver.play import robot
from solver.play.game import Game, options_from_json
from solver.search.solve import solve
from tests.helpers import served
from tests.pages import Tour, context, english_left, press, tours

ROUNDS = 200


def _rounds(players: list[str], robots: dict[str, str], seed: str, rounds: int = ROUNDS,
            person: str | None = None) -> tuple[collections.Counter, list[list[tuple]]]:
    """`rounds` rounds played on the referee's clock a second at a time, games after
    games from `seed`: the chips each player won, and each round's bids.  `person`,
    when given, bids each round's optimum as it is dealt and shows it."""
    options = options_from_json({"chips_to_win": 17})
    won: collections.Counter = collections.Counter()
    bids: list[list[tuple]] = []
    games = 0
    while len(bids) < rounds:
        game, now = Game.create("g", players, None, options, f"{seed}-{games}", 0.0, robots=robots), 0.0
        games += 1
        while game.state["phase"] != "finished" and len(bids) < rounds:
            number = game.state["round"]["number"]
            found = solve(game.puzzle(), time_budget=10)
            game.rate_round(number, found.length, found.moves, now)
            if person is not None and found.length is not None:
                game.bid(person, found.length, now)
            while len(game.state["history"]) < number:
                now += 1.0
                game.advance(now)
                r = game.state["round"]
                if person is not None and game.state["phase"] == "verifying" and r["order"][0]["player"] == person:
                    game.show(person, moves_to_json(found.moves), now)
            last = game.state["history"][number - 1]
            won[last["winner"]] += 1
            bids.append([(b["player"], b["moves"], b["at"]) for b in last["bids"]])
    return won, bids


def test_stronger_robots_win_more_chips():
    won, bids = _rounds(["Bea", "Ivo", "Max"], {"Bea": "beginner", "Ivo": "intermediate", "Max": "master"}, "ladder")
    assert won["Max"] > won["Ivo"] > won["Bea"], won
    # They bid as people do: often a longer solution first, then lower.
    lowered = sum(1 for round_bids in bids if len({p for p, _, _ in round_bids}) < len(round_bids))
    assert lowered > ROUNDS // 4, lowered


def test_an_optimal_player_who_bids_at_once_beats_a_beginner():
    won, _ = _rounds(["Opt", "Bea"], {"Bea": "beginner"}, "optimal", person="Opt")
    assert won["Opt"] >= 0.8 * ROUNDS, won


def test_the_same_seed_replays_the_same_robot_bids():
    robots = {"Ivo": "intermediate", "Ada": "advanced"}
    first = _rounds(["Ivo", "Ada"], robots, "replay", rounds=12)[1]
    assert first == _rounds(["Ivo", "Ada"], robots, "replay", rounds=12)[1]
    assert first != _rounds(["Ivo", "Ada"], robots, "another", rounds=12)[1]
    assert any(first)


def test_a_robots_bids_go_down_and_its_solutions_hold():
    game = Game.create("g", ["Ada", "Bo"], None, options_from_json({}), "plans", 0.0)
    found = solve(game.puzzle(), time_budget=10)
    puzzle = game.puzzle()
    for strength in robot.Strength:
        plan = robot.plan("plans", "Bo", strength, puzzle, found.moves)
        assert plan == robot.plan("plans", "Bo", strength.value, puzzle, found.moves)
        assert [b.at for b in plan] == sorted(b.at for b in plan)
        assert all(a.moves > b.moves >= found.length for a, b in zip(plan, plan[1:]))
    for extra in range(4):
        shown = robot.solution(puzzle, found.moves, found.length + extra)
        verdict = check(puzzle, shown)
        assert verdict.legal and verdict.solved and found.length <= len(shown) <= found.length + extra


@pytest.mark.parametrize("robots,field", [({"Cy": "master"}, "robots"), ({"Bo": "grandmaster"}, "robots.Bo")])
def test_robots_of_a_game_are_checked(robots, field):
    with pytest.raises(InvalidInput) as refused:
        Game.create("g", ["Ada", "Bo"], None, options_from_json({}), "s", 0.0, robots=robots)
    assert refused.value.field == field


class Clock:
    def __init__(self) -> None:
        self.t = 2_000_000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def room_client(redis_url):
    clock = Clock()
    app = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False, "CLOCK": clock, "GAME_SSE_SECONDS": 0.5})
    return app.test_client(), clock


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_host_takes_a_robots_seat_away_before_the_start(room_client):
    client, _ = room_client
    r = client.post("/v1/rooms", json={"name": "Ada", "seed": "robot-unseat", "board": "beginner"})
    rid, host = r.json["room"]["id"], r.json["token"]
    guest = client.post(f"/v1/rooms/{rid}/players", json={"name": "Bo"}).json["token"]
    client.post(f"/v1/rooms/{rid}/robots", json={"strength": "master", "name": "Robi 2"}, headers=_bearer(host))
    client.post(f"/v1/rooms/{rid}/robots", json={"strength": "beginner"}, headers=_bearer(host))
    path = f"/v1/rooms/{rid}/robots/Robi%202"
    assert client.delete(path).status_code == 401
    assert client.delete(path, headers=_bearer(guest)).status_code == 403  # only the host
    for who in ("Bo", "Ada", "Nobody"):  # a person's seat is not a robot's
        gone = client.delete(f"/v1/rooms/{rid}/robots/{who}", headers=_bearer(host))
        assert gone.status_code == 404 and "no robot" in gone.json["detail"], gone.json
    assert client.delete("/v1/rooms/nosuchroom/robots/Robi", headers=_bearer(host)).status_code == 404
    r = client.delete(path, headers=_bearer(host))
    assert r.status_code == 200, r.json
    assert r.json["room"]["players"] == ["Ada", "Bo", "Beginner robot"]
    assert r.json["room"]["robots"] == {"Beginner robot": "beginner"}
    assert client.delete(path, headers=_bearer(host)).status_code == 404  # gone already
    assert client.get(f"/v1/rooms/{rid}").json["room"]["players"] == ["Ada", "Bo", "Beginner robot"]
    assert client.post(f"/v1/rooms/{rid}/start", headers=_bearer(host)).status_code == 200
    late = client.delete(f"/v1/rooms/{rid}/robots/Beginner%20robot", headers=_bearer(host))
    assert late.status_code == 409, late.json  # seated at the table now


def test_a_host_seats_a_robot_and_the_room_hears_it_bid(room_client):
    client, clock = room_client
    r = client.post("/v1/rooms", json={"name": "Ada", "seed": "robot-room", "board": "beginner"})
    assert r.status_code == 201, r.json
    rid, host = r.json["room"]["id"], r.json["token"]
    guest = client.post(f"/v1/rooms/{rid}/players", json={"name": "Bo"}).json["token"]
    # Only the host seats robots, of a strength the service knows.
    by_guest = client.post(f"/v1/rooms/{rid}/robots", json={"strength": "master"}, headers=_bearer(guest))
    assert by_guest.status_code == 403, by_guest.json
    assert client.post(f"/v1/rooms/{rid}/robots", json={"strength": "master"}).status_code == 401
    bad = client.post(f"/v1/rooms/{rid}/robots", json={"strength": "genius"}, headers=_bearer(host))
    assert bad.status_code == 400 and bad.json["field"] == "strength", bad.json
    r = client.post(f"/v1/rooms/{rid}/robots", json={"strength": "master"}, headers=_bearer(host))
    assert r.status_code == 201, r.json
    assert r.json["room"]["players"] == ["Ada", "Bo", "Master robot"]
    assert r.json["room"]["robots"] == {"Master robot": "master"}
    r = client.post(f"/v1/rooms/{rid}/robots", json={"strength": "beginner", "name": "Robi"}, headers=_bearer(host))
    assert r.json["room"]["robots"] == {"Master robot": "master", "Robi": "beginner"}
    taken = client.post(f"/v1/rooms/{rid}/robots", json={"strength": "master", "name": "Bo"}, headers=_bearer(host))
    assert taken.status_code == 409, taken.json
    started = client.post(f"/v1/rooms/{rid}/start", headers=_bearer(host))
    assert started.status_code == 200, started.json
    game = started.json["game"]
    assert [p.get("robot") for p in game["players"]] == [None, None, "master", "beginner"]
    assert "robots" not in game["round"]  # the robots' plans are nobody's to read
    late = client.post(f"/v1/rooms/{rid}/robots", json={"strength": "master"}, headers=_bearer(host))
    assert late.status_code == 409, late.json
    # The room's game, heard over its event stream as the referee's clock runs: the robots bid.
    clock.t += 300
    stream = client.get(f"/v1/games/{game['id']}/events?since=0").get_data(as_text=True)
    events = [json.loads(line[len("data: "):]) for line in stream.splitlines() if line.startswith("data: ")]
    first = events[:next((i for i, e in enumerate(events) if e["type"] == "round_over"), len(events))]
    robot_bids = [e for e in first if e["type"] == "bid" and e["player"] in ("Master robot", "Robi")]
    assert robot_bids, [e["type"] for e in events]
    # Same seed, same puzzle, same strength: the same bids at the same moments after the round's start.
    again = Game.create("g", ["Ada", "Bo", "Master robot", "Robi"], None, options_from_json({}),
                        "robot-room", 0.0, beginner=True, robots={"Master robot": "master", "Robi": "beginner"})
    found = solve(again.puzzle(), time_budget=10)
    planned = robot.plan("robot-room", "Master robot", "master", again.puzzle(), found.moves)
    start = started.json["now"]
    heard = [(e["moves"], round(e["at"] - start, 3)) for e in robot_bids if e["player"] == "Master robot"]
    assert heard == [(b.moves, b.at) for b in planned if b.at <= 300][:len(heard)] and heard


# -- the lobby's robots, in real browsers ---------------------------------------------------

TIMER = 5


@pytest.fixture(scope="module")
def base_url(redis_url):
    with served(create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False, "GAME_STREAMS": 32})) as url:
        yield url


def _quick_seed(name: str) -> str:
    """A seed whose first round the master robot `name` bids in within 15 s of its start."""
    options = options_from_json({"timer_seconds": TIMER})
    for n in range(100):
        game = Game.create("g", ["Ada", name], None, options, f"robots-{n}", 0.0, beginner=True,
                           robots={name: "master"})
        found = solve(game.puzzle(), time_budget=10)
        if found.length and robot.plan(f"robots-{n}", name, "master", game.puzzle(), found.moves)[0].at < 15:
            return f"robots-{n}"
    raise AssertionError("no fitting seed among 100")


@pytest.mark.parametrize(("lang", "size"), tours(2))
def test_a_host_seats_a_robot_in_the_lobby_and_it_plays(browser, base_url, lang, size):
    words = catalogue(lang)
    name = words["robot.name"].replace("{strength}", words["strength.master"])
    ctx = context(browser, lang, size, seen_how_to_play=True)
    try:
        page = ctx.new_page()
        tour = Tour(page, "room-robot", lang, size)
        page.goto(f"{base_url}/together?lang={lang}")
        page.fill("#create-name", "Ada")
        page.click('input[name="board"][value="beginner"]')
        page.click("#create details summary")
        page.fill("#timer-seconds", str(TIMER))
        page.fill("#chips", "1")
        page.fill("#seed", _quick_seed(name))
        page.click("#create button[type=submit]")
        page.wait_for_selector("#robot-form:not([hidden])")
        tour.state("lobby")
        page.select_option("#robot-strength", "master")
        page.click("#robot-form button")
        page.wait_for_function("document.querySelectorAll('#seated li').length === 2")
        seated = page.locator("#seated li.robot-player")
        assert seated.evaluate("li => li.firstChild.textContent") == words["player.robot"].replace("{name}", name)
        assert seated.locator(".unseat").get_attribute("aria-label") == \
            words["robot.remove_named"].replace("{name}", name)
        tour.state("robot-seated")
        press(page, "#seated .unseat", size == "phone")  # the host takes its seat away again, and seats it anew
        page.wait_for_function("document.querySelectorAll('#seated li').length === 1")
        page.click("#robot-form button")
        page.wait_for_function("document.querySelectorAll('#seated li').length === 2")
        page.click("#start")
        page.wait_for_selector("#table:not([hidden]) .robot", timeout=30_000)
        # The robot bids on the table as a player does, then shows its solution and wins the chip.
        page.wait_for_function("name => [...document.querySelectorAll('#bids li')].some(li => li.textContent"
                               ".startsWith(name))", arg=name, timeout=30_000)
        tour.state("robot-bid")
        page.wait_for_selector("#over:not([hidden])", timeout=40_000)
        assert name in page.text_content("#phase")
        tour.state("robot-won")
        if lang != "en":
            assert english_left(page, lang) == []
        assert tour.errors == []
    finally:
        ctx.close()
