"""The daily puzzle: deterministic per date, rising over the week, cacheable, never replaced."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import pytest

from service.app import create_app
from solver.daily import SCHEDULE, daily_json, lengths_for
from solver.puzzle import Puzzle
from solver.rules import check
from workers.app import make_celery
from workers.stores import Stores
from workers.tasks import daily_key

WEEK = [dt.date(2026, 11, 16) + dt.timedelta(days=i) for i in range(7)]  # Monday to Sunday


@pytest.mark.parametrize("day", WEEK)
def test_schedule_lengths_and_solutions(day):
    d = daily_json(day)
    lo, hi = lengths_for(day)
    assert lo <= d["optimal_length"] <= hi
    p = Puzzle.from_json(d["puzzle"])
    assert p.code() == d["code"]
    from solver.puzzle import moves_from_json

    assert check(p, moves_from_json(d["solution"])).solved


def test_difficulty_rises_over_the_week():
    lows = [SCHEDULE[i][0] for i in range(7)]
    assert lows == sorted(lows) and lows[0] < lows[-1]


def test_same_puzzle_in_another_process():
    day = WEEK[3]
    code = ("import datetime as dt; from solver.daily import daily_json; "
            f"print(daily_json(dt.date.fromisoformat('{day}'))['code'])")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert there == daily_json(day)["code"]


def test_api_hides_the_solution_and_supports_conditional_requests():
    client = create_app({"TESTING": True}).test_client()
    r = client.get(f"/v1/daily/{WEEK[2]}")
    assert r.status_code == 200 and "solution" not in r.json and r.json["solution_url"].endswith("/solution")
    assert r.headers["ETag"] and "immutable" in r.headers["Cache-Control"]
    assert client.get(f"/v1/daily/{WEEK[2]}", headers={"If-None-Match": r.headers["ETag"]}).status_code == 304
    sol = client.get(f"/v1/daily/{WEEK[2]}/solution").json
    assert sol["length"] == r.json["optimal_length"] == len(sol["moves"])
    today = client.get("/v1/daily")
    assert today.status_code == 200 and today.json["date"] == dt.datetime.now(dt.UTC).date().isoformat()


@pytest.mark.parametrize("date,status", [("2099-01-01", 404), ("2025-12-31", 404), ("2026-13-01", 400),
                                         ("yesterday", 400)])
def test_dates_outside_the_published_range(date, status):
    r = create_app({"TESTING": True}).test_client().get(f"/v1/daily/{date}")
    assert r.status_code == status and r.json["field"] == "date"


def test_a_published_puzzle_is_never_replaced(redis_url):
    stores = Stores.from_url(redis_url)
    day = WEEK[0]
    fake = {**daily_json(day), "code": "published-earlier"}
    stores.redis.delete(f"daily:{daily_key(day)}")
    assert stores.publish_daily(daily_key(day), fake)["code"] == "published-earlier"
    assert stores.publish_daily(daily_key(day), daily_json(day))["code"] == "published-earlier"
    client = create_app({"REDIS_URL": redis_url}).test_client()
    assert client.get(f"/v1/daily/{day}").json["code"] == "published-earlier"
    stores.redis.delete(f"daily:{daily_key(day)}")


def test_worker_precomputes_the_coming_days(redis_url, celery_worker):
    result = make_celery(redis_url).send_task("ricochet.precompute_daily", args=[2]).get(timeout=120)
    assert len(result) == 3
    stores = Stores.from_url(redis_url)
    for iso in result:
        assert stores.daily(daily_key(dt.date.fromisoformat(iso)))["date"] == iso
    assert json.dumps(stores.daily(daily_key(dt.date.fromisoformat(result[0]))))
