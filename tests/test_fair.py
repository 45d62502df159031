"""Fair shares of the workers (issue 67): one client's big pack and queued solves
do not hold the only worker (the suite's, concurrency 1) while another client waits."""

from __future__ import annotations

import time

from application import Context, packs
from application.solving import SOLVES_PER_CLIENT
from service.app import create_app
from solver.production.pools import Library
from tests.helpers import issued_key, unpooled_board, wait_for_job
from workers.answers import Answers
from workers.embedded import EmbeddedRedis
from workers.messages import PACK_CHUNK
from workers.stores import Stores

# HARD of tests/test_jobs.py with other target colours and rules: 22 moves, 2-3 s of search each here,
# each asked once in a session (an answer found is cached, one that ran out is remembered).
SLOW = [{"board": "green-A,yellow-B,red-B,blue-B",
         "robots": {"red": [14, 2], "green": [1, 2], "blue": [13, 11], "yellow": [15, 0]},
         "target": {"cell": [3, 9], "colour": colour}, "rules": {"ricochet": rules}}
        for rules in ("none", "turn") for colour in ("red", "green", "yellow")]
SETTLED = ("succeeded", "failed", "cancelled")


def test_a_small_pack_and_a_solve_are_not_stuck_behind_a_big_pack(redis_url, celery_worker):
    """A asks for 120 searched puzzles (40 chunks of three), then B for 3 and a
    queued solve: B's work is done before A's pack is a third made (before, B's
    pack waited for every chunk of A's: A's pack was whole when B's was done),
    and A's pack still holds every puzzle."""
    client = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 0.01, "JOB_TIME_BUDGET": 3.0}).test_client()
    a, b = issued_key(redis_url), issued_key(redis_url)
    board = unpooled_board()
    big = client.post("/v1/packs", headers=a, json={"count": 120, "min_length": 10, "max_length": 10,
                                                    "seed": "fair-a", "board": board})
    assert big.status_code == 202, big.json
    deadline = time.monotonic() + 120
    while client.get(big.headers["Location"], headers=a).json["progress"] <= 0:  # A's chunks are being made
        assert time.monotonic() < deadline
        time.sleep(0.1)
    small = client.post("/v1/packs", headers=b, json={"count": 3, "min_length": 10, "max_length": 10,
                                                      "seed": "fair-b", "board": board})
    solve = client.post("/v1/solve", headers=b, json=SLOW[5])
    assert small.status_code == 202 and solve.status_code == 202, (small.json, solve.json)
    waiting, progress = {small.headers["Location"], solve.headers["Location"]}, None
    deadline = time.monotonic() + 600
    while waiting:
        for location in list(waiting):
            if client.get(location, headers=b).json["state"] in SETTLED:
                waiting.discard(location)
        progress = client.get(big.headers["Location"], headers=a).json["progress"]
        assert time.monotonic() < deadline, progress
        time.sleep(0.1)
    assert client.get(small.headers["Location"], headers=b).json["state"] == "succeeded"
    assert len(client.get(f"/v1/packs/{small.json['id']}", headers=b).json["puzzles"]) == 3
    # Behind every chunk of A's (40), B's one chunk ended with A's pack whole; fairly queued, after about
    # seven of A's (the chunk running, two queued before B's plan, two before B's chunk, A's first ones).
    assert progress < 1 / 3, f"B's work was done when A's pack was {progress:.0%} made"
    job = wait_for_job(client, big.headers["Location"], timeout=900)
    assert job["state"] == "succeeded" and job["result"]["made"] == 120, job
    puzzles = client.get(f"/v1/packs/{big.json['id']}", headers=a).json["puzzles"]
    assert [p["index"] for p in puzzles] == list(range(120))
    assert all(p["optimal_length"] == 10 for p in puzzles)


def test_one_client_holds_at_most_its_few_queued_solves(redis_url, celery_worker):
    """Beyond RICOCHET_QUEUED_SOLVES_PER_CLIENT (2) solves waiting or running, a
    client's next is refused with 429 and Retry-After, and nothing is queued for
    it; another client's is queued at once; once one of the first client's ends,
    it may queue again."""
    client = create_app({"REDIS_URL": redis_url, "SOLVE_TIME_BUDGET": 0.01, "JOB_TIME_BUDGET": 3.0}).test_client()
    assert client.application.config["MAX_QUEUED"][SOLVES_PER_CLIENT] == 2  # the setting's default
    a, b = issued_key(redis_url), issued_key(redis_url)
    first = [client.post("/v1/solve", headers=a, json=body) for body in SLOW[:2]]
    assert [r.status_code for r in first] == [202, 202], [r.json for r in first]
    refused = client.post("/v1/solve", headers=a, json=SLOW[2])
    assert refused.status_code == 429 and refused.json["type"] == "/problems/rate-limited", refused.json
    assert 1 <= int(refused.headers["Retry-After"]) <= 30
    assert "2 queued solves waiting or running" in refused.json["detail"]
    assert client.post("/v1/solve", headers=a, json=SLOW[2]).status_code == 429  # nothing was queued for it
    other = client.post("/v1/solve", headers=b, json=SLOW[3])
    assert other.status_code == 202, other.json
    for r in first:
        assert wait_for_job(client, r.headers["Location"], timeout=120)["state"] in ("succeeded", "failed")
    again = client.post("/v1/solve", headers=a, json=SLOW[2])
    assert again.status_code == 202, again.json
    for r in (other, again):
        assert wait_for_job(client, r.headers["Location"], timeout=120)["state"] in ("succeeded", "failed")


def test_held_chunks_are_queued_a_few_at_a_time_and_never_lost(tmp_path):
    """The store and use case under the dispatch, on a Redis of their own (the
    sweep tops up every client there): a client's chunks are queued two at a time,
    each one a worker takes making room for the next; held chunks are not "lost
    messages" for recover_pending; a cancelled pack's held chunks are dropped; and
    a worker that died between taking a chunk and queuing the next is made up for
    by the beat's sweep."""
    with EmbeddedRedis(tmp_path / "redis", persist=False) as redis:
        stores = Stores.from_url(redis.url)
        sent: list[tuple[str, list[list[int]]]] = []

        def send(message):
            assert message.spec is PACK_CHUNK
            sent.append((message.payload["job_id"], message.payload["items"]))

        ctx = Context(stores=stores, pools=Library([]), answers=Answers(stores, 1.0), send=send,
                      max_queued={packs.CHUNKS_PER_CLIENT: 2})
        job = stores.jobs.create("pack", {"count": 4}, asker="key:c1")
        assert stores.jobs.start(job["id"])
        stores.packs.hold_chunks(job["id"], packs.owner(job), {str(i): [[i, 10]] for i in range(4)})
        assert packs.release(ctx, "key:c1") == 2 and sent == [(job["id"], [[0, 10]]), (job["id"], [[1, 10]])]
        assert packs.release(ctx, "key:c1") == 0  # two wait for a worker already
        unheard = {key for pack, key, _ in stores.packs.unheard_chunks() if pack == job["id"]}
        assert unheard == {"0", "1"}  # sent, not received; 2 and 3 are held, not lost
        packs.chunk_received(ctx, job["id"], [[0, 10]])  # a worker takes chunk 0: chunk 2 is queued
        assert sent[-1] == (job["id"], [[2, 10]]) and stores.packs.queued_for("key:c1") == 2
        # A worker takes chunk 1 and dies before queuing the next: the beat's sweep queues it.
        stores.packs.taken(job["id"], "key:c1", "1")
        assert packs.recover_chunks(ctx, silence=3600) == [] and sent[-1] == (job["id"], [[3, 10]])
        assert stores.packs.holding() == []
        # Another pack of the same client, cancelled: its chunks are dropped as its first is taken.
        more = stores.jobs.create("pack", {"count": 3}, asker="key:c1")
        assert stores.jobs.start(more["id"])
        stores.packs.hold_chunks(more["id"], "key:c1", {str(i): [[i, 9]] for i in range(3)})
        stores.packs.chunk_done(job["id"], "2")
        stores.packs.chunk_done(job["id"], "3")
        assert packs.release(ctx, "key:c1") == 2  # the first pack's queued chunks are done: room for two
        stores.jobs.cancel(more["id"])
        before = len(sent)
        assert packs.make_chunk(ctx, more["id"], [[0, 9]]) == 0
        assert len(sent) == before and stores.packs.holding() == []
        assert not stores.redis.exists(f"pack:{more['id']}:chunks", f"pack:{more['id']}:held")
