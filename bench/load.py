"""Load benchmark: requests per second and latency of the cached daily puzzle and
of verify, under gunicorn on this machine, measured by wrk from a second process
on loopback.

    .venv/bin/python bench/load.py [--seconds 15] [--connections 16] [--web-workers 5] [--limits]

Starts a private Redis and gunicorn (deploy/gunicorn.conf.py, access log off),
publishes today's puzzle, then runs wrk against GET /v1/daily/{today} and
POST /v1/verify (the published optimal answer to today's puzzle).  Rate limits
are off unless --limits is given (then every request also counts in Redis).
Needs wrk (`make bench-load` installs it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workers.embedded import EmbeddedRedis, free_port  # noqa: E402

LUA = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[%s]]
"""


def wrk(url: str, seconds: int, connections: int, threads: int, script: Path | None = None) -> dict[str, float]:
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", url]
    if script:
        cmd[1:1] = ["-s", str(script)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    unit = {"us": 1e-3, "ms": 1.0, "s": 1000.0}

    def latency(p: str) -> float:
        value, u = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)", out, re.M).groups()
        return float(value) * unit[u]

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), "p50": latency("50"),
            "p99": latency("99"), "non2xx": int(errors.group(1)) if errors else 0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--web-workers", type=int, default=5, help="gunicorn workers (default 2 x cores + 1)")
    parser.add_argument("--web-threads", type=int, default=1, help="threads per worker (1: gunicorn's sync worker)")
    parser.add_argument("--wrk-threads", type=int, default=1)
    parser.add_argument("--limits", action="store_true", help="keep the rate limits on (counted in Redis)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: run `make bench-load` (it installs it)")
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp) / "redis", persist=False) as redis:
        port = free_port()
        env = {**os.environ, "REDIS_URL": redis.url, "RICOCHET_BIND": f"127.0.0.1:{port}",
               "RICOCHET_ACCESS_LOG": "", "RICOCHET_WEB_WORKERS": str(args.web_workers),
               "RICOCHET_WEB_THREADS": str(args.web_threads),
               "RICOCHET_RATE_LIMITS": "on" if args.limits else "off", "PROMETHEUS_MULTIPROC_DIR": tmp}
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
                                "service.app:create_app()"], cwd=ROOT, env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(f"{base}/healthz", timeout=1)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("gunicorn did not start") from None
                    time.sleep(0.2)
            today = dt.datetime.now(dt.UTC).date().isoformat()
            daily = json.load(urllib.request.urlopen(f"{base}/v1/daily/{today}", timeout=120))
            moves = json.load(urllib.request.urlopen(f"{base}/v1/daily/{today}/solution", timeout=60))["moves"]
            script = Path(tmp) / "verify.lua"
            script.write_text(LUA % json.dumps({"puzzle": daily["puzzle"], "moves": moves}))
            results = {
                f"GET /v1/daily/{today} (cached)": wrk(f"{base}/v1/daily/{today}", args.seconds, args.connections,
                                                                 args.wrk_threads),
                f"POST /v1/verify ({len(moves)}-move answer)": wrk(f"{base}/v1/verify", args.seconds,
                                                                   args.connections, args.wrk_threads, script),
            }
        finally:
            os.killpg(web.pid, signal.SIGTERM)
            web.wait(timeout=30)
    print(f"gunicorn {args.web_workers} workers x {args.web_threads} thread(s), wrk {args.wrk_threads} thread(s) x "
          f"{args.connections} connections, "
          f"{args.seconds} s each, rate limits {'on' if args.limits else 'off'}")
    print(f"{'route':<42} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'non-2xx':>8}")
    for name, r in results.items():
        print(f"{name:<42} {r['rps']:>8.0f} {r['p50']:>7.2f} {r['p99']:>7.2f} {r['non2xx']:>8}")


if __name__ == "__main__":
    main()
