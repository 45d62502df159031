"""Do ratings learn from play?  Simulated players of known skill play through the
HTTP API of a fresh `ricochet serve`, and the ratings are set against the truth.

    .venv/bin/python bench/ratings.py [--players 25] [--attempts 24] [--per-length 4]

A player of skill s solves optimally every puzzle of optimal length up to s, and
fails the rest.  The puzzles are random puzzles of 2 to 17 moves (`--per-length`
of each); each player attempts `--attempts` of them, drawn at random, with
POST /v1/verify {"player": ...}.  Printed: the rank correlation (Spearman) of
the puzzles' ratings with their optimal lengths and of the players' ratings with
their skills, for two fresh stacks: one where puzzles start from the prior on
their length, and one where every puzzle starts at 1500 (RICOCHET_RATING_PRIOR=off),
which measures what the ratings learn from play alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _stack import wait_ready  # noqa: E402

from workers.embedded import free_port  # noqa: E402


def call(method: str, url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def ranks(values: list[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    sa = sum((x - ma) ** 2 for x in ra) ** 0.5
    sb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (sa * sb)


def play(base: str, args: argparse.Namespace) -> tuple[float, float]:
    rng = random.Random(args.seed)
    puzzles = [call("GET", f"{base}/v1/puzzles/random?length={n}&seed=ratings-{n}-{k}")
               for n in range(2, 18) for k in range(args.per_length)]
    skills = {f"sim-{i}": 3 + i * 12 // max(1, args.players - 1) for i in range(args.players)}
    for player, skill in skills.items():
        for made in rng.sample(puzzles, args.attempts):
            won = made["optimal_length"] <= skill
            call("POST", f"{base}/v1/verify", {"puzzle": {"code": made["code"]}, "player": player,
                                               "moves": made["solution"] if won else []})
    rated = [call("GET", f"{base}/v1/puzzles/{made['code']}") for made in puzzles]
    played = [(r["rating"]["value"], made["optimal_length"]) for r, made in zip(rated, puzzles, strict=True)
              if r["rating"]["plays"] > 0]
    players = [(call("GET", f"{base}/v1/players/{p}")["rating"]["value"], s) for p, s in skills.items()]
    return (spearman([r for r, _ in played], [n for _, n in played]),
            spearman([r for r, _ in players], [s for _, s in players]))


def stack(prior: bool, args: argparse.Namespace) -> tuple[float, float]:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RICOCHET_RATE_LIMITS": "off", "RICOCHET_RATING_PRIOR": "on" if prior else "off",
               "RICOCHET_WEB_WORKERS": "2"}
        env.pop("REDIS_URL", None)
        serve = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--instance",
                                  tmp], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_ready(base, 180)
            return play(base, args)
        finally:
            os.killpg(serve.pid, signal.SIGTERM)
            serve.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=25)
    parser.add_argument("--attempts", type=int, default=24)
    parser.add_argument("--per-length", type=int, default=4, help="puzzles of each optimal length from 2 to 17")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.players} players x {args.attempts} attempts, {16 * args.per_length} puzzles of 2-17 moves")
    print(f"{'puzzles start':>22} {'puzzles ~ length':>17} {'players ~ skill':>16}")
    for prior in (True, False):
        puzzles, players = stack(prior, args)
        print(f"{'from the prior' if prior else 'all at 1500':>22} {puzzles:>17.3f} {players:>16.3f}")


if __name__ == "__main__":
    main()
