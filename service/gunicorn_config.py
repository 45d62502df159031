"""gunicorn settings for production, in the package so that an installed service has
them: `gunicorn -c python:service.gunicorn_config 'service.app:create_app()'`
(deploy/gunicorn.conf.py takes them from here; `ricochet serve` runs them too)."""

import os
import shutil
import tempfile
from pathlib import Path

from workers import memory
from workers.settings import settings_or_exit

settings = settings_or_exit()  # a bad variable stops gunicorn before any worker boots
bind = settings.bind
workers = settings.web_workers
# Threads per worker (gthread): a game's event stream holds one thread for up to
# 25 s, and each process serves at most RICOCHET_GAME_STREAMS (4) of them, so
# the other threads always answer everything else.  Solves longer than a second
# move to the Celery workers.
threads = settings.web_threads
timeout = 30
# Behind nginx (ricochet serve, the compose file) a request line or header may be
# 8 KiB and the headers 32 KiB in all; nginx refuses more with problem+json, so
# gunicorn must not refuse less (with its own HTML page): 8,192 fields is every
# header of 4 bytes ("a:" and CRLF) that 32 KiB holds.  gunicorn has no limit on
# the headers' sum; the app refuses over 32 KiB with 431 (service/security.py).
limit_request_line = 8190
limit_request_field_size = 8190
limit_request_fields = 8192
graceful_timeout = 20
accesslog = settings.access_log or None  # "" turns it off
errorlog = "-"


# Memory: two malloc arenas per process (before any worker thread starts), and the
# app hands freed memory back every 64 requests (workers/memory.py).
memory.limit_arenas(2)
# A web process's searches besides a request's own (a random puzzle's walk, a
# theme's check) stay within two request searches' memory: its budget counts them so.
memory.cap_searches(min(settings.job_state_mb, 2 * settings.solve_state_mb))


# The app is made once, in the master, and warmed there (the pools, the daily
# calendar) before the web processes fork: they share those pages (service.app.warm).
preload_app = True


def when_ready(server):  # noqa: ANN001, ANN201 - gunicorn's hook signature
    from service.app import warm

    warm(server.app.wsgi())


# Metrics from every web process of this deployment, and of no other, add up in one
# /metrics scrape: their files are in PROMETHEUS_MULTIPROC_DIR (`ricochet serve`
# names its instance's metrics/), else in a folder of this master's own, removed
# when it exits.  The folder is emptied at start, as prometheus_client asks: a
# dead master's processes' counts would be added up for good otherwise.
_own_metrics = not os.environ.get("PROMETHEUS_MULTIPROC_DIR")
if _own_metrics:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="ricochet-metrics-")
os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)
for _stale in Path(os.environ["PROMETHEUS_MULTIPROC_DIR"]).glob("*.db"):
    _stale.unlink(missing_ok=True)


def child_exit(server, worker):  # noqa: ARG001 - gunicorn's hook signature
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):  # noqa: ARG001 - gunicorn's hook signature
    if _own_metrics:
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)
