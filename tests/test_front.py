"""The HTTP front (service/front.conf.template) as `ricochet serve` runs it:
nginx before the API (served here in a thread) or before nothing.  An upstream
that is down is 503 problem+json whose status agrees with its body; the
headers' documented limit (8 KiB each, 32 KiB in all) holds; one address
gets at most 32 requests at once while another still gets in; the front's
own answers carry the security headers, and the API's pass once."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from service.app import create_app
from service.cli import front
from service.cli.serve import stop
from tests.helpers import served
from workers.embedded import free_port

pytestmark = pytest.mark.skipif(not front.available(), reason="needs nginx (make install installs it)")


@contextmanager
def fronting(folder: Path, upstream: str) -> Iterator[int]:
    port = free_port()
    nginx = front.start(front.configure(folder, f"127.0.0.1:{port}", upstream))
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert nginx.poll() is None and time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.05)
        yield port
    finally:
        stop(nginx)


@pytest.fixture(scope="module")
def api_front(tmp_path_factory):
    """The API (no Redis: the routes used here need none) behind the front."""
    with served(create_app({"RATE_LIMITS_ENABLED": False})) as url, \
            fronting(tmp_path_factory.mktemp("front"), url.removeprefix("http://")) as port:
        yield port


def _ask(port: int, path: str = "/healthz", headers: dict | None = None, source: str = "127.0.0.1",
         method: str = "GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
    conn.request(method, path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r, body


def _secured(r) -> None:
    assert r.getheader("X-Content-Type-Options") == "nosniff" and r.getheader("Referrer-Policy")
    assert "frame-ancestors" in r.getheader("Content-Security-Policy", "")


def test_an_upstream_that_is_down_is_503_as_its_body_says(tmp_path):
    closed = f"127.0.0.1:{free_port()}"  # nothing listens there: nginx's 502
    with fronting(tmp_path, closed) as port:
        for method in ("GET", "TRACE"):  # TRACE too: the front asks the API to answer it
            r, body = _ask(port, "/v1/daily", method=method)
            problem = json.loads(body)
            assert r.status == 503 and problem["status"] == 503 and problem["type"] == "/problems/unavailable"
            assert r.getheader("Content-Type") == "application/problem+json" and int(r.getheader("Retry-After")) > 0
            _secured(r)


def test_trace_and_unknown_methods_get_the_apis_405_through_the_front_as_without(api_front):
    """nginx refuses TRACE itself (an HTML 405 without Allow); the front has the API
    answer it instead, so TRACE, PROPFIND or any method a route does not take is the
    API's problem+json with Allow and its headers, through the front as from the app."""
    app = create_app({"RATE_LIMITS_ENABLED": False}).test_client()
    for method, path, status, allow in (("TRACE", "/v1/daily", 405, "GET, HEAD, OPTIONS"),
                                        ("TRACE", "/v1/solve?x=1", 405, "OPTIONS, POST"),
                                        ("PROPFIND", "/v1/daily", 405, "GET, HEAD, OPTIONS"),
                                        ("TRACE", "/nothing/here", 404, None)):
        direct = app.open(path, method=method)
        r, body = _ask(api_front, path, method=method)
        problem = json.loads(body)
        assert (r.status, direct.status_code) == (status, status), (method, path, r.status, direct.status_code)
        assert problem == direct.json and problem["status"] == status
        assert r.getheader("Content-Type") == direct.headers["Content-Type"] == "application/problem+json"
        if allow:
            assert problem["type"] == "/problems/method-not-allowed" and method in problem["detail"]
            assert sorted(r.getheader("Allow").split(", ")) == sorted(direct.headers["Allow"].split(", ")) \
                == sorted(allow.split(", "))
        for name in ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy"):
            assert r.getheader(name) == direct.headers[name], name
        _secured(r)


def test_headers_over_32_kib_in_all_are_refused(api_front):
    """Headers of 36 KiB in all passed the front where the docs say 32; now
    32 KiB refuses, 28 KiB passes, and one header over 8 KiB refuses."""
    for size, parts, status in ((28, 28, 200), (28, 4, 200), (33, 33, 431), (36, 36, 431), (36, 6, 431),
                                (9, 1, 431), (7, 1, 200)):
        each = (size << 10) // parts
        headers = {f"X-Fill-{i}": "a" * (each - len(f"X-Fill-{i}: \r\n")) for i in range(parts)}
        r, body = _ask(api_front, "/healthz", headers)
        assert r.status == status, (size, parts, r.status)
        if status == 431:
            assert json.loads(body)["type"] == "/problems/request-headers-too-large"
            _secured(r)


def test_one_address_gets_32_requests_at_once_and_another_still_gets_in(api_front):
    held = []
    try:
        for _ in range(32):  # requests whose body never comes: each holds a place until the body's timeout
            s = socket.create_connection(("127.0.0.1", api_front), timeout=10)
            s.sendall(b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100000\r\n\r\n{")
            held.append(s)
        time.sleep(0.3)
        r, body = _ask(api_front)
        assert r.status == 429 and json.loads(body)["type"] == "/problems/rate-limited", r.status
        assert int(r.getheader("Retry-After")) > 0
        _secured(r)
        r, _ = _ask(api_front, source="127.0.0.2")  # another address
        assert r.status == 200
    finally:
        for s in held:
            s.close()
    time.sleep(0.3)
    assert _ask(api_front)[0].status == 200  # the places are given back


def test_the_apis_headers_pass_once(api_front):
    r, _ = _ask(api_front, "/embed/daily")
    assert r.status == 200
    assert len([v for k, v in r.getheaders() if k.lower() == "content-security-policy"]) == 1
    assert "frame-ancestors *" in r.getheader("Content-Security-Policy") and r.getheader("X-Frame-Options") is None
    r, _ = _ask(api_front, "/healthz")
    assert r.getheader("X-Frame-Options") == "SAMEORIGIN"
    assert len([v for k, v in r.getheaders() if k.lower() == "x-content-type-options"]) == 1
