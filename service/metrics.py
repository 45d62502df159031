"""Prometheus metrics: request counts and latency, solver time, cache hits, queue depth.

Under gunicorn, PROMETHEUS_MULTIPROC_DIR names a folder of the deployment's own
(service/gunicorn_config.py sees to it: `ricochet serve`'s instance's metrics/, or
one of the master's), so that every web process's counts add up in one scrape and
no other deployment's do.
"""

from __future__ import annotations

import time

from flask import Blueprint, Flask, Response, current_app, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
    values,
)

from .declare import Reply, operation

REQUESTS = Counter("ricochet_http_requests_total", "HTTP requests", ["method", "endpoint", "status"])
LATENCY = Histogram("ricochet_http_request_seconds", "HTTP request latency", ["endpoint"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
SOLVE_SECONDS = Histogram("ricochet_solve_seconds", "Time in the solver per request",
                          buckets=(0.0001, 0.001, 0.01, 0.1, 0.5, 1, 2, 5))
CACHE = Counter("ricochet_solve_cache_total", "Solve cache lookups", ["result"])
# A client names the method: any other counts as "other", or each made-up method
# would add its series to every web process's metrics (and files) for good.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"})


def register(app: Flask) -> None:
    # gunicorn's processes share their metrics through files (gunicorn_config.py names the
    # folder before prometheus_client is imported, which then keeps its values there).
    app.config.setdefault("METRICS_MULTIPROCESS", values.ValueClass is not values.MutexValue)

    @app.before_request
    def _start() -> None:
        g.started = time.perf_counter()

    @app.after_request
    def _count(response: Response) -> Response:
        endpoint = request.url_rule.rule if request.url_rule is not None else "unmatched"
        method = request.method if request.method in METHODS else "other"
        REQUESTS.labels(method, endpoint, str(response.status_code)).inc()
        if "started" in g:
            LATENCY.labels(endpoint).observe(time.perf_counter() - g.started)
        return response

    app.register_blueprint(bp)


bp = Blueprint("metrics", __name__)


@operation(bp, "get /metrics", "metrics", tag="service",
           summary="Prometheus metrics (requests, latency, solver time, cache hits, queue depth)",
           replies={200: Reply("Prometheus text format", media={"text/plain": {"schema": {"type": "string"}}})})
def metrics() -> Response:
    if current_app.config["METRICS_MULTIPROCESS"]:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        body = generate_latest(registry)
    else:
        body = generate_latest()
    stores = current_app.extensions.get("stores")
    if stores is not None:
        try:
            depth = stores.queued("ricochet")
            body += (f"# HELP ricochet_queue_depth Tasks waiting for a worker\n"
                     f"# TYPE ricochet_queue_depth gauge\nricochet_queue_depth {depth}\n").encode()
        except Exception:  # a scrape never fails because Redis is down
            pass
    return Response(body, content_type=CONTENT_TYPE_LATEST)  # it names its charset: mimetype= would add a second
