"""What players share: PNG pictures, links that unfurl (Open Graph), hints for any
puzzle, and DriftingDroids game IDs in and out."""

from __future__ import annotations

import html.parser
import json
import struct
import subprocess
import sys

import pytest

from service.app import create_app
from solver.formats.driftingdroids import from_driftingdroids_id, to_driftingdroids_id
from solver.model.puzzle import Puzzle
from solver.play import daily

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
BOARD_1999 = "green-A,yellow-B,red-B,blue-B"
DD_24 = "0765+42+2E21BD0F+93"  # DriftingDroids' own default game, the 24-move puzzle


@pytest.fixture(scope="module")
def client(redis_url):
    return create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()


def _size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_MAGIC and png[12:16] == b"IHDR"
    return struct.unpack(">II", png[16:24])


@pytest.mark.parametrize("path", [f"/v1/boards/{BOARD_1999}.png", "/v1/puzzles/{code}.png",
                                  "/v1/puzzles/{code}.png?solution=true"])
def test_pictures_are_real_pngs_with_cache_headers(client, path):
    code = client.get("/v1/puzzles/random?length=6&seed=png").json["code"]
    r = client.get(path.format(code=code))
    assert r.status_code == 200 and r.mimetype == "image/png"
    width, height = _size(r.data)
    assert width == height >= 900
    assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable" and r.headers["ETag"]
    assert client.get(path.format(code=code), headers={"If-None-Match": r.headers["ETag"]}).status_code == 304
    svg = client.get(path.format(code=code).replace(".png", ".svg"))
    assert svg.mimetype == "image/svg+xml" and svg.headers["ETag"] != r.headers["ETag"]


def test_a_solution_changes_the_picture(client):
    code = client.get("/v1/puzzles/random?length=6&seed=png").json["code"]
    plain = client.get(f"/v1/puzzles/{code}.png").data
    assert client.get(f"/v1/puzzles/{code}.png?solution=true").data != plain


@pytest.mark.parametrize("path", ["/v1/puzzles/nope.png", "/v1/boards/nope.png", "/v1/boards/green-A.png"])
def test_bad_pictures_are_400(client, path):
    r = client.get(path)
    assert r.status_code == 400 and r.mimetype == "application/problem+json"


class _Meta(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.og: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "meta" and (a.get("property") or "").startswith("og:"):
            self.og[a["property"]] = a["content"]


def _og(page: bytes) -> dict[str, str]:
    meta = _Meta()
    meta.feed(page.decode())
    return meta.og


def test_shared_links_unfurl_with_the_board(client):
    today = daily.today().isoformat()
    og = _og(client.get("/").data)
    assert og["og:image"] == f"http://localhost/v1/daily/{today}.png"
    assert today in og["og:title"] and f"#{daily.number(daily.today())}" in og["og:title"]
    assert client.get(og["og:image"].replace("http://localhost", "")).mimetype == "image/png"
    code = client.get("/v1/puzzles/random?length=5&seed=og").json["code"]
    og = _og(client.get(f"/p/{code}").data)
    assert og["og:image"] == f"http://localhost/v1/puzzles/{code}.png" and code in og["og:title"]
    assert og["og:url"] == f"http://localhost/p/{code}"
    assert client.get(og["og:image"].replace("http://localhost", "")).status_code == 200


def test_open_graph_uses_the_forwarded_host_behind_a_trusted_proxy(redis_url):
    app = create_app({"REDIS_URL": redis_url, "TRUSTED_PROXIES": 1})
    page = app.test_client().get("/", headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "puzzles.example"})
    assert _og(page.data)["og:image"].startswith("https://puzzles.example/v1/daily/")


def test_hints_for_any_puzzle_by_code(client):
    made = client.get("/v1/puzzles/random?length=9&seed=hint").json
    moves = made["solution"]
    robots = list(dict.fromkeys(m["robot"] for m in moves))
    h = [client.get(f"/v1/puzzles/{made['code']}/hint?level={n}").json for n in (1, 2, 3, 4)]
    assert h[0] == {"code": made["code"], "level": 1, "optimal_length": 9}
    assert h[1]["robots_moved"] == len(robots) and h[2]["robots"] == robots
    assert h[3]["first_move"] == moves[0]
    assert client.get(f"/v1/puzzles/{made['code']}/hint").json["level"] == 1
    for bad in ("0", "5", "x"):
        r = client.get(f"/v1/puzzles/{made['code']}/hint?level={bad}")
        assert r.status_code == 400 and r.json["field"] == "level"
    assert client.get("/v1/puzzles/nope/hint").status_code == 400


def test_hints_for_an_unsolvable_puzzle_say_so(client):
    board = {"width": 4, "height": 4, "walls": [[0, 0, "E"], [0, 0, "S"]]}
    p = Puzzle.from_json({"board": board, "robots": {"red": [2, 2]}, "target": {"colour": "red", "cell": [0, 0]}})
    for _ in range(2):  # searched, then from the stored answer
        r = client.get(f"/v1/puzzles/{p.code()}/hint")
        assert r.status_code == 422 and "no solution" in r.json["detail"]


def test_driftingdroids_ids_in_and_out(client, quadrant_test_puzzles):
    t = next(t for t in quadrant_test_puzzles if t["optimal_moves"] == 24)
    rules = {"ricochet": "none"}
    verdict = client.post("/v1/verify", json={"puzzle": {"driftingdroids_id": DD_24, "rules": rules},
                                              "moves": t["known_solution"]}).json
    assert verdict["solved"] and verdict["length"] == 24
    p = from_driftingdroids_id(DD_24, None)
    shown = client.get(f"/v1/puzzles/{p.code()}").json
    assert shown["driftingdroids_id"] == DD_24
    made = client.get(f"/v1/puzzles/random?length=6&board={BOARD_1999}&seed=dd").json
    assert from_driftingdroids_id(made["driftingdroids_id"]) == Puzzle.from_code(made["code"])
    barrier = client.get("/v1/puzzles/random?length=6&board=green-D,yellow-B,red-B,blue-B&seed=dd").json
    assert barrier["driftingdroids_id"] is None


def test_solve_and_difficulty_take_a_driftingdroids_id(client):
    made = client.get(f"/v1/puzzles/random?length=7&board={BOARD_1999}&seed=dd-solve").json
    body = {"driftingdroids_id": made["driftingdroids_id"], "rules": made["rules"]}
    answer = client.post("/v1/solve", json=body).json
    assert answer["status"] == "optimal" and answer["length"] == 7 and answer["code"] == made["code"]
    assert client.post("/v1/difficulty", json=body).json["optimal_length"] == 7
    assert to_driftingdroids_id(Puzzle.from_code(made["code"])) == made["driftingdroids_id"]


@pytest.mark.parametrize("body,field", [({"driftingdroids_id": "0765+42"}, "driftingdroids_id"),
                                        ({"driftingdroids_id": 7}, "driftingdroids_id"),
                                        ({"driftingdroids_id": DD_24, "robots": {}}, ""),
                                        ({"driftingdroids_id": DD_24, "rules": {"ricochet": "x"}}, "rules.ricochet")])
def test_bad_driftingdroids_ids_are_400(client, body, field):
    r = client.post("/v1/solve", json=body)
    assert r.status_code == 400 and r.json["field"] == field, r.json


def test_generate_prints_driftingdroids_ids():
    out = subprocess.run([sys.executable, "-m", "service.cli", "generate", "--length", "5", "--count", "3",
                          "--board", "random-1999", "--format", "driftingdroids"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert len(out) == 3 and all(from_driftingdroids_id(i).board.spec for i in out)
    bad = subprocess.run([sys.executable, "-m", "service.cli", "generate", "--length", "5",
                          "--board", "green-D,yellow-B,red-B,blue-B", "--format", "driftingdroids"],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "random-1999" in bad.stderr
    line = subprocess.run([sys.executable, "-m", "service.cli", "generate", "--length", "5", "--board",
                           "random-1999"], capture_output=True, text=True, check=True).stdout
    assert json.loads(line)["driftingdroids_id"]


@pytest.mark.parametrize("path", ["/v1/boards", f"/v1/boards/{BOARD_1999}", f"/v1/boards/{BOARD_1999}?tables=true",
                                  "/v1/puzzles/{code}", "/v1/puzzles/{code}/hint?level=2"])
def test_content_addressed_json_is_cacheable(client, path):
    code = client.get("/v1/puzzles/random?length=6&seed=png").json["code"]
    r = client.get(path.format(code=code))
    assert r.status_code == 200 and r.headers["ETag"] and r.headers["Cache-Control"].startswith("public")
    again = client.get(path.format(code=code), headers={"If-None-Match": r.headers["ETag"]})
    assert again.status_code == 304 and not again.data
