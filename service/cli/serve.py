"""`ricochet serve`: the API under gunicorn with the production settings, behind
nginx when it is installed (it buffers requests whole, so slow clients cannot
hold web threads, and answers oversized ones with problem+json); without
REDIS_URL, a private Redis and one worker (that also runs the beat) beside it."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from workers.settings import settings_or_exit

from . import front, keys, worker


def add(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run the HTTP API (with a private Redis and a worker when REDIS_URL is unset)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--instance", default="instance", help="folder for the private Redis's files")
    p.set_defaults(run=run)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    settings_or_exit()  # a bad variable stops here, before anything starts
    embedded = work = web = nginx = None
    signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops the stack as Ctrl-C does
    env = dict(os.environ)
    try:
        if not env.get("REDIS_URL"):
            from workers.embedded import EmbeddedRedis

            embedded = EmbeddedRedis(Path(args.instance) / "redis").start()
            env["REDIS_URL"] = embedded.url
            work = subprocess.Popen(worker.command(1, beat_dir=Path(args.instance), queues="ricochet,packs,analysis"),
                                    env=env)
            print(f"ricochet: private Redis on 127.0.0.1:{embedded.port}, one worker", file=sys.stderr)
            keys.announce(args.instance, embedded.url, f"http://{args.host}:{args.port}")
        env.setdefault("RICOCHET_ACCESS_LOG", "")
        bind = f"{args.host}:{args.port}"
        if front.available():
            from workers.embedded import free_port

            bind = f"127.0.0.1:{free_port()}"
            env.setdefault("RICOCHET_TRUSTED_PROXIES", "1")  # nginx sets X-Forwarded-For to the client's address
            nginx = front.start(front.configure(Path(args.instance) / "front", f"{args.host}:{args.port}", bind))
        else:
            print("ricochet: nginx is not installed (make install installs it): gunicorn faces clients itself, "
                  "and slow clients can hold its threads", file=sys.stderr)
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_config",
                                "--bind", bind, "service.app:create_app()"], env=env)
        print(f"ricochet: serving on http://{args.host}:{args.port}/ with "
              f"{'nginx and ' if nginx else ''}gunicorn (Ctrl-C stops)", file=sys.stderr)
        web.wait()
    except KeyboardInterrupt:
        pass
    except RuntimeError as e:  # the front refused to start
        print(f"ricochet: {e}", file=sys.stderr)
        return 1
    finally:
        for proc in (nginx, web, work):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        if embedded is not None:
            keys.forget(args.instance)
            embedded.stop()
    return 0
