"""The puzzle database: every puzzle held, once, and what it says proven again."""

from __future__ import annotations

import csv
import io
import json
import random
import subprocess
import sys

import pytest

from solver.model.moves import check
from solver.model.puzzle import Move, Puzzle
from solver.play import daily
from solver.production import bank
from solver.production.pools import Library, shipped
from solver.search.solve import solve

BAND = 19  # the slice exported: every source holds puzzles of this length (the whole export is 559,523 rows)


@pytest.mark.slow
def test_the_export_holds_every_shipped_puzzle_once_and_a_sample_is_proven():
    out = subprocess.run([sys.executable, "-m", "service.cli", "export", "--format", "csv", "--min-length", str(BAND),
                          "--max-length", str(BAND)], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    codes = [r["code"] for r in rows]
    assert len(set(codes)) == len(codes)  # once each
    assert {int(r["optimal_length"]) for r in rows} == {BAND}
    by_source: dict[str, int] = {}
    for r in rows:
        key = "daily" if r["source"].startswith("daily:") else r["source"]
        by_source[key] = by_source.get(key, 0) + 1
    banked = {e["code"] for e in bank.entries() if e["length"] == BAND}
    assert by_source["bank"] == len(banked) > 0
    published = (daily.today() - daily.FIRST_DAY).days + 1
    days = {found["code"] for n in range(1, published + 1)
            if (found := daily.daily_json(daily.day_of(n)))["optimal_length"] == BAND}
    assert by_source["daily"] == len(days - banked) > 0
    library = Library(shipped())
    for entry in library.entries():  # every row of every shipped pool, but those met before (pools share none)
        pool = library.load(entry.id)
        band = pool.lengths().get(BAND, [])
        earlier = sum(pool.puzzle(i).code() in banked | days for i in band)
        assert by_source.get(f"pool:{entry.id}", 0) == len(band) - earlier, entry.id
    for r in random.Random(4).sample(rows, 4):  # re-import: the columns give the puzzle back, and it is proven
        robots = {c: tuple(map(int, xy.split(","))) for c, xy in (part.split(":") for part in r["robots"].split())}
        colour, _, symbol = r["target"].partition("-")
        target = {"symbol": "vortex"} if r["target"] == "vortex" else {"colour": colour, "symbol": symbol}
        rules = {"ricochet": r["ricochet"], "vortex_sightline": r["vortex_sightline"] == "true"}
        p = Puzzle.from_json({"board": r["board"], "robots": robots, "target": target, "rules": rules})
        assert p.code() == r["code"]
        moves = [Move(*m.split("-")) for m in r["solution"].split()]
        assert check(p, moves).solved and len(moves) == int(r["optimal_length"])
        assert solve(p).length == int(r["optimal_length"])
        assert float(r["rating"]) > 0 and int(r["plays"]) >= 0


def test_the_api_streams_the_export_filtered(redis_url):
    from service.app import create_app

    client = create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()
    r = client.get("/v1/puzzles/export?source=bank,daily&min_length=18&robots=4")
    assert r.status_code == 200 and r.mimetype == "application/x-ndjson"
    lines = [json.loads(x) for x in r.data.decode().splitlines()]
    assert lines and all(x["optimal_length"] >= 18 and len(x["robots"]) == 4 for x in lines)
    assert {x["source"].split(":")[0] for x in lines} <= {"bank", "daily"}
    assert all(set(x) >= {"code", "solution", "rating", "popularity", "themes", "driftingdroids_id"} for x in lines)
    assert client.get("/v1/puzzles/export?format=xml").json["field"] == "format"
    assert client.get("/v1/puzzles/export?min_length=10&max_length=5").status_code == 422


def test_packs_and_the_export_write_the_same_items_by_one_writer_per_format():
    """The same puzzles through the packs' paths (`ricochet pack`'s lines, GET /v1/packs/{id}?format=ndjson's)
    and the export's (its NDJSON and CSV lines): every line is what solver.formats.lines writes of its value,
    compact for `ricochet pack` and the export, spaced for the packs' HTTP lines, and the values agree."""
    from service.declare import ndjson
    from service.shapes import PackItem
    from solver.formats import lines
    from solver.model.puzzle import moves_from_json
    from solver.production.export import Held, csv_line, ndjson_line

    out = subprocess.run([sys.executable, "-m", "service.cli", "pack", "--count", "4", "--min-length", "5",
                          "--max-length", "7", "--seed", "7"], capture_output=True, text=True, check=True,
                         env={"PATH": "/usr/bin:/bin"}).stdout
    made = out.splitlines(keepends=True)
    items = [json.loads(line) for line in made]
    assert len(items) == 4
    assert made == [lines.ndjson_line(item) for item in items]  # `ricochet pack`: compact
    served = list(ndjson(PackItem, items))
    assert served == [lines.ndjson_line(json.loads(line), spaced=True) for line in served]  # HTTP: spaced
    assert [json.loads(line) for line in served] == items
    for item in items:  # the export's lines of the same puzzles, with what play made of them
        h = Held(Puzzle.from_code(item["code"]), moves_from_json(item["solution"]), "pool:test")
        played = {k: item[k] for k in ("rating", "popularity", "themes")}
        exported = ndjson_line(h, played)
        assert exported == lines.ndjson_line(json.loads(exported))
        assert {k: v for k, v in json.loads(exported).items() if k != "source"} == {
            k: v for k, v in item.items() if k not in ("index", "difficulty")}
        row = csv_line(h, played)
        assert row == lines.csv_line(next(csv.reader(io.StringIO(row))))
        assert row.split(",")[0] == item["code"] and f",{item['optimal_length']}," in row
