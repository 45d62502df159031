"""The tasks' messages, declared once (workers/messages.py) and checked at both
ends; the Celery app made by one factory, giving the tasks their stores."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from solver.errors import InvalidInput
from solver.play import daily
from workers import tasks
from workers.app import make_celery
from workers.messages import PACK, PACK_CHUNK, POOL_BUILD, PRECOMPUTE_DAILY, SOLVE, TASKS
from workers.stores import Stores

ROOT = Path(__file__).resolve().parents[1]
HARD = {"board": "green-C,red-D,blue-A,yellow-D", "robots": {"red": [0, 0], "green": [15, 15], "blue": [0, 15],
                                                             "yellow": [15, 0]},
        "target": {"colour": "red", "symbol": "moon"}}


def test_every_task_is_declared_once_and_registered_under_its_spec():
    celery = make_celery("redis://127.0.0.1:1/0")
    ours = {name for name in celery.tasks if name.startswith("ricochet.")}
    assert ours == set(TASKS) and tasks.solve_task.name == SOLVE.name
    assert {r["queue"] for r in celery.conf.task_routes.values()} == {"ricochet", "packs", "analysis", "webhooks"}
    assert {e["task"] for e in celery.conf.beat_schedule.values()} == {n for n, s in TASKS.items() if s.every}
    # No task name is written anywhere else in the code: senders and tasks name the spec.
    for top in ("application", "service", "workers", "solver"):
        for path in (ROOT / top).rglob("*.py"):
            if path.name != "messages.py":
                assert not re.search(r"[\"']ricochet\.[a-z_]+[\"']", path.read_text()), path


@pytest.mark.parametrize("spec,payload,field", [
    (SOLVE, {"job_id": "j", "puzzle": HARD, "time_budget": "soon"}, "time_budget"),
    (SOLVE, {"job_id": "j", "puzzle": HARD, "time_budget": 10_000}, "time_budget"),
    (SOLVE, {"job_id": "j", "puzzle": HARD}, "time_budget"),
    (PACK, {"job_id": "j", "count": 3}, "count"),
    (PACK_CHUNK, {"job_id": "j", "items": [[1, 2, 3]]}, "items.0"),
    (POOL_BUILD, {}, "job_id"),
])
def test_a_bad_payload_is_refused_at_send_time(redis_url, spec, payload, field):
    """Nothing is queued: the sender hears which field is wrong."""
    stores = Stores.from_url(redis_url)
    celery = make_celery(redis_url, stores=stores)
    before = stores.queued(spec.queue)
    with pytest.raises(InvalidInput) as refused:
        celery.send(spec.of(payload))
    assert refused.value.field == field
    assert stores.queued(spec.queue) == before


def test_a_bad_payload_is_refused_at_the_task(redis_url):
    """A message no sender of ours would send (sent by name, bypassing the
    spec) is refused by the task before any work: the job it names fails
    saying which field, and is never started."""
    stores = Stores.from_url(redis_url)
    celery = make_celery(redis_url, stores=stores)
    for name, args, field in ((PACK_CHUNK.name, ["notalist"], "items"), (PACK.name, [7], "job_id"),
                              (SOLVE.name, [HARD, 1.0, 64, "extra"], "arguments")):
        job = stores.jobs.create("pack", {"count": 1, "min_length": 3, "max_length": 3})
        result = celery.tasks[name](job["id"], *args)
        assert field in result["error"], result
        done = stores.jobs.get(job["id"])
        if name != PACK.name:  # a job id that is not a string names no job
            assert done["state"] == "failed" and field in done["error"] and done["started"] is None


def test_a_task_runs_on_the_stores_its_app_was_given(redis_url, tmp_path):
    """The factory's app gives its tasks their stores: a task called on an app
    made with these stores writes there, with no module global patched."""
    from workers.embedded import EmbeddedRedis

    with EmbeddedRedis(tmp_path / "other", persist=False) as other:
        mine = Stores.from_url(other.url)
        celery = make_celery(redis_url, stores=mine)  # its broker is the session's; its stores another Redis
        assert mine.days.get(daily.today().isoformat()) is None
        days = celery.tasks[PRECOMPUTE_DAILY.name](0)
        assert days == [daily.today().isoformat()] and mine.days.get(days[0]) is not None


def test_no_test_patches_the_task_module():
    """Tests give tasks their stores and timings through the app and the payload."""
    for path in (ROOT / "tests").glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "setattr" and node.args:
                target = node.args[0]
                assert not (isinstance(target, ast.Name) and target.id == "tasks"), f"{path} patches workers.tasks"
