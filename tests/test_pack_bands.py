"""Packs asked by a band of starting ratings and a theme (POST /v1/packs
min_rating, max_rating, theme; ricochet pack --min-rating ...): every item fits,
and a pack that asks for neither is planned as it always was."""

from __future__ import annotations

from service.app import create_app
from solver.production.packs import plan_for
from solver.production.pools import Library, shipped
from tests.helpers import made_pack, pack_request


def test_a_pack_by_rating_band_and_theme(redis_url, celery_worker):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    asked = {"count": 10, "min_length": 4, "max_length": 12, "seed": "band", "min_rating": 1700, "max_rating": 1900,
             "theme": "solo"}
    pack = made_pack(client, asked, timeout=300)[1]
    assert pack["count"] == 10 and pack["request"]["theme"] == "solo"
    for item in pack["puzzles"]:
        assert 1700 <= item["rating"]["value"] <= 1900 and "solo" in item["themes"], item
        assert 7 <= item["optimal_length"] <= 9  # the lengths that can start in the band
    vortex = made_pack(client, {"count": 2, "min_length": 5, "max_length": 6, "seed": "v", "theme": "vortex"})[1]
    assert all(p["target"].get("colour") is None and "vortex" in p["themes"] for p in vortex["puzzles"])


def test_bands_and_themes_are_checked_and_change_nothing_else():
    client = create_app().test_client()  # refused before anything is stored
    for body, field in (({"theme": "zigzag"}, "theme"), ({"min_rating": 1900, "max_rating": 1700}, "min_rating"),
                        ({"min_rating": 2900}, "min_rating"), ({"max_rating": 100}, "max_rating")):
        r = client.post("/v1/packs", json={"count": 3, "min_length": 5, "max_length": 6, **body})
        assert r.status_code == 400 and r.json["field"] == field, (body, r.json)
    plain = pack_request({"count": 20, "min_length": 5, "max_length": 9, "seed": "same"})
    assert set(plain) == {"count", "min_length", "max_length", "seed", "board", "robots", "ricochet"}
    band = plan_for({**plain, "min_rating": 1700, "max_rating": 1900}, Library(shipped()))
    assert len(band) == 20 and {p.length for p in band} == {7, 8, 9}  # the lengths that can start in the band


def test_ricochet_pack_by_band_and_theme():
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    run = subprocess.run([sys.executable, "-m", "service.cli", "pack", "--count", "3", "--min-length", "6",
                          "--max-length", "9", "--theme", "solo", "--min-rating", "1800"], capture_output=True,
                         text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    items = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(items) == 3 and all(i["rating"]["value"] >= 1800 and "solo" in i["themes"] for i in items)
    listed = subprocess.run([sys.executable, "-m", "service.cli", "pack", "--count", "3", "--length", "5",
                             "--theme", "unique"], capture_output=True, text=True, env=env, timeout=300)
    assert listed.returncode == 0, listed.stderr  # every theme, the library's (issue 68)
    assert all("unique" in json.loads(line)["themes"] for line in listed.stdout.splitlines())
    bad = subprocess.run([sys.executable, "-m", "service.cli", "pack", "--count", "3", "--length", "5",
                          "--theme", "zigzag"], capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode == 2 and "theme" in bad.stderr
