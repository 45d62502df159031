"""`ricochet serve`: the API under gunicorn with the production settings, behind
nginx when it is installed (it buffers requests whole, so slow clients cannot
hold web threads, and answers oversized ones with problem+json); without
REDIS_URL, a private Redis, one worker and the beat beside it.  The front, the
worker and the beat are started again when they die (after 1 s, then twice as
long each time up to a minute; back to 1 s once one has run a minute), and the
log says so; gunicorn restarts its own web processes."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from workers.settings import settings_or_exit

from . import front, keys, worker

FIRST_DELAY, LONGEST_DELAY = 1.0, 60.0  # seconds before a dead process starts again (doubling)
STEADY = 60.0  # seconds a process must run for its next restart to wait FIRST_DELAY again
TICK = 0.5  # seconds between two looks at the processes


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the HTTP API (with a private Redis and a worker when REDIS_URL is unset)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--instance", default="instance", help="folder for the private Redis's files")
    p.set_defaults(run=run)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _say(text: str) -> None:
    print(f"ricochet: {text}", file=sys.stderr, flush=True)


def _ended(code: int) -> str:
    return f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"


class Supervised:
    """A process `ricochet serve` keeps running.  It runs in a process group of
    its own, so that when it dies the children it leaves (a Celery pool process,
    an nginx worker holding the port) are ended with it before it starts again."""

    def __init__(self, name: str, start: Callable[[], subprocess.Popen]) -> None:
        self.name, self._start = name, start
        self.delay, self.due = FIRST_DELAY, None
        self.proc = start()
        self.started = time.monotonic()

    def check(self) -> None:
        """Called every TICK: notices a death, and starts the process again when its delay is over."""
        now = time.monotonic()
        if self.due is None:
            if self.proc.poll() is None:
                if now - self.started > STEADY:
                    self.delay = FIRST_DELAY
                return
            self._end_group()
            _say(f"the {self.name} (pid {self.proc.pid}) {_ended(self.proc.returncode)}; "
                 f"starting it again in {self.delay:g} s")
            self.due, self.delay = now + self.delay, min(self.delay * 2, LONGEST_DELAY)
        elif now >= self.due:
            self.proc, self.started, self.due = self._start(), now, None
            _say(f"the {self.name} started again (pid {self.proc.pid})")

    def _end_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # none left
            os.killpg(self.proc.pid, signal.SIGKILL)

    def stop(self) -> None:
        stop(self.proc)
        self._end_group()


def stop(proc: subprocess.Popen | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _workers(env: dict[str, str], instance: Path) -> list[Supervised]:
    """The private Redis's worker and beat (REDIS_URL unset)."""
    work = worker.command(1, queues="ricochet,packs,analysis")
    beat = worker.beat_command(instance)
    return [Supervised("worker", lambda: subprocess.Popen(work, env=env, process_group=0)),
            Supervised("beat", lambda: subprocess.Popen(beat, env=env, process_group=0))]


def run(args: argparse.Namespace) -> int:
    settings_or_exit()  # a bad variable stops here, before anything starts
    embedded = web = None
    kept: list[Supervised] = []
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops the stack as Ctrl-C does
    env = dict(os.environ)
    try:
        if not env.get("REDIS_URL"):
            from workers.embedded import EmbeddedRedis

            embedded = EmbeddedRedis(Path(args.instance) / "redis").start()
            env["REDIS_URL"] = embedded.url
            kept += _workers(env, Path(args.instance))
            _say(f"private Redis on 127.0.0.1:{embedded.port} (maxmemory {embedded.maxmemory}), "
                 "one worker and the beat")
            keys.announce(args.instance, embedded.url, f"http://{args.host}:{args.port}")
        env.setdefault("RICOCHET_ACCESS_LOG", "")
        bind = f"{args.host}:{args.port}"
        if front.available():
            from workers.embedded import free_port

            bind = f"127.0.0.1:{free_port()}"
            env.setdefault("RICOCHET_TRUSTED_PROXIES", "1")  # nginx sets X-Forwarded-For to the client's address
            config = front.configure(Path(args.instance) / "front", f"{args.host}:{args.port}", bind)
            kept.append(Supervised("front (nginx)", lambda: front.start(config)))
        else:
            _say("nginx is not installed (make install installs it): gunicorn faces clients itself, "
                 "and slow clients can hold its threads")
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_config",
                                "--bind", bind, "service.app:create_app()"], env=env)
        _say(f"serving on http://{args.host}:{args.port}/ with {'nginx and ' if front.available() else ''}"
             "gunicorn (Ctrl-C stops)")
        while web.poll() is None:
            for part in kept:
                part.check()
            time.sleep(TICK)
        _say(f"gunicorn {_ended(web.returncode)}; stopping")
    except KeyboardInterrupt:
        pass
    except RuntimeError as e:  # the front refused to start
        _say(str(e))
        return 1
    finally:
        stop(web)
        for part in kept:
            part.stop()
        if embedded is not None:
            keys.forget(args.instance)
            embedded.stop()
    return 0
