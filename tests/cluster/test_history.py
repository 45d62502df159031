"""The cluster run's history check on made histories: it must fail each way a
run can go wrong, or a passing cluster run proves nothing.  (No namespaces:
these run everywhere.)"""

from __future__ import annotations

from tests.cluster.history import PACK_WITHIN, WRITES_WITHIN, Fault, History, check

T = 1_000_000.0


def _healthy() -> History:
    """A run that holds: a failover answered 503 for 3 s, a room, a rating, a key and a pack of 2 read back."""
    h = History()
    h.faults.append(Fault("Redis primary killed", T, healed=T + 5, allows_503=True))
    h.record(op="room", method="POST", path="/v1/rooms", t0=T - 2, t1=T - 1.9, status=201)
    h.record(op="ack-room", room="r1", t0=T - 1.9)
    h.record(op="ack-rating", player="p1", t0=T - 1.8)
    h.record(op="room", method="POST", path="/v1/rooms", t0=T + 1, t1=T + 3, status=503)
    h.record(op="daily", method="GET", path="/v1/daily", t0=T + 1, t1=T + 1.5, status=503)
    h.record(op="ack-pack", job="j1", t0=T - 1)
    h.record(op="pack-ended", job="j1", state="succeeded", t0=T + 20)
    h.packs["j1"] = {"request": {"count": 2}, "state": "succeeded", "puzzles": ["A", "B"], "unmade": []}
    h.keys.append({"name": "k", "issued": True, "listed": True})
    h.read_back.update(rooms={"r1": 200}, ratings={"p1": 1})
    return h


def test_a_run_that_holds_passes_with_its_figures():
    verdict = check(_healthy())
    assert verdict["ok"], verdict["problems"]
    [fault] = verdict["faults"]
    assert (fault["resumed_s"], fault["reads_resumed_s"], fault["answered_503"]) == (3.0, 1.5, 2)
    assert verdict["pack_seconds"] == [21.0] and verdict["acknowledged"] == {"room": 1, "rating": 1, "pack": 1}


def test_each_way_a_run_goes_wrong_fails_it():
    def problems(spoil) -> list[str]:
        h = _healthy()
        spoil(h)
        verdict = check(h)
        assert not verdict["ok"]
        return verdict["problems"]

    assert "acknowledged writes lost" in problems(lambda h: h.read_back["rooms"].update(r1=404))[0]
    assert "ratings ['p1']" in problems(lambda h: h.read_back["ratings"].update(p1=0))[0]
    assert "keys ['k']" in problems(lambda h: h.keys[0].update(listed=False))[0]
    assert "1 puzzles" in problems(lambda h: h.packs["j1"].update(puzzles=["A"]))[0]
    assert "1 distinct" in problems(lambda h: h.packs["j1"].update(puzzles=["A", "A"]))[0]
    assert "unmade" in problems(lambda h: h.packs["j1"].update(unmade=["no puzzle of 13 moves: ..."]))[0]
    assert "ended failed" in problems(lambda h: h.packs["j1"].update(state="failed"))[0]
    assert "puzzles not of the lengths" in check(_healthy(), {"j1": ["B"]})["problems"][0]
    # a 500, or a 503 where no failover allows it
    assert "beyond the documented 503s" in problems(lambda h: h.events.append(
        {"op": "daily", "method": "GET", "t0": T + 2, "t1": T + 2.1, "status": 500}))[0]
    assert "beyond the documented 503s" in problems(lambda h: setattr(h.faults[0], "allows_503", False))[0]
    # back, but later than the runbook says
    late = T + WRITES_WITHIN + 1
    assert "writes after" in problems(lambda h: h.events.append(
        {"op": "room", "method": "POST", "t0": late - 1, "t1": late, "status": 503}))[0]
    assert "longer than" in problems(lambda h: h.events.append(
        {"op": "pack-ended", "job": "j1", "t0": T + PACK_WITHIN + 5}))[0]
    assert "not rated" in problems(lambda h: h.record(op="unrated", player="p2", reason="checked", t0=T))[0]
    assert "before any fault" in problems(lambda h: h.events.append(
        {"op": "health", "method": "GET", "t0": T - 5, "t1": T - 4.9, "status": 0}))[0]
    assert "answered 4xx" in problems(lambda h: h.events.append(
        {"op": "pack", "method": "POST", "t0": T + 6, "t1": T + 6.1, "status": 422}))[0]
    assert "nothing of some kind" in problems(lambda h: h.events.remove(
        next(e for e in h.events if e["op"] == "ack-pack")))[-1]


def test_the_read_back_after_the_stop_is_no_faults_figure():
    """What the client reads back once the workload stopped is not counted in the last fault's window."""
    h = _healthy()
    h.stopped = T + 10
    h.record(op="read-back", method="GET", path="/v1/rooms/r1", t0=T + 11, t1=T + 11.1, status=200)
    h.record(op="daily", method="GET", path="/v1/daily", t0=T + 12, t1=T + 12.1, status=200)
    [fault] = check(h)["faults"]
    assert fault["requests"] == 2  # the room and the daily answered 503 during it
