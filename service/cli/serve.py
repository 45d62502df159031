"""`ricochet serve`: the API under gunicorn with the production settings, behind
nginx when it is installed (it buffers requests whole, so slow clients cannot
hold web threads, and answers oversized ones with problem+json); without
REDIS_URL, a private Redis, one worker, a webhook worker and the beat beside it.

It supervises them (supervisor.py): every process of the stack ends with it
however it ends (`kill -9` included), each one that dies (Redis, the worker, the
beat, nginx, gunicorn) is started again (after 1 s, then twice as long each time
up to a minute; back to 1 s once one has run a minute) and the log says so;
gunicorn restarts its own web processes.  A second serve on the same instance
folder, or on a port something listens on, stops at once and says why."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from workers.settings import settings_or_exit

from . import front, keys, worker
from .supervisor import Stack, Supervised, listening, lock_instance, port_refusal, say, stop  # noqa: F401 - stop: tests

if TYPE_CHECKING:
    from workers.embedded import EmbeddedRedis

TICK = 0.5  # seconds between two looks at the processes
STARTUP = 120.0  # seconds gunicorn (the app loaded, the pools warmed) or nginx may take to listen


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the HTTP API (with a private Redis and a worker when REDIS_URL is unset)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--instance", default="instance",
                   help="folder for the private Redis's files, the front's configuration and the metrics; "
                        "one serve at a time runs from it")
    p.set_defaults(run=run)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _workers(stack: Stack, env: dict[str, str], instance: Path) -> list[Supervised]:
    """The private Redis's worker, webhook worker and beat (REDIS_URL unset)."""
    work = worker.command(1, queues="ricochet,packs,analysis")
    hooks = worker.webhook_command()  # deliveries wait on receivers: never in the slot solves and packs run in
    beat = worker.beat_command(instance)
    return [Supervised("worker", lambda: stack.spawn(work, env=env)),
            Supervised("webhook worker", lambda: stack.spawn(hooks, env=env)),
            Supervised("beat", lambda: stack.spawn(beat, env=env))]


def _metrics(instance: Path) -> str:
    """The web processes' metrics files: this deployment's own folder, emptied
    (gunicorn's config empties it again at each start of gunicorn)."""
    folder = instance / "metrics"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return str(folder)


def _private_redis(stack: Stack, parts: list[Supervised], env: dict[str, str], instance: Path) -> EmbeddedRedis:
    """The private Redis (its data under the instance), then the workers and the beat on it."""
    from workers.embedded import EmbeddedRedis

    embedded = EmbeddedRedis(instance / "redis")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    parts.append(Supervised("Redis", lambda: stack.spawn(embedded.command(), **quiet)))
    embedded.wait(parts[-1].proc)
    env["REDIS_URL"] = embedded.url
    parts += _workers(stack, env, instance)
    say(f"private Redis on 127.0.0.1:{embedded.port} (maxmemory {embedded.maxmemory}), "
        "one worker, a webhook worker and the beat")
    return embedded


def _web(stack: Stack, parts: list[Supervised], env: dict[str, str], instance: Path, public_host: str,
         public_port: int) -> bool:
    """gunicorn, behind nginx on the public address when nginx is installed (else on it itself);
    False (said why) when one did not start listening."""
    host, port = public_host, public_port
    if front.available():
        from workers.embedded import free_port

        host, port = "127.0.0.1", free_port()
        env.setdefault("RICOCHET_TRUSTED_PROXIES", "1")  # nginx sets X-Forwarded-For to the client's address
    web = [sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_config",
           "--bind", f"{host}:{port}", "service.app:create_app()"]
    parts.append(Supervised("gunicorn", lambda: stack.spawn(web, env=env)))
    if not listening(parts[-1].proc, host, port, STARTUP):
        say(f"gunicorn did not start listening on {host}:{port} (its log is above); stopping")
        return False
    if not front.available():
        say("nginx is not installed (make install installs it): gunicorn faces clients itself, "
            "and slow clients can hold its threads")
        return True
    config = front.configure(instance / "front", f"{public_host}:{public_port}", f"{host}:{port}")
    parts.append(Supervised("front (nginx)", lambda: front.start(config, stack.spawn)))
    if not listening(parts[-1].proc, public_host, public_port, STARTUP):
        say(f"nginx did not start listening on {public_host}:{public_port} (its log is above); stopping")
        return False
    return True


def run(args: argparse.Namespace) -> int:
    settings_or_exit()  # a bad variable stops here, before anything starts
    instance = Path(args.instance).resolve()
    address = f"http://{args.host}:{args.port}"
    held = lock_instance(instance, address)
    if isinstance(held, str):
        say(held)
        return 1
    if refused := port_refusal(args.host, args.port):
        say(refused)
        return 1
    for name in ("SIGTERM", "SIGHUP"):  # stop the stack as Ctrl-C does
        signal.signal(getattr(signal, name), _interrupt)
    stack: Stack | None = None
    parts: list[Supervised] = []  # in the order they start; stopped in the reverse
    embedded = None
    env = dict(os.environ)
    try:
        stack = Stack()
        if not env.get("REDIS_URL"):
            embedded = _private_redis(stack, parts, env, instance)
            keys.announce(args.instance, embedded.url, address)
        env.setdefault("RICOCHET_ACCESS_LOG", "")
        env["PROMETHEUS_MULTIPROC_DIR"] = _metrics(instance)
        if not _web(stack, parts, env, instance, args.host, args.port):
            return 1
        say(f"serving on {address}/ with {'nginx and ' if front.available() else ''}gunicorn (Ctrl-C stops)")
        while True:
            for part in parts:
                part.check()
            stack.check()
            time.sleep(TICK)
    except KeyboardInterrupt:
        return 0
    except RuntimeError as e:  # Redis or the front refused to start
        say(str(e))
        return 1
    finally:
        for part in reversed(parts):
            part.stop()
        if stack is not None:
            stack.end()
        if embedded is not None:
            keys.forget(args.instance)
        held.close()
