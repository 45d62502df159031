"""The daily puzzle: a frozen calendar with no repeats for ten years, numbered,
archived, embargoed until its day, hinted, pictured, and never replaced once served."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import subprocess
import sys
import time
from functools import cache

import pytest

from service.app import create_app
from service.daily import _SERVED as served_here
from solver.model.moves import check
from solver.model.puzzle import Puzzle, moves_from_json
from solver.play import daily
from solver.play.grades import GRADES, grade_of
from solver.production.calendar import identity
from solver.search.solve import solve
from workers.app import make_celery
from workers.stores import Stores

LAST = dt.date(2036, 12, 31)
TODAY = daily.today()
PAST = TODAY - dt.timedelta(days=3)
TOMORROW = TODAY + dt.timedelta(days=1)


@cache
def calendar_lines(solutions: bool = False) -> list[dict]:
    """Every day from 2026-01-01 to 2036-12-31, as the command line prints them."""
    args = [sys.executable, "-m", "service.cli", "daily", "--from", "2026-01-01", "--to", LAST.isoformat()]
    out = subprocess.run(args + (["--solutions"] if solutions else []), capture_output=True, text=True, check=True)
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_ten_years_without_a_repeat_on_the_weekly_schedule():
    days = calendar_lines()
    assert [d["date"] for d in days][0] == "2026-01-01" and days[-1]["date"] == LAST.isoformat()
    assert len(days) == (LAST - daily.FIRST_DAY).days + 1 == 4018
    seen = {}
    for n, d in enumerate(days, start=1):
        day = dt.date.fromisoformat(d["date"])
        assert d["number"] == n and "solution" not in d
        lo, hi = daily.SCHEDULE[day.weekday()]
        assert lo <= d["optimal_length"] <= hi, d["date"]
        key = identity(Puzzle.from_json(d["puzzle"]))
        assert key not in seen, f"{d['date']} repeats {seen[key]}"
        seen[key] = d["date"]
    sundays = [d for d in days if dt.date.fromisoformat(d["date"]).weekday() == 6]
    assert len({d["puzzle"]["board"] for d in sundays}) >= 10  # the long days take turns over boards


def test_every_served_solution_replays_to_its_length():
    for d in calendar_lines(solutions=True):
        p = Puzzle.from_json(d["puzzle"])
        assert p.code() == d["code"]
        verdict = check(p, moves_from_json(d["solution"]))
        assert verdict.solved and verdict.length == d["optimal_length"], d["date"]


@pytest.mark.slow
def test_a_sample_of_days_is_optimal_by_a_fresh_search():
    """The calendar was proven when built; a fresh search (no table, no cache) agrees on a sample
    of each weekday, the long days included."""
    days = calendar_lines(solutions=True)
    rng = random.Random(20)
    for weekday in range(7):
        for d in rng.sample([d for d in days if dt.date.fromisoformat(d["date"]).weekday() == weekday], 4):
            answer = solve(Puzzle.from_json(d["puzzle"]), time_budget=60)
            assert answer.status == "optimal" and answer.length == d["optimal_length"], d["date"]


def test_grades_follow_how_players_fare_and_the_week_still_rises():
    """Issue 56, defect 9: on the players' scale, 2027 has the top grade on at most
    one day in five and the two lowest on at least one in ten, Monday to Sunday
    rising; every day before the new grades began keeps the figures it was published with,
    and is shown with the grade word of today's scale (issue 69, defect 7)."""
    days = [d for d in calendar_lines() if d["date"].startswith("2027-")]
    assert len(days) == 365
    grades = [GRADES.index(d["difficulty"]["grade"]) for d in days]
    assert sum(g == len(GRADES) - 1 for g in grades) <= 0.2 * len(days)
    assert sum(g <= 1 for g in grades) >= 0.1 * len(days)
    by_weekday = [[g for d, g in zip(days, grades, strict=True) if dt.date.fromisoformat(d["date"]).weekday() == w]
                  for w in range(7)]
    means = [sum(gs) / len(gs) for gs in by_weekday]
    assert means == sorted(means) and means[0] < means[-1]
    for d in calendar_lines():
        day = dt.date.fromisoformat(d["date"])
        if day >= daily.REGRADED_FROM:
            break
        published = daily._calendar(daily.version_for(day))[d["date"]]["difficulty"]
        assert d["difficulty"] == {**published, "grade": grade_of(d["optimal_length"],
                                                                  published["fewest_robots_moved"])}, d["date"]


def test_the_calendar_file_is_pinned_and_versions_only_govern_unpublished_days():
    for earlier, later in zip(daily.VERSIONS, daily.VERSIONS[1:]):
        assert later.first_day > later.built and later.first_day > earlier.first_day
    version = daily.VERSIONS[-1]
    assert len(daily._calendar(version)) == 4018  # the digest matched, or this raised


def test_cli_refuses_days_outside_the_calendar_and_reversed_ranges():
    run = [sys.executable, "-m", "service.cli", "daily"]
    out = subprocess.run(run + ["--from", "2025-12-31"], capture_output=True, text=True)
    assert out.returncode != 0 and "2026-01-01" in out.stderr
    out = subprocess.run(run + ["--from", "2027-02-01", "--to", "2027-01-01"], capture_output=True, text=True)
    assert out.returncode != 0 and "--to" in out.stderr
    out = subprocess.run(run + ["--from", "2027-01-01"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["date"] == "2027-01-01"


# -- over HTTP ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    return create_app({"TESTING": True}).test_client()


def test_today_and_a_past_day_by_date_and_by_number(client):
    today = client.get("/v1/daily")
    assert today.status_code == 200 and today.json["date"] == TODAY.isoformat()
    assert today.json["number"] == (TODAY - daily.FIRST_DAY).days + 1
    one = client.get("/v1/daily/1")
    assert one.json["date"] == "2026-01-01" and one.json["number"] == 1
    assert one.json == client.get("/v1/daily/2026-01-01").json
    printed = calendar_lines()[0]  # the CLI prints the same day, without what play made of it
    assert {k: v for k, v in one.json.items() if k not in ("rating", "popularity", "themes")} == printed
    assert one.json["rating"]["plays"] == 0 and one.json["popularity"] == 0 and isinstance(one.json["themes"], list)
    assert "solution" not in one.json and one.json["solution_url"] == "/v1/daily/2026-01-01/solution"
    assert one.headers["ETag"] and one.headers["Cache-Control"] == "public, max-age=300"
    # today's carries its rating too: five minutes at most, and never past midnight (UTC), when /v1/daily moves on
    kept = int(today.headers["Cache-Control"].removeprefix("public, max-age="))
    midnight = dt.datetime.combine(TODAY + dt.timedelta(days=1), dt.time(), dt.UTC)
    assert 1 <= kept <= min(300, (midnight - dt.datetime.now(dt.UTC)).total_seconds() + 1)
    assert client.get("/v1/daily/1", headers={"If-None-Match": one.headers["ETag"]}).status_code == 304
    sol = client.get("/v1/daily/1/solution").json
    assert sol["length"] == one.json["optimal_length"] == len(sol["moves"])


@pytest.mark.parametrize("suffix", ["", "/solution", "/hint?level=1", ".png"])
def test_nothing_of_a_future_day_is_served(client, suffix):
    for day in (TOMORROW.isoformat(), str(daily.number(TOMORROW)), "2036-12-31"):
        r = client.get(f"/v1/daily/{day}{suffix}")
        assert r.status_code == 404 and r.json["title"] == "Not yet published", (day, suffix)
        assert "00:00 UTC" in r.json["detail"]


@pytest.mark.parametrize("day,status", [("2025-12-31", 404), ("0", 404), ("2026-13-01", 400), ("yesterday", 400),
                                        ("2099-01-01", 404)])
def test_days_outside_the_calendar(client, day, status):
    r = client.get(f"/v1/daily/{day}")
    assert r.status_code == status and r.json["field"] == "day"


def test_archive_pages_by_link_headers(client):
    r = client.get("/v1/daily/archive?from=2026-01-01&to=2026-03-31&limit=30")
    assert r.status_code == 200 and r.json["total"] == 90 and len(r.json["items"]) == 30
    first = r.json["items"][0]
    assert first["number"] == 1 and first["date"] == "2026-01-01" and first["url"] == "/v1/daily/2026-01-01"
    assert first["code"] == client.get("/v1/daily/1").json["code"] and first["grade"] and first["optimal_length"]
    links = dict((rel, url) for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', r.headers["Link"]))
    assert set(links) == {"first", "next", "last"} and r.headers["X-Total-Count"] == "90"
    seen = [i["number"] for i in r.json["items"]]
    url = links["next"]
    while url:
        page = client.get(url.replace("http://localhost", ""))
        seen += [i["number"] for i in page.json["items"]]
        links = dict((rel, u) for u, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', page.headers["Link"]))
        assert "prev" in links
        url = links.get("next")
    assert seen == list(range(1, 91))


def test_archive_lists_only_published_days(client):
    r = client.get(f"/v1/daily/archive?from={PAST}&to=2030-01-01")
    assert [i["date"] for i in r.json["items"]] == [(PAST + dt.timedelta(days=i)).isoformat() for i in range(4)]
    assert client.get("/v1/daily/archive").json["total"] == daily.number(TODAY)


@pytest.mark.parametrize("query,field", [("from=2026-02-30", "from"), ("limit=0", "limit"), ("limit=x", "limit"),
                                         ("to=soon", "to"), ("from=2026-03-01&to=2026-02-01", "from"),
                                         ("page=2", "page")])
def test_archive_refuses_bad_queries(client, query, field):
    r = client.get(f"/v1/daily/archive?{query}")
    assert r.status_code == 400 and r.json["field"] == field


def test_hints_rise_by_level_and_agree_with_the_solution(client):
    moves = client.get(f"/v1/daily/{PAST}/solution").json["moves"]
    robots = list(dict.fromkeys(m["robot"] for m in moves))
    hints = [client.get(f"/v1/daily/{PAST}/hint?level={n}").json for n in (1, 2, 3, 4)]
    assert hints[0] == {"date": PAST.isoformat(), "code": hints[0]["code"], "level": 1,
                        "optimal_length": len(moves)}
    assert hints[1]["robots_moved"] == len(robots) and "robots" not in hints[1]
    assert hints[2]["robots"] == robots and "first_move" not in hints[2]
    assert hints[3]["first_move"] == moves[0]
    assert client.get(f"/v1/daily/{PAST}/hint?level=5").status_code == 400
    assert client.get(f"/v1/daily/{PAST}/hint?level=one").status_code == 400


def test_pictures_of_a_day_are_png(client):
    r = client.get(f"/v1/daily/{PAST}.png")
    assert r.status_code == 200 and r.mimetype == "image/png" and r.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(r.data[16:20], "big") >= 900  # wide enough for a link preview
    assert "immutable" in r.headers["Cache-Control"]
    assert client.get(f"/v1/daily/{PAST}.png", headers={"If-None-Match": r.headers["ETag"]}).status_code == 304


def test_driftingdroids_id_where_the_board_allows_it(client):
    for d in calendar_lines()[:60]:
        p = Puzzle.from_json(d["puzzle"])
        assert (d["driftingdroids_id"] is None) == bool(p.board.barriers)
        if d["driftingdroids_id"]:
            from solver.formats.driftingdroids import from_driftingdroids_id

            assert from_driftingdroids_id(d["driftingdroids_id"], p.rules) == p


# -- a deployment's store ---------------------------------------------------------------


def test_a_served_day_is_never_replaced(redis_url):
    stores = Stores.from_url(redis_url)
    served = TODAY - dt.timedelta(days=10)  # a day no other test here asks for
    day = served.isoformat()
    stores.redis.delete(f"daily:{day}")
    fake = {**daily.daily_json(served), "code": daily.daily_json(served - dt.timedelta(days=7))["code"]}
    assert stores.days.publish(day, fake)["code"] == fake["code"]
    assert stores.days.publish(day, daily.daily_json(served))["code"] == fake["code"]
    client = create_app({"REDIS_URL": redis_url}).test_client()
    assert client.get(f"/v1/daily/{day}").json["code"] == fake["code"]
    archived = client.get(f"/v1/daily/archive?from={day}&to={day}").json["items"][0]
    assert archived["code"] == fake["code"]
    stores.redis.delete(f"daily:{day}")


def test_days_served_under_schedule_version_1_still_stand(redis_url):
    stores = Stores.from_url(redis_url)
    day = "2026-01-04"
    old = {**daily.daily_json(dt.date(2026, 1, 4)), "schedule_version": 1,
           "code": daily.daily_json(dt.date(2026, 1, 11))["code"]}
    stores.redis.delete(f"daily:{day}")  # as in a deployment that served the day under version 1 only
    stores.redis.set(f"daily:v1:{day}", json.dumps({"v": 1, "daily": old}))
    try:
        assert stores.days.publish(day, daily.daily_json(dt.date(2026, 1, 4)))["code"] == old["code"]
        served_here.clear()  # a fresh API process: nothing of the day served from memory
        client = create_app({"REDIS_URL": redis_url}).test_client()
        assert client.get(f"/v1/daily/{day}").json["schedule_version"] == 1
    finally:  # nothing of this fake deployment's day stays, in Redis or in this process
        stores.redis.delete(f"daily:v1:{day}", f"daily:{day}")
        served_here.clear()


def test_worker_stores_the_coming_days(redis_url, celery_worker):
    make_celery(redis_url).send_task("ricochet.precompute_daily", args=[2])  # its result is ignored: look
    result = [(TODAY + dt.timedelta(days=i)).isoformat() for i in range(3)]
    stores = Stores.from_url(redis_url)
    deadline = time.monotonic() + 120
    while any(stores.days.get(iso) is None for iso in result) and time.monotonic() < deadline:
        time.sleep(0.2)
    for iso in result:
        assert stores.days.get(iso)["code"] == daily.daily_json(dt.date.fromisoformat(iso))["code"]
    client = create_app({"REDIS_URL": redis_url}).test_client()
    assert client.get(f"/v1/daily/{result[1]}").status_code == 404  # stored ahead, still not shown


def test_a_days_picture_says_which_day_it_is(client):
    from solver.formats.svg import captioned_svg
    from solver.model.puzzle import Puzzle

    one = client.get(f"/v1/daily/{PAST}").json
    r = client.get(f"/v1/daily/{PAST}.png")
    width, height = int.from_bytes(r.data[16:20], "big"), int.from_bytes(r.data[20:24], "big")
    assert height > width  # the board, and the band below it
    caption = f"Ricochet Robots daily #{one['number']} · {one['date']} · {one['optimal_length']} moves"
    svg = captioned_svg(Puzzle.from_code(one["code"]), caption)
    assert svg.count(caption) == 2  # its title and its text
