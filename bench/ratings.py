"""Do ratings learn from play?  Simulated players of known skill play through the
HTTP API (the app in this process over a private Redis, each player from its
own address), and the ratings are set against the truth.

    .venv/bin/python bench/ratings.py [--players 25] [--attempts 24] [--per-length 4]

A player of skill s solves optimally every puzzle of optimal length up to s, and
fails the rest.  The puzzles are random puzzles of 2 to 17 moves (`--per-length`
of each); each player attempts `--attempts` of them, drawn at random, with
POST /v1/verify {"player": ...}, in a round (the puzzle handed to its address
with solution=false; docs/ratings.md).  Printed: the rank correlation (Spearman) of
the puzzles' ratings with their optimal lengths and of the players' ratings with
their skills, for two fresh stores: one where puzzles start from the prior on
their length, and one where every puzzle starts at 1500 (RICOCHET_RATING_PRIOR=off),
which measures what the ratings learn from play alone.  Only players with an
established rating move puzzles, so a player's first dozen attempts teach the
puzzles nothing.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.app import create_app  # noqa: E402
from workers.embedded import EmbeddedRedis  # noqa: E402


def call(client, method: str, url: str, body: dict | None = None, address: str = "127.0.0.1") -> dict:
    r = client.open(url, method=method, json=body, environ_base={"REMOTE_ADDR": address})
    if r.status_code != 200:
        raise SystemExit(f"{method} {url}: {r.status_code} {r.json}")
    return r.json


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


def play(client, args: argparse.Namespace) -> tuple[float, float]:
    rng = random.Random(args.seed)
    puzzles = [call(client, "GET", f"/v1/puzzles/random?length={n}&seed=ratings-{n}-{k}")
               for n in range(2, 18) for k in range(args.per_length)]  # the answers, read by the bench alone
    skills = {f"sim-{i}": 3 + i * 12 // max(1, args.players - 1) for i in range(args.players)}
    for i, (player, skill) in enumerate(skills.items()):
        address = f"10.77.{i // 250}.{i % 250 + 1}"
        for made in rng.sample(puzzles, args.attempts):
            call(client, "GET", f"/v1/puzzles/random?length={made['optimal_length']}&seed={made['seed']}"
                 "&solution=false", address=address)  # the round
            won = made["optimal_length"] <= skill
            call(client, "POST", "/v1/verify", {"puzzle": {"code": made["code"]}, "player": player,
                                                "moves": made["solution"] if won else []}, address)
    rated = [call(client, "GET", f"/v1/puzzles/{made['code']}") for made in puzzles]
    played = [(r["rating"]["value"], made["optimal_length"]) for r, made in zip(rated, puzzles, strict=True)
              if r["rating"]["plays"] > 0]
    players = [(call(client, "GET", f"/v1/players/{p}")["rating"]["value"], s) for p, s in skills.items()]
    return (spearman([r for r, _ in played], [n for _, n in played]),
            spearman([r for r, _ in players], [s for _, s in players]))


def stack(prior: bool, args: argparse.Namespace) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, EmbeddedRedis(Path(tmp), persist=False) as server:
        app = create_app({"REDIS_URL": server.url, "RATE_LIMITS_ENABLED": False, "RATING_PRIOR": prior})
        return play(app.test_client(), args)


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
