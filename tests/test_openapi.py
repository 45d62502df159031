"""openapi.yaml is the contract: every route documented, every documented shape returned."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from service.app import create_app

SPEC = yaml.safe_load((Path(__file__).resolve().parents[1] / "openapi.yaml").read_text())


def _resolve(schema: dict) -> dict:
    """Inline the spec's components so jsonschema can check against one document."""
    return {**schema, "components": SPEC["components"]}


def _schema(path: str, method: str, status: int, media: str) -> dict:
    content = SPEC["paths"][path][method]["responses"][str(status)]
    if "$ref" in content:
        content = SPEC["components"]["responses"][content["$ref"].rsplit("/", 1)[-1]]
    return _resolve(content["content"][media]["schema"])


@pytest.fixture()
def client():
    return create_app({"TESTING": True}).test_client()


def test_every_route_is_documented_and_every_documented_path_exists():
    app = create_app()
    routes = {re.sub(r"<(\w+)>", r"{\1}", r.rule) for r in app.url_map.iter_rules() if r.endpoint != "static"}
    assert routes == set(SPEC["paths"])


def test_responses_match_their_schemas(client, sample_puzzles):
    row = sample_puzzles[0]
    puzzle = {k: row[k] for k in ("board", "robots", "target", "rules")}
    checks = [
        ("/healthz", "get", client.get("/healthz")),
        ("/v1/boards", "get", client.get("/v1/boards")),
        ("/v1/boards/{spec}", "get", client.get("/v1/boards/green-A,yellow-B,red-B,blue-B")),
        ("/v1/puzzles/{code}", "get", client.get("/v1/puzzles/AQ2VAA8uIr0PAAk")),
        ("/v1/solve", "post", client.post("/v1/solve", json=puzzle)),
        ("/v1/verify", "post", client.post("/v1/verify", json={"puzzle": puzzle, "moves": row["oracle_solution"]})),
        ("/v1/solve", "post", client.post("/v1/solve", json={"code": "bad!"})),
        ("/v1/difficulty", "post", client.post("/v1/difficulty", json=puzzle)),
        ("/v1/puzzles/random", "get", client.get("/v1/puzzles/random?length=5&seed=1")),
        ("/v1/puzzles/random", "get", client.get("/v1/puzzles/random?length=99")),
        ("/v1/daily/{day}", "get", client.get("/v1/daily/2026-11-18")),
        ("/v1/daily/{day}", "get", client.get("/v1/daily/322")),
        ("/v1/daily/{day}/solution", "get", client.get("/v1/daily/2026-11-18/solution")),
        ("/v1/daily/{day}/hint", "get", client.get("/v1/daily/2026-11-18/hint?level=4")),
        ("/v1/daily/{day}", "get", client.get("/v1/daily/2099-01-01")),
        ("/v1/daily/archive", "get", client.get("/v1/daily/archive?limit=3")),
        ("/v1/puzzles/{code}/hint", "get", client.get("/v1/puzzles/AQ2VAA8uIr0PAAk/hint?level=3")),
        ("/v1/solve", "post", client.post("/v1/solve", json={"driftingdroids_id": "0765+42+2E21BD0F+9"})),
        ("/v1/verify", "post", client.post("/v1/verify", json={"puzzle": puzzle, "moves": "x"})),
    ]
    for path, method, r in checks:
        jsonschema.validate(r.get_json(force=True), _schema(path, method, r.status_code, r.mimetype))


def test_every_problem_type_is_in_the_contract_and_documented_at_its_uri(client):
    from service.errors import KINDS, problem_type

    documented = SPEC["components"]["schemas"]["Problem"]["properties"]["type"]["enum"]
    assert documented == [problem_type(k) for k in KINDS]
    titles = set()
    for kind, (status, title, _) in KINDS.items():
        page = client.get(problem_type(kind))
        assert page.status_code == 200 and title.encode() in page.data and str(status).encode() in page.data
        titles.add(title)
    assert len(titles) == len(KINDS)  # one title per kind: a title names its kind
    r = client.get("/problems/nope")
    assert r.status_code == 404 and r.json["type"] == "/problems/not-found"


@pytest.mark.parametrize("method,path,kind,status", [
    ("get", "/nope", "not-found", 404),
    ("delete", "/v1/daily", "method-not-allowed", 405),
    ("post", "/v1/solve", "invalid-json", 400),
    ("get", "/v1/puzzles/random?length=99", "out-of-range", 422),
    ("get", "/v1/daily/2099-01-01", "not-yet-published", 404),
])
def test_problems_carry_their_type(client, method, path, kind, status):
    r = getattr(client, method)(path)
    assert r.status_code == status and r.mimetype == "application/problem+json"
    assert r.json["type"] == f"/problems/{kind}"
    if status == 405:
        assert set(r.headers["Allow"].split(", ")) >= {"GET", "HEAD"}


def test_the_committed_document_is_the_generated_one():
    """openapi.yaml comes from the marshmallow shapes and the views' docstrings
    (service/contract.py); edited by hand, or left behind a change, it fails here."""
    from service.contract import DOCUMENT, build, render

    assert DOCUMENT.read_text(encoding="utf-8") == render(build()), \
        "openapi.yaml differs from the generated document: run .venv/bin/python -m service.contract"


def test_every_limit_a_request_schema_enforces_is_in_the_document():
    """The request schemas that check bodies and queries are the document's
    schemas: their ranges, lengths and choices appear as they are."""
    from service.requests.daily import ArchiveQuery
    from service.requests.packs import SheetQuery
    from service.requests.puzzles import RandomQuery
    from workers.schemas import PackRequest

    pack = SPEC["components"]["schemas"]["PackRequest"]["properties"]
    assert pack["count"]["maximum"] == PackRequest().fields["count"].validators[0].max == 1000
    assert SPEC["components"]["schemas"]["VerifyRequest"]["properties"]["moves"]["maxItems"] == 1000
    assert SPEC["components"]["schemas"]["Shown"]["properties"]["moves"]["maxItems"] == 200
    for path, schema in (("/v1/puzzles/random", RandomQuery), ("/v1/daily/archive", ArchiveQuery),
                         ("/v1/packs/{pack_id}.svg", SheetQuery)):
        documented = {p["name"] for p in SPEC["paths"][path]["get"]["parameters"] if p["in"] == "query"}
        assert documented == {f.data_key or name for name, f in schema().fields.items()}
