"""Text is checked where it enters: a lone surrogate or a control character in a
free-text field (seeds, players' names) is a 400 naming the field, before any
work starts; in any other string of any operation, a 4xx (the field's own check
refuses it), never a 500, and never a job left running."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.declare import operations_of

BAD = ("\ud800", "a\udfffb", "nul\x00", "bell\x07", "del\x7f")


@pytest.fixture(scope="module")
def client(redis_url):
    return create_app({"REDIS_URL": redis_url, "RATE_LIMITS_ENABLED": False}).test_client()


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("url,body,field", [
    ("/v1/packs", {"count": 1, "min_length": 4, "max_length": 4, "seed": "{bad}"}, "seed"),
    ("/v1/games", {"players": ["ann", "{bad}"]}, "players.1"),
    ("/v1/games", {"players": ["ann"], "seed": "{bad}"}, "seed"),
])
def test_free_text_in_a_body_is_refused_naming_the_field(client, url, body, field, bad):
    body = {k: (v.replace("{bad}", bad) if isinstance(v, str) else [x.replace("{bad}", bad) for x in v]
                if isinstance(v, list) else v) for k, v in body.items()}
    r = client.post(url, json=body)
    assert r.status_code == 400 and r.mimetype == "application/problem+json", r.get_data()
    assert r.json["field"] == field and "send Unicode text" in r.json["detail"], r.json


@pytest.mark.parametrize("bad", [b for b in BAD if not any(0xD800 <= ord(c) <= 0xDFFF for c in b)])
def test_free_text_in_a_query_is_refused_naming_the_field(client, bad):
    """(A URL cannot carry a lone surrogate: its UTF-8 does not exist.)"""
    r = client.get("/v1/puzzles/random", query_string={"length": 5, "seed": bad})
    assert r.status_code == 400 and r.json["field"] == "seed", r.get_data()


def _operations(app):
    for rule in app.url_map.iter_rules():
        for (method, path), op in operations_of(app.view_functions[rule.endpoint]).items():
            if path == rule.rule:
                yield method, rule, op


def test_no_body_of_any_operation_gets_a_server_error_for_bad_text(client):
    """Bad text in keys and values, in every string field of every operation's
    body (whatever the field: codes, boards, colours, moves, options)."""
    checked = 0
    for method, rule, op in _operations(client.application):
        if op.body is None:
            continue
        url = rule.rule.replace("<", "").replace(">", "")
        for bad in BAD:
            for body in ({"code": bad}, {bad: 1}, {"players": [bad], "board": bad, "seed": bad},
                         {"puzzle": {"code": bad}, "moves": [{"robot": bad, "direction": "N"}]},
                         {"count": 1, "min_length": 4, "max_length": 4, "board": bad},
                         {"moves": [{"robot": "red", "direction": bad}]}):
                r = getattr(client, method)(url, json=body)
                assert 400 <= r.status_code < 500, (rule.rule, body, r.status_code)
        checked += 1
    assert checked >= 7  # solve, verify, difficulty, packs, games, bids, solutions


def test_a_pack_with_a_lone_surrogate_leaves_no_job(client, redis_url):
    from workers.stores import Stores

    stores = Stores.from_url(redis_url)
    client.post("/v1/packs", json={"count": 1, "min_length": 4, "max_length": 4, "seed": "fine"})
    before = set(stores.redis.scan_iter("job:*"))
    assert before  # the scan sees jobs: a job made by the refused request would show
    r = client.post("/v1/packs", json={"count": 2, "min_length": 4, "max_length": 4, "seed": "\ud800"})
    assert r.status_code == 400 and r.json["field"] == "seed"
    assert set(stores.redis.scan_iter("job:*")) == before
