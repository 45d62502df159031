"""Following a failover: what the Celery broker, the result backend and the rate
limiter are told when the deployment's Redis is watched by Sentinels
(RICOCHET_SENTINELS), and a worker's writes held by a replica before its task
is acknowledged (RICOCHET_WAIT_REPLICAS).

The stores follow the primary themselves (`Stores.from_settings`); this module
is for the parts that take a URL: kombu's and Celery's `sentinel://` transport
(`master_name`), and the limits library's `redis+sentinel://` storage.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote, urlsplit

from .settings import Settings

log = logging.getLogger(__name__)


def _auth_and_db(url: str | None) -> tuple[str, str]:
    """(':password@' or '', '/db') from REDIS_URL (its host is not used with Sentinels)."""
    parts = urlsplit(url or "")
    auth = f":{quote(parts.password or '', safe='')}@" if parts.password else ""
    return auth, "/" + (parts.path.strip("/") or "0")


def celery_redis(settings: Settings, url: str) -> tuple[str, dict[str, Any]]:
    """The broker's (and result backend's) URL and transport options: `url`
    itself without Sentinels; with them, one `sentinel://` URL per Sentinel
    (kombu tries each) and the `master_name` they know the primary by."""
    if not settings.sentinels:
        return url, {}
    auth, db = _auth_and_db(url)
    joined = ";".join(f"sentinel://{auth}{host}:{port}{db}" for host, port in settings.sentinels)
    options: dict[str, Any] = {"master_name": settings.sentinel_service,
                               "sentinel_kwargs": {"socket_timeout": 1, "socket_connect_timeout": 1}}
    if settings.sentinel_password:
        options["sentinel_kwargs"]["password"] = settings.sentinel_password
    return joined, options


def limiter_storage(settings: Settings) -> tuple[str, dict[str, Any]]:
    """The rate limiter's storage URI and options (the limits library's notation)."""
    if not settings.redis_url:
        return "memory://", {}
    options: dict[str, Any] = {"socket_timeout": 1, "socket_connect_timeout": 1}
    if not settings.sentinels:
        return settings.redis_url, options
    auth, db = _auth_and_db(settings.redis_url)
    hosts = ",".join(f"{host}:{port}" for host, port in settings.sentinels)
    options["db"] = int(db.strip("/"))
    # The URI's password is the servers'; without this the library would send it to the Sentinels too.
    options["sentinel_kwargs"] = {"password": settings.sentinel_password or None, "socket_timeout": 1}
    return f"redis+sentinel://{auth}{hosts}/{settings.sentinel_service}", options


def hold_before_ack(celery_app: Any, settings: Settings) -> None:
    """With RICOCHET_WAIT_REPLICAS, a task's writes (items, job states) are held by
    the replicas before the worker acknowledges it (tasks are acknowledged late,
    after task_postrun): a failover then loses neither the writes nor the
    message, and a task whose writes a failover lost is run again."""
    if not settings.wait_replicas or not settings.redis_url:
        return
    from celery.signals import task_postrun

    from .stores import Stores, Unavailable

    held: dict[str, Stores] = {}

    def settle(**_: Any) -> None:
        stores = held.get("stores") or held.setdefault("stores", Stores.from_settings(settings, patient=True))
        try:
            replicas = stores.settle(settings.wait_replicas, settings.wait_ms)
        except Unavailable:
            replicas = 0
        if replicas < settings.wait_replicas:
            log.warning("a task's writes are held by %d replica(s) of %d wanted", replicas, settings.wait_replicas)

    task_postrun.connect(settle, weak=False)
