"""Whole multiplayer games through the HTTP API (real Redis), with an injected clock."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from service.app import create_app
from solver.model.board import real_board
from solver.model.puzzle import Goal, Puzzle, Rules, moves_to_json
from solver.search.solve import solve


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


class Table:
    """A game seen from the players' side: their tokens, and a solver to find answers."""

    def __init__(self, redis_url: str, players: list[str], **body) -> None:
        self.clock = Clock()
        self.client = create_app({"REDIS_URL": redis_url, "CLOCK": self.clock, "GAME_SSE_SECONDS": 0.5,
                                  "RATE_LIMITS_ENABLED": False}).test_client()
        r = self.client.post("/v1/games", json={"players": players, **body})
        assert r.status_code == 201, r.json
        self.id, self.tokens = r.json["game"]["id"], r.json["tokens"]
        self.game = r.json["game"]

    def auth(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[name]}"}

    def look(self, since: int | None = None) -> dict:
        r = self.client.get(f"/v1/games/{self.id}" + (f"?since={since}" if since is not None else ""))
        assert r.status_code == 200, r.json
        self.game = r.json["game"]
        return r.json

    def bid(self, name: str, moves: int, status: int = 200):
        r = self.client.post(f"/v1/games/{self.id}/bids", json={"moves": moves}, headers=self.auth(name))
        assert r.status_code == status, r.json
        if status == 200:
            self.game = r.json["game"]
        return r

    def show(self, name: str, moves: list[dict]) -> dict:
        r = self.client.post(f"/v1/games/{self.id}/solutions", json={"moves": moves}, headers=self.auth(name))
        assert r.status_code == 200, r.json
        self.game = r.json["game"]
        return r.json["result"]

    def optimum(self) -> list[dict]:
        g = self.game
        chip = g["round"]["chip"]
        p = Puzzle.create(real_board(g["board"]), {c: tuple(v) for c, v in g["robots"].items()},
                          Goal(tuple(chip["cell"]), chip["colour"], chip["symbol"]), Rules(g["options"]["ricochet"]))
        return moves_to_json(solve(p).moves)

    def run_out(self) -> None:
        self.clock.t += self.game["options"]["timer_seconds"] + 1
        self.look()

    def win_round(self, winner: str, others: list[str] = ()) -> list[dict]:
        """The winner bids the optimum (others one more), the timer runs out, the winner shows it."""
        moves = self.optimum()
        self.bid(winner, len(moves))
        for o in others:
            self.bid(o, len(moves) + 1)
        self.run_out()
        assert self.game["phase"] == "verifying"
        assert self.game["round"]["order"][0]["player"] == winner
        result = self.show(winner, moves)
        assert result["success"], result
        return moves


def chips(table: Table) -> dict[str, int]:
    return {p["name"]: len(p["chips"]) for p in table.game["players"]}


@pytest.mark.parametrize("players,goal", [(2, 8), (3, 6), (4, 5)])
def test_game_to_the_chip_count(redis_url, players, goal):
    names = [f"p{i}" for i in range(players)]
    t = Table(redis_url, names, seed=f"count-{players}")
    rounds = 0
    while t.game["phase"] != "finished":
        winner = names[rounds % players] if rounds < goal * players - players else names[0]
        before = dict(t.game["robots"])
        moves = t.win_round(winner, [n for n in names if n != winner][:1])
        rounds += 1
        if t.game["phase"] != "finished":
            assert t.game["robots"] != before or not moves  # the moved robots stay where they ended
    assert max(chips(t).values()) == goal
    assert t.game["winners"] == [n for n, c in chips(t).items() if c == goal]
    history = t.game["history"]
    assert len(history) == rounds and all(h["optimal_length"] == h["length"] for h in history)
    assert all(h["optimal_solution"] for h in history)  # revealed after each round
    log = t.look(since=0)["events"]
    assert [e["version"] for e in log] == list(range(1, t.game["version"] + 1))


def test_six_players_play_every_chip_and_share_the_win(redis_url):
    names = ["a", "b", "c", "d", "e", "f"]
    t = Table(redis_url, names, seed="six", board="beginner")
    assert "D" not in t.game["board"]  # beginner: no diagonal-barrier sections
    plan = ["a", "b"] * 8 + ["c"]
    for winner in plan:
        t.win_round(winner)
    assert t.game["phase"] == "finished" and t.game["chips_left"] == 0
    assert t.game["winners"] == ["a", "b"] and chips(t) == {"a": 8, "b": 8, "c": 1, "d": 0, "e": 0, "f": 0}


@pytest.mark.parametrize("tie_break,first", [("fewer_chips", "bob"), ("first_bid", "ann")])
def test_tie_breaks(redis_url, tie_break, first):
    t = Table(redis_url, ["ann", "bob"], seed="tie", options={"tie_break": tie_break})
    t.win_round("ann")  # ann now holds one chip
    moves = t.optimum()
    t.bid("ann", len(moves))
    t.clock.t += 5
    t.bid("bob", len(moves))
    t.run_out()
    assert [o["player"] for o in t.game["round"]["order"]] == [first, "ann" if first == "bob" else "bob"]


def test_failed_then_successful_verification_and_bids_only_go_down(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="fail")
    moves = t.optimum()
    t.bid("ann", len(moves) + 1)
    t.bid("ann", len(moves) + 2, status=409)  # a bid may not go up
    t.bid("ann", len(moves))                   # but it may go down
    t.bid("bob", len(moves) + 1)
    t.run_out()
    robots = dict(t.game["robots"])
    wrong = t.show("ann", moves[:-1])
    assert not wrong["success"] and wrong["reason"]
    assert t.game["robots"] == robots  # the robots go back to their markers
    assert t.game["round"]["order"][0]["player"] == "bob"
    assert t.show("bob", moves)["success"]
    assert chips(t) == {"ann": 0, "bob": 1}
    assert [a["player"] for a in t.game["history"][0]["attempts"]] == ["ann", "bob"]


def test_a_bid_below_the_optimum_is_flagged_impossible(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="impossible")
    moves = t.optimum()
    if len(moves) < 2:
        pytest.skip("this seed's first round is too short")
    t.bid("ann", len(moves) - 1)
    t.run_out()
    result = t.show("ann", moves)
    assert not result["success"] and result["impossible_bid"] and "optimum" in result["reason"]


def test_idle_rule_and_no_bid_return_the_chip(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="idle", options={"idle_seconds": 120, "timer_seconds": 30})
    chip, left = t.game["round"]["chip"], t.game["chips_left"]
    t.clock.t += 119
    t.look()
    assert t.game["round"]["timer_ends"] is None
    t.clock.t += 1
    t.look()
    assert t.game["round"]["timer_started"] == 1_000_000.0 + 120  # the idle rule started the timer
    t.clock.t += 30
    seen = t.look(since=0)
    assert t.game["phase"] == "bidding" and t.game["round"]["number"] == 2 and t.game["chips_left"] == left
    assert t.game["history"][0]["winner"] is None and t.game["history"][0]["chip"] == chip
    types = [e["type"] for e in seen["events"]]
    assert types[-3:] == ["timer_started", "round_over", "round"]
    assert [e for e in seen["events"] if e["type"] == "timer_started"][0]["reason"] == "idle"


def test_nobody_shows_a_solution_and_the_chip_goes_back(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="none")
    t.bid("ann", 3)
    t.run_out()
    assert not t.show("ann", [])["success"]
    assert t.game["phase"] == "bidding" and t.game["history"][0]["winner"] is None


def test_solitaire_face_up_and_face_down(redis_url):
    t = Table(redis_url, ["solo"], seed="solo", options={"solitaire_timer_factor": 2, "timer_seconds": 30})
    assert t.game["round"]["timer_ends"] == t.game["round"]["started"] + 60  # twice the timer, running at once
    t.bid("solo", 5, status=409)  # no bids in solitaire
    up = 0
    while t.game["phase"] != "finished":
        if t.game["round"]["number"] % 3:
            assert t.show("solo", t.optimum())["success"]
            up += 1
        else:
            t.clock.t += 61
            t.look()
    me = t.game["players"][0]
    assert len(me["chips"]) == up and len(me["chips"]) + len(me["face_down"]) == 17
    assert t.game["winners"] == (["solo"] if up > 17 - up else [])


def test_infinity_scoring(redis_url):
    t = Table(redis_url, ["ann", "bob", "cy"], seed="inf", options={"scoring": "infinity", "infinity_target": 12})
    total = {"ann": 0, "bob": 0, "cy": 0}
    while t.game["phase"] != "finished":
        n = len(t.win_round("ann"))
        total["bob"] += n
        total["cy"] += n
    assert {p["name"]: p["score"] for p in t.game["players"]} == total
    assert max(total.values()) > 12 and t.game["winners"] == ["ann"]


def test_tokens_guard_the_players(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="tokens")
    url = f"/v1/games/{t.id}/bids"
    assert t.client.post(url, json={"moves": 5}).status_code == 401
    assert t.client.post(url, json={"moves": 5}, headers={"Authorization": "Bearer nope"}).status_code == 403
    other = Table(redis_url, ["cy", "dee"], seed="other")
    assert t.client.post(url, json={"moves": 5}, headers=other.auth("cy")).status_code == 403
    r = t.client.post(url, json={"moves": "five"}, headers=t.auth("ann"))
    assert r.status_code == 400 and r.json["field"] == "moves"
    assert t.client.get("/v1/games/nope").status_code == 404
    for since in ("", "-1", "x", "1e3"):  # left out is 0; given, it is a version number
        r = t.client.get(f"/v1/games/{t.id}?since={since}")
        assert r.status_code == 400 and r.json["field"] == "since", since
    bad = t.client.post("/v1/games", json={"players": ["a", "a"]})
    assert bad.status_code == 400 and bad.json["field"] == "players"
    bad = t.client.post("/v1/games", json={"players": ["a", "b"], "options": {"timer_seconds": 0}})
    assert bad.status_code == 400 and bad.json["field"] == "options.timer_seconds"


def test_state_survives_a_new_api_process(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="restart")
    t.bid("ann", 9)
    again = create_app({"REDIS_URL": redis_url, "CLOCK": t.clock}).test_client()
    game = again.get(f"/v1/games/{t.id}").json["game"]
    assert game["round"]["bids"][0]["player"] == "ann" and game["version"] == t.game["version"]


def test_server_sent_events_in_order_from_last_event_id(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="sse")
    t.bid("ann", 9)
    t.bid("bob", 8)
    r = t.client.get(f"/v1/games/{t.id}/events", headers={"Last-Event-ID": "2"})
    assert r.mimetype == "text/event-stream"
    blocks = [b for b in r.data.decode().split("\n\n") if b.startswith("id:")]
    events = [json.loads(b.split("data: ", 1)[1]) for b in blocks]
    assert [e["version"] for e in events] == [3, 4] and [e["type"] for e in events] == ["bid", "bid"]


def test_hundreds_of_simultaneous_bids_are_ordered_and_none_lost(redis_url):
    names = [f"p{i}" for i in range(16)]
    t = Table(redis_url, names, seed="rush", options={"timer_seconds": 3600})
    accepted: list[tuple[str, int]] = []
    lock = threading.Lock()

    def bidder(name: str) -> None:
        for moves in range(60, 40, -1):  # 20 bids each, always lower
            r = t.client.post(f"/v1/games/{t.id}/bids", json={"moves": moves}, headers=t.auth(name))
            if r.status_code == 200:
                with lock:
                    accepted.append((name, moves))

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(bidder, names))
    assert len(accepted) == 16 * 20  # every bid went down, so every one was accepted
    log = t.look(since=0)["events"]
    bids = [(e["player"], e["moves"]) for e in log if e["type"] == "bid"]
    assert sorted(bids) == sorted(accepted) and len(set(bids)) == len(bids)
    assert [e["version"] for e in log] == list(range(1, t.game["version"] + 1))
    stored = [(b["player"], b["moves"]) for b in t.game["round"]["bids"]]
    assert stored == bids  # the state and the log agree, in the server's order
    for name in names:
        mine = [m for p, m in stored if p == name]
        assert mine == sorted(mine, reverse=True)


def test_black_robot_and_a_chosen_board(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="black", board="green-A,yellow-B,red-B,blue-B",
              options={"black_robot": True, "chips_to_win": 2})
    assert t.game["board"] == "green-A,yellow-B,red-B,blue-B" and set(t.game["robots"]) == \
        {"red", "green", "blue", "yellow", "black"}
    board = real_board(t.game["board"])
    assert all(board.target_at(tuple(cell)) is None for cell in t.game["robots"].values())  # set-up rule
    t.win_round("ann")
    t.win_round("ann")
    assert t.game["phase"] == "finished" and t.game["winners"] == ["ann"]


def test_without_a_seed_the_deck_comes_from_a_secret(redis_url):
    """The game id is public: the deck must not be derivable from it."""
    from workers.stores import Stores

    client = create_app({"REDIS_URL": redis_url}).test_client()
    stores = Stores.from_url(redis_url)
    decks = []
    for _ in range(2):
        r = client.post("/v1/games", json={"players": ["ann", "bob"], "board": "green-A,yellow-B,red-B,blue-B"})
        assert r.status_code == 201, r.json
        gid = r.json["game"]["id"]
        state = stores.games.get(gid)
        assert state["seed"] != gid and "seed" not in r.json["game"] and "deck" not in r.json["game"]
        decks.append(state["deck"])
    assert decks[0] != decks[1]


def test_event_streams_beyond_a_process_share_are_told_to_poll(redis_url):
    """Each stream holds a thread: past GAME_STREAMS at once a process answers 503
    with Retry-After (clients poll ?since= instead), so streams never take every thread."""
    t = Table(redis_url, ["ann", "bob"], seed="streams")
    t.client.application.config["GAME_STREAMS"] = 1
    first = t.client.get(f"/v1/games/{t.id}/events", buffered=False)
    next(first.response)  # the stream has started and holds its place
    second = t.client.get(f"/v1/games/{t.id}/events")
    assert second.status_code == 503 and second.headers["Retry-After"] and "poll" in second.json["detail"]
    first.close()
    third = t.client.get(f"/v1/games/{t.id}/events")
    assert third.status_code == 200 and third.mimetype == "text/event-stream"


def test_an_abandoned_game_ends_whoever_keeps_polling(redis_url):
    """Three rounds in a row with no bid: nobody plays, and the game ends (it used to
    deal rounds forever to whoever polled)."""
    t = Table(redis_url, ["ann", "bob"], seed="abandoned", options={"idle_seconds": 60, "timer_seconds": 30})
    for _ in range(20):
        t.clock.t += 90
        t.look()
        if t.game["phase"] == "finished":
            break
    assert t.game["phase"] == "finished" and t.game["finish_reason"] == "abandoned"
    unplayed = [h for h in t.game["history"] if h.get("reason") == "the timer ran out with no bid"]
    assert len(unplayed) >= 3 and t.game["history"][-1]["reason"] == "the timer ran out with no bid"
    t.clock.t += 10_000
    assert t.look()["game"]["version"] == t.game["version"]  # nothing more happens


def test_the_referee_searches_outside_the_transaction(redis_url, monkeypatch):
    """A round's optimum is searched for between transactions, never inside the
    retried WATCH callback, and stays hidden until the round is over."""
    from application import games as games_module
    from workers.stores.base import connect
    from workers.stores.games import GameStore

    inside = {"now": False}
    original_update = GameStore.update

    def watched(self, gid, change, write=False):
        def flagged(state):
            inside["now"] = True
            try:
                return change(state)
            finally:
                inside["now"] = False
        return original_update(self, gid, flagged, write)

    searches = []
    original_solve = games_module.solve

    def solve(puzzle, **limits):
        assert not inside["now"], "the referee searched inside a transaction"
        searches.append(puzzle)
        return original_solve(puzzle, **limits)

    monkeypatch.setattr(GameStore, "update", watched)
    monkeypatch.setattr(games_module, "solve", solve)
    t = Table(redis_url, ["ann", "bob"], seed="referee")
    assert len(searches) == 1 and "optimal_length" not in t.game["round"]
    state = GameStore(connect(redis_url)).get(t.id)
    assert state["round"]["rating"] == "done" and state["round"]["optimal_length"] is not None
    t.look()
    assert len(searches) == 1  # rated once


def test_a_silent_verifier_loses_the_turn_and_the_game_moves_on(redis_url):
    t = Table(redis_url, ["ann", "bob"], seed="silent")
    moves = t.optimum()
    t.bid("ann", len(moves))
    t.bid("bob", len(moves) + 1)
    t.run_out()
    assert t.game["phase"] == "verifying" and t.game["round"]["order"][0]["player"] == "ann"
    number = t.game["round"]["number"]
    t.clock.t += t.game["options"]["timer_seconds"] + 1  # ann shows nothing
    t.look()
    assert t.game["phase"] == "verifying" and t.game["round"]["order"][0]["player"] == "bob"
    assert "no solution shown" in t.game["round"]["attempts"][0]["reason"]
    t.clock.t += t.game["options"]["timer_seconds"] + 1  # nor does bob
    t.look()
    assert t.game["phase"] == "bidding" and t.game["round"]["number"] == number + 1
    last = t.game["history"][-1]
    assert last["winner"] is None and last["reason"] == "no bidder showed a solution"
