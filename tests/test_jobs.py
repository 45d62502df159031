"""Solving through the API with a real Redis and a real Celery worker: cache, jobs, outages."""

from __future__ import annotations

import time
import uuid

from service.app import create_app
from tests.helpers import wait_for_job
from workers.embedded import free_port

HARD = {"board": "green-A,yellow-B,red-B,blue-B",
        "robots": {"red": [14, 2], "green": [1, 2], "blue": [13, 11], "yellow": [15, 0]},
        "target": {"cell": [3, 9], "colour": "blue"}, "rules": {"ricochet": "none"}}


def test_slow_solve_becomes_a_job_then_a_cached_answer(redis_url, celery_worker):
    client = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 0.01}).test_client()
    r = client.post("/v1/solve", json=HARD)
    assert r.status_code == 202 and r.headers["Location"].startswith("/v1/jobs/")
    assert r.json["state"] == "pending"
    twice = client.post("/v1/solve", json=HARD)  # the same work in flight: the same job
    assert twice.status_code == 202 and twice.json["id"] == r.json["id"]
    deadline = time.monotonic() + 120
    while True:
        job = client.get(r.headers["Location"]).json
        if job["state"] in ("succeeded", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert job["state"] == "succeeded" and job["progress"] == 1.0
    assert job["result"]["status"] == "optimal" and job["result"]["length"] == 24
    again = client.post("/v1/solve", json=HARD)
    assert again.status_code == 200 and again.headers["X-Cache"] == "hit" and again.json["length"] == 24


def test_quick_solves_answer_at_once_and_are_cached(redis_url):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    body = {**HARD, "target": {"colour": "red", "symbol": "circle"}}
    first = client.post("/v1/solve", json=body)
    assert first.status_code == 200 and "X-Cache" not in first.headers
    second = client.post("/v1/solve", json=body)
    assert second.headers["X-Cache"] == "hit" and second.json["moves"] == first.json["moves"]


def test_unknown_job_is_404(redis_url):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    r = client.get("/v1/jobs/nope")
    assert r.status_code == 404 and r.mimetype == "application/problem+json"


def test_redis_down_is_503_with_retry_after():
    client = create_app({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}).test_client()
    r = client.post("/v1/solve", json=HARD)
    assert r.status_code == 503 and r.headers["Retry-After"] and r.mimetype == "application/problem+json"


def test_readyz_needs_redis_and_a_worker(redis_url, celery_worker):
    r = create_app({"REDIS_URL": redis_url}).test_client().get("/readyz")
    assert r.status_code == 200 and r.json["workers"] >= 1
    down = create_app({"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}).test_client().get("/readyz")
    assert down.status_code == 503


def _sample(text: str, line_start: str) -> float:
    """The value of the Prometheus sample whose line starts so (0 when absent)."""
    return next((float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(line_start)), 0.0)


def test_metrics_count_requests_and_cache_hits(redis_url):
    """The counters move by what this test does (they are the process's: earlier
    tests may have left counts, so the test reads them before and after)."""
    client = create_app({"REDIS_URL": redis_url}).test_client()
    solved = 'ricochet_http_requests_total{endpoint="/v1/solve",method="POST",status="200"}'
    hits = 'ricochet_solve_cache_total{result="hit"}'
    before = client.get("/metrics").data.decode()
    body = {**HARD, "target": {"colour": "green", "symbol": "triangle"}}
    client.post("/v1/solve", json=body)
    assert client.post("/v1/solve", json=body).headers["X-Cache"] == "hit"
    after = client.get("/metrics").data.decode()
    assert _sample(after, solved) == _sample(before, solved) + 2
    assert _sample(after, hits) >= _sample(before, hits) + 1
    assert "ricochet_queue_depth" in after and "ricochet_solve_seconds_bucket" in after


def test_a_solve_over_its_budget_ends_clearly_and_frees_the_worker(redis_url, celery_worker):
    from workers.app import make_celery
    from workers.stores import Stores

    client = create_app({"REDIS_URL": redis_url}).test_client()
    stores, celery = Stores.from_url(redis_url), make_celery(redis_url)
    slow = stores.jobs.create("solve", {"puzzle": HARD})
    celery.send_task("ricochet.solve", args=[slow["id"], HARD, 0.2])
    job = wait_for_job(client, f"/v1/jobs/{slow['id']}")
    assert job["state"] == "failed" and job["error"].startswith("timeout:")
    assert job["result"]["status"] == "timeout" and "no solution has fewer than" in job["error"]
    quick_puzzle = client.get("/v1/puzzles/AQ2VAA8uIr0PAAk").json
    quick = stores.jobs.create("solve", {})
    celery.send_task("ricochet.solve", args=[quick["id"], {k: quick_puzzle[k] for k in
                                                          ("board", "robots", "target", "rules")}, 5.0])
    done = wait_for_job(client, f"/v1/jobs/{quick['id']}", 30)
    assert done["state"] == "succeeded", done


def test_bad_task_payloads_are_rejected_before_any_work(redis_url, celery_worker):
    from workers.app import make_celery
    from workers.stores import Stores

    client = create_app({"REDIS_URL": redis_url}).test_client()
    stores, celery = Stores.from_url(redis_url), make_celery(redis_url)
    for args, field in (([HARD, "soon"], "time_budget"), ([HARD, 10_000], "time_budget"),
                        ([{**HARD, "board": 3}, 1.0], "board")):
        job = stores.jobs.create("solve", {})
        celery.send_task("ricochet.solve", args=[job["id"], *args])
        done = wait_for_job(client, f"/v1/jobs/{job['id']}", 30)
        assert done["state"] == "failed" and field in done["error"] and done["started"] is None


def test_a_search_that_ran_out_of_time_is_not_repeated(redis_url):
    """Verify and the solution picture of a puzzle too hard for the request's
    budget search once; asked again, they answer from what is remembered."""
    from workers.stores import Stores

    UNSEEN = {**HARD, "rules": {"ricochet": "turn"}}  # a puzzle no other test solves  # noqa: N806
    client = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 0.01}).test_client()
    stores = Stores.from_url(redis_url)
    from solver.model.puzzle import Puzzle

    key = Puzzle.from_json(UNSEEN).content_hash()
    first = client.post("/v1/verify", json={"puzzle": UNSEEN, "moves": []})
    assert first.status_code == 200 and first.json["optimality"] == "unknown"
    assert stores.answers.unsettled(key, 0.01)[1] == "timeout"
    again = client.post("/v1/verify", json={"puzzle": UNSEEN, "moves": []})
    assert again.json == first.json
    code = Puzzle.from_json(UNSEEN).code()
    picture = client.get(f"/v1/puzzles/{code}.svg?solution=true")
    plain = client.get(f"/v1/puzzles/{code}.svg")
    assert picture.status_code == 200 and picture.data == plain.data  # not known in time: no route drawn
    rated = client.post("/v1/difficulty", json=UNSEEN)  # no second search: the bound it proved
    assert rated.status_code == 422 and rated.json["type"].endswith("needs-a-job")


def test_answers_come_from_the_store_else_one_search_remembered(redis_url):
    """The one piece the views and the solve task share: a search's end is
    remembered (settled: kept; out of time: its bound, for that budget)."""
    from solver.model.puzzle import Puzzle
    from workers.answers import Answers
    from workers.stores import Stores

    stores = Stores.from_url(redis_url)
    # Puzzles no other test asks for (tests/test_fair.py's SLOW solve HARD's other colours): the store is the
    # test process's, shared by the tests it runs, in whatever order they come.
    hard = Puzzle.from_json({**HARD, "rules": {"ricochet": "none", "vortex_sightline": True},
                             "target": {"cell": [3, 9], "colour": "green"}})
    quick = Puzzle.from_json({**HARD, "target": {"colour": "green", "symbol": "triangle"},  # no other test's
                              "rules": {"ricochet": "none", "vortex_sightline": True}})
    short = Answers(stores, 0.002)
    first, source = short.lookup(hard)
    assert source == "search" and first["status"] == "timeout" and first["code"] == hard.code()
    again, source = short.lookup(hard)
    assert source == "unsettled" and again["status"] == "timeout" and again["lower_bound"] == first["lower_bound"]
    assert short.optimum(hard) == (None, False) and short.settled(hard) is None
    answer, source = Answers(stores, 1.0).lookup(quick)
    assert source == "search" and answer["status"] == "optimal"
    kept, source = short.lookup(quick)
    assert source == "store" and kept["moves"] == answer["moves"]
    assert short.settled(quick).moves == Answers(None, 1.0).settled(quick).moves
    assert short.optimum(quick) == (answer["length"], True)


def test_a_job_whose_search_ran_out_is_not_queued_again(redis_url, celery_worker, quadrant_test_puzzles):
    """A queued search that ran out of its budget (time, or memory: state_limit)
    is remembered for that budget: asked again, the solve answers how it ended,
    at once, instead of running (and charging) the same search again."""
    from solver.model.puzzle import Puzzle
    from workers.stores import Stores

    deepest = max(quadrant_test_puzzles, key=lambda t: t["optimal_moves"])  # 25 moves: about a second's search
    robots = deepest["robots"]
    colours = list(robots)
    swapped = {**robots, colours[1]: robots[colours[2]], colours[2]: robots[colours[1]]}  # no other test's puzzle
    unseen = {k: deepest[k] for k in ("board", "target")} | {"robots": swapped}
    client = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 0.01, "JOB_TIME_BUDGET": 0.02}).test_client()
    first = client.post("/v1/solve", json=unseen)
    assert first.status_code == 202
    job = wait_for_job(client, first.headers["Location"], 60)
    assert job["state"] == "failed" and job["result"]["status"] == "timeout", job
    again = client.post("/v1/solve", json=unseen)
    assert again.status_code == 200 and again.json["status"] == "timeout", again.json
    assert again.json["lower_bound"] == job["result"]["lower_bound"]
    # Out of memory is remembered the same way (a search that takes 860 MiB is not run twice).
    other = {**unseen, "robots": {**swapped, colours[3]: robots[colours[0]], colours[0]: robots[colours[3]]}}
    Stores.from_url(redis_url).answers.save_unsettled(Puzzle.from_json(other).content_hash(), 0.02, 14, "state_limit")
    ended = client.post("/v1/solve", json=other)
    assert ended.status_code == 200 and ended.json["status"] == "state_limit" and ended.json["lower_bound"] == 14


def test_a_request_search_that_runs_out_of_memory_becomes_a_job(redis_url, quadrant_test_puzzles):
    """A request's own search has a memory budget (RICOCHET_SOLVE_STATE_MB) as well
    as a time budget: a puzzle that needs bigger tables is queued as a job (202),
    as one that needs more time is, and the request's bound is remembered."""
    deepest = max(quadrant_test_puzzles, key=lambda t: t["optimal_moves"])
    robots = deepest["robots"]
    colours = list(robots)
    rotated = {c: robots[colours[(i + 1) % len(colours)]] for i, c in enumerate(colours)}  # no other test's puzzle
    puzzle = {k: deepest[k] for k in ("board", "target")} | {"robots": rotated, "rules": {"ricochet": "none"}}
    client = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 30.0,
                         "SOLVE_STATE_BUDGET": 1 << 20}).test_client()
    r = client.post("/v1/solve", json=puzzle)
    assert r.status_code == 202 and r.headers["Location"].startswith("/v1/jobs/"), r.json
    client.delete(r.headers["Location"])  # no worker here needs to run it
    verdict = client.post("/v1/verify", json={"puzzle": puzzle, "moves": []}).json
    assert verdict["optimality"] == "unknown" and verdict["optimal_length"] is None


def test_a_process_runs_few_request_searches_at_once(redis_url, quadrant_test_puzzles):
    """A web process's searches share its room (two at once, each within
    RICOCHET_SOLVE_STATE_MB): a request that finds none within its budget is
    queued as a job, and nothing is remembered of a search that did not run."""
    import threading

    from solver.model.puzzle import Puzzle
    from workers.stores import Stores

    app = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 0.2})
    room = app.extensions["searches"]
    taken = [room.acquire(blocking=False) for _ in range(2)]
    assert taken == [True, True] and not room.acquire(blocking=False)
    deepest = max(quadrant_test_puzzles, key=lambda t: t["optimal_moves"])
    robots = deepest["robots"]
    colours = list(robots)
    turned = {c: robots[colours[(i + 2) % len(colours)]] for i, c in enumerate(colours)}  # no other test's puzzle
    puzzle = {k: deepest[k] for k in ("board", "target")} | {"robots": turned, "rules": {"ricochet": "none"}}
    client = app.test_client()
    r = client.post("/v1/solve", json=puzzle)
    assert r.status_code == 202, r.json
    client.delete(r.headers["Location"])
    assert Stores.from_url(redis_url).answers.unsettled(Puzzle.from_json(puzzle).content_hash(), 0.2) is None
    threading.Timer(0.05, room.release).start()  # room frees up within the budget: the search runs
    quick = {**puzzle, "target": {"colour": "red", "symbol": "circle"}}
    answered = client.post("/v1/solve", json=quick)
    assert answered.status_code == 200 and answered.json["status"] == "optimal", answered.json
    room.release()


def test_a_job_belongs_to_the_clients_that_asked_for_it(redis_url):
    """Issue 57: only a client that asked for a job may cancel it (403 for another);
    identical solves share one job, which stops only when nobody who asked wants
    it; each client that asks is charged once."""
    unworked = redis_url.rsplit("/", 1)[0] + "/7"  # a database no test's worker takes jobs from: they stay open
    app = create_app({"REDIS_URL": unworked, "SOLVE_TIME_BUDGET": 0.01, "JOB_TIME_BUDGET": 60.0,
                      "QUOTAS": {"solve": 3600, "pack": 1000}})
    ann, bob, eve = (app.test_client() for _ in range(3))
    at = {c: {"REMOTE_ADDR": f"10.57.{i}.{uuid.uuid4().int % 250}"} for i, c in enumerate(("ann", "bob", "eve"))}
    robots = HARD["robots"]
    colours = list(robots)
    puzzle = {**HARD, "robots": {c: robots[colours[(i + 3) % 4]] for i, c in enumerate(colours)}}
    first = ann.post("/v1/solve", json=puzzle, environ_base=at["ann"])
    assert first.status_code == 202 and first.headers["X-Quota-Remaining"] == str(3600 - 60), first.json
    again = ann.post("/v1/solve", json=puzzle, environ_base=at["ann"])
    assert again.json["id"] == first.json["id"] and "X-Quota-Remaining" not in again.headers  # charged once
    joined = bob.post("/v1/solve", json=puzzle, environ_base=at["bob"])
    assert joined.json["id"] == first.json["id"] and joined.headers["X-Quota-Remaining"] == str(3600 - 60)
    assert "X-Quota-Remaining" not in bob.post("/v1/solve", json=puzzle, environ_base=at["bob"]).headers
    url = first.headers["Location"]
    refused = eve.delete(url, environ_base=at["eve"])
    assert refused.status_code == 403 and refused.json["type"] == "/problems/forbidden", refused.json
    assert ann.get(url).json["state"] == "pending"
    withdrawn = ann.delete(url, environ_base=at["ann"])
    assert withdrawn.status_code == 200 and withdrawn.json["state"] == "pending"  # bob still wants it
    last = bob.delete(url, environ_base=at["bob"])
    assert last.status_code == 200 and last.json["state"] == "cancelled"
    assert ann.delete(url, environ_base=at["ann"]).json["state"] == "cancelled"  # harmless twice


def test_a_full_interactive_queue_is_solves_waiting_not_the_beats_sweeps(redis_url):
    """Issue 57's soak: behind a worker busy with long searches the beat's sweeps
    piled up in the interactive queue's list, and new solves were refused (503)
    though few solves waited.  The limit counts the solves no worker has started;
    one cancelled waits no more."""
    import redis

    base, _, _ = redis_url.rpartition("/")
    url = f"{base}/12"  # a database of its own: the count is the deployment's
    r = redis.Redis.from_url(url)
    r.flushdb()
    try:
        for _ in range(5):
            r.lpush("ricochet", b"a sweep no worker took yet")
        client = create_app({"REDIS_URL": url, "SOLVE_TIME_BUDGET": 0.01, "RATE_LIMITS_ENABLED": False,
                             "MAX_QUEUED": {"ricochet": 2, "packs": 5000}}).test_client()
        puzzles = [{**HARD, "rules": {"ricochet": rule, "vortex_sightline": sightline}}
                   for rule in ("turn", "none") for sightline in (True, False)]
        first, second, third = (client.post("/v1/solve", json=p) for p in puzzles[:3])
        assert first.status_code == second.status_code == 202, (first.json, second.json)
        assert third.status_code == 503 and third.headers["Retry-After"], third.json
        assert "2 solves waiting for a worker" in third.json["detail"]
        assert client.delete(first.headers["Location"]).json["state"] == "cancelled"
        assert client.post("/v1/solve", json=puzzles[3]).status_code == 202
    finally:
        r.flushdb()
