"""Sentinel and replicas on one machine: a real primary, a replica and three
Sentinels (tests/sentinels.py) on free local ports.  The primary is killed,
the Sentinels promote the replica, and the stores, the API and a Celery worker
follow it; a change the API acknowledged is held by a replica first."""

from __future__ import annotations

import os
import signal
import time

import pytest

from service.app import create_app
from tests.sentinels import Group, redis_binary
from workers import failover
from workers.embedded import EmbeddedRedis
from workers.settings import Settings, SettingsError
from workers.stores import Stores, Unavailable

pytestmark = pytest.mark.skipif(redis_binary() is None, reason="redis-server is not installed (make install)")


@pytest.fixture(scope="module")
def sentinel_group(tmp_path_factory):
    g = Group(tmp_path_factory.mktemp("sentinels")).start()
    yield g
    g.stop()


@pytest.fixture
def group(sentinel_group):
    """The group, whole again before each test (a killed server restarted, as a replica)."""
    for name, process in sentinel_group.processes.items():
        if name.startswith("redis") and process.poll() is not None:
            sentinel_group.restart(name)
    sentinel_group.wait_ready()
    return sentinel_group


def settings_of(group: Group, **more: str) -> Settings:
    return Settings.from_env(group.env(**more))


def test_sentinel_settings_are_read_and_checked():
    s = Settings.from_env({"RICOCHET_SENTINELS": "10.0.0.1:26379, [::1]:26380", "RICOCHET_WAIT_REPLICAS": "1",
                           "REDIS_URL": "redis://:pw@ignored/3"})
    assert s.sentinels == (("10.0.0.1", 26379), ("::1", 26380)) and s.wait_replicas == 1 and s.wait_ms == 1000
    assert s.sentinel_service == "ricochet"
    for variable, bad in (("RICOCHET_SENTINELS", "nohost"), ("RICOCHET_SENTINELS", "h:0"),
                          ("RICOCHET_SENTINEL_SERVICE", "a b"), ("RICOCHET_WAIT_REPLICAS", "9")):
        with pytest.raises(SettingsError, match=variable):
            Settings.from_env({variable: bad})
    url, options = failover.celery_redis(s, s.redis_url)
    assert url == "sentinel://:pw@10.0.0.1:26379/3;sentinel://:pw@::1:26380/3" and options["master_name"] == "ricochet"
    uri, options = failover.limiter_storage(s)
    assert uri == "redis+sentinel://:pw@10.0.0.1:26379,::1:26380/ricochet" and options["db"] == 3


def wait_for(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.1)


def _promoted(group: Group, old: tuple[str, int], timeout: float = 30) -> tuple[str, int]:
    wait_for(lambda: group.primary() not in (None, old), timeout=timeout, what="a replica promoted by the Sentinels")
    return group.primary()


def test_the_stores_follow_a_failover(group):
    settings = settings_of(group)
    patient, impatient = Stores.from_settings(settings, patient=True), Stores.from_settings(settings)
    job = patient.jobs.create("pack", {"count": 1})
    assert patient.settle(1, 1000) == 1  # held by the replica
    old = group.primary()
    group.kill(group.name_of(old))
    killed = time.monotonic()
    with pytest.raises(Unavailable):  # the API's client answers 503 at once while there is no primary
        impatient.jobs.get(job["id"])
    # The patient client (the workers') retries until the Sentinels name the replica, then carries on there.
    later = patient.jobs.create("pack", {"count": 2})
    followed = time.monotonic() - killed
    new = group.primary()
    assert new != old and new in group.servers
    assert patient.jobs.get(job["id"])["id"] == job["id"] and impatient.jobs.get(later["id"]) is not None
    assert followed < 30, f"took {followed:.1f} s to follow the failover"


def test_a_change_is_acknowledged_only_once_a_replica_holds_it(group):
    # 2 s for the replica's word: 300 ms was not always enough with six test processes on two cores.
    settings = settings_of(group, RICOCHET_WAIT_REPLICAS="1", RICOCHET_WAIT_MS="2000", RICOCHET_RATE_LIMITS="off")
    client = create_app(settings=settings).test_client()
    made = client.post("/v1/rooms", json={"name": "Ada"})
    assert made.status_code == 201, made.get_json()
    room = made.get_json()["room"]["id"]
    # The replica stalls: the API cannot have its change held, and says so rather than acknowledging it.
    replica = group.processes[group.name_of(next(a for a in group.servers if a != group.primary()))]
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        stalled = client.post("/v1/rooms", json={"name": "Bob"})
        read = client.get(f"/v1/rooms/{room}")  # reads do not wait
    finally:
        os.kill(replica.pid, signal.SIGCONT)
    assert stalled.status_code == 503 and "replica" in stalled.get_json()["detail"]
    assert stalled.headers["Retry-After"] == "1" and read.status_code == 200
    # The primary is lost right after the acknowledgement: the promoted replica has the room.
    old = group.primary()
    group.kill(group.name_of(old))
    _promoted(group, old)
    group.restart(group.name_of(old))  # as a supervisor would: it comes back as the new primary's replica
    wait_for(lambda: client.get(f"/v1/rooms/{room}").status_code == 200, timeout=30, what="the API on the new primary")
    assert client.get(f"/v1/rooms/{room}").get_json()["room"]["id"] == room


def test_the_rate_limits_follow_a_failover(group):
    """The limiter fails open on a Redis it cannot reach (a request must not fail for
    its counter): so unless it follows the Sentinels, a failover would silently lift
    every limit.  A client is refused its fifth request before one and, within seconds
    (a stale pooled connection lets a request through once), after one."""
    settings = settings_of(group, RICOCHET_RATE_LIMIT="4 per minute")
    client = create_app(settings=settings).test_client()

    def codes(address: str) -> list[int]:
        return [client.get("/v1/boards", environ_base={"REMOTE_ADDR": address}).status_code for _ in range(5)]

    assert codes("10.61.0.1") == [200, 200, 200, 200, 429]
    old = group.primary()
    group.kill(group.name_of(old))
    _promoted(group, old)
    # Each pooled connection to the old primary fails once ("Failed to rate limit", swallowed: those
    # requests pass unlimited); then the limiter counts on the new primary.  A fresh address each try.
    fresh = (f"10.61.1.{n}" for n in range(1, 250))
    wait_for(lambda: codes(next(fresh)) == [200, 200, 200, 200, 429], timeout=30, what="limits on the new primary")
    assert codes("10.61.0.3") == [200, 200, 200, 200, 429]


def test_a_pack_whose_task_could_not_be_sent_is_sent_on_retry(tmp_path):
    """Redis (the broker) goes between the job's record and its task: the client is
    answered 503, and its retry with the same Idempotency-Key queues the pack,
    rather than replaying a job that was never sent (it would wait for ever)."""
    with EmbeddedRedis(tmp_path) as private:  # no worker of the session drains its queue
        redis_url = private.url
        from tests.helpers import unpooled_board
        from workers.app import make_celery

        app = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False})
        stores, celery = app.extensions["stores"], app.extensions["celery"]
        stores.redis.delete("packs")
        body = {"count": 2, "min_length": 6, "max_length": 7, "seed": "sent", "board": unpooled_board()}
        headers = {"Idempotency-Key": f"sent-{time.time()}"}
        app.extensions["celery"] = make_celery("redis://127.0.0.1:9/0")  # a broker nobody answers at
        app.extensions["celery"].conf.update(result_backend=None, broker_connection_max_retries=0,
                                             broker_transport_options={"max_retries": 0})
        refused = app.test_client().post("/v1/packs", json=body, headers=headers)
        assert refused.status_code == 503
        app.extensions["celery"] = celery
        accepted = app.test_client().post("/v1/packs", json=body, headers=headers)
        assert accepted.status_code == 202
        assert stores.queued("packs") == 1  # its task is in the queue for a worker
        again = app.test_client().post("/v1/packs", json=body, headers=headers)
        assert again.get_json()["id"] == accepted.get_json()["id"] and stores.queued("packs") == 1


def _sweep_pending(redis_url: str, stores: Stores) -> list[str]:
    """One run of the beat's recover_pending on a Celery app given these stores, 0.5 s of silence."""
    from workers import tasks  # noqa: F401 - the tasks, on every app the factory makes
    from workers.app import make_celery
    from workers.messages import RECOVER_PENDING

    return make_celery(redis_url, stores=stores).tasks[RECOVER_PENDING.name](silence=0.5)


def test_a_pack_whose_message_was_lost_is_sent_again(redis_url, celery_worker):
    """A worker's host goes while the broker hands it the pack's message (before the
    worker records it as unacknowledged, so the broker will not hand it out again):
    the job would stay pending for ever; the beat's recover_pending sends it again."""
    from tests.helpers import pack_request, unpooled_board, wait_for_job

    app = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False})
    stores = app.extensions["stores"]
    request = pack_request({"count": 2, "min_length": 6, "max_length": 7, "seed": "lost", "board": unpooled_board()})
    job = stores.jobs.create("pack", request)  # recorded and answered 202, its message lost on the way
    time.sleep(0.6)
    assert job["id"] in _sweep_pending(redis_url, stores)  # as the beat runs it
    done = wait_for_job(app.test_client(), f"/v1/jobs/{job['id']}", timeout=120)
    assert done["state"] == "succeeded"
    time.sleep(0.6)
    _sweep_pending(redis_url, stores)
    assert job["id"] not in stores.jobs.pending(0)  # a started job is forgotten


def test_a_chunk_whose_message_was_lost_is_sent_again(redis_url, celery_worker):
    """The same for a pack's chunk: planned and recorded, its message lost on the
    way (no worker received it, so it has no heartbeat for recover_chunks to miss)."""
    from solver.production.packs import plan_for
    from solver.production.pools import Library, packaged
    from tests.helpers import pack_request, unpooled_board, wait_for_job

    app = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False})
    stores = app.extensions["stores"]
    request = pack_request({"count": 2, "min_length": 6, "max_length": 7, "seed": "chunk", "board": unpooled_board()})
    job = stores.jobs.create("pack", request)
    assert stores.jobs.start(job["id"])
    chunk = [[p.index, p.length] for p in plan_for(request, Library([packaged()]))]
    stores.packs.track_chunks(job["id"], {str(chunk[0][0]): chunk})  # as a pack's plan does; then its send is lost
    time.sleep(0.6)
    assert f"{job['id']}:{chunk[0][0]}" in _sweep_pending(redis_url, stores)
    done = wait_for_job(app.test_client(), f"/v1/jobs/{job['id']}", timeout=120)
    assert done["state"] == "succeeded" and len(stores.packs.items(done["pack_id"], 2)) == 2
