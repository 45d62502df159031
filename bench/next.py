"""GET /v1/puzzles/next against a big set of played puzzles, and what players
and puzzles cost in Redis.

    .venv/bin/python bench/next.py [--members 200000] [--players 40]

A private Redis; the app in this process.  `rated:puzzles` is filled with real
puzzles from the shipped pools, each scored at its prior plus noise (as play
would spread them), those near a new player's aim with their answers stored
(as served puzzles have).  Then new players, and players past their first
steps, each ask for their next puzzle: printed, the time per request (median,
95th percentile) and this process's resident memory before and after, for a
set of 200 and of `--members`.  Issue 57's probe measured 1.3 s a call and a
web process at 894 MiB at 200,000 before /next read a bounded window.
Last, the bytes a player's keys and a played puzzle's hold (MEMORY USAGE)
after attempts through POST /v1/verify.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.app import create_app  # noqa: E402
from solver.play.glicko import prior  # noqa: E402
from solver.production.export import Filter, held  # noqa: E402
from solver.production.pools import Library, shipped  # noqa: E402
from workers.embedded import EmbeddedRedis  # noqa: E402
from workers.stores import Stores  # noqa: E402


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def fill(stores: Stores, members: int, rng: random.Random) -> int:
    """`members` pool puzzles into rated:puzzles (a fresh set); answers kept for
    those within 250 of 1500.  Returns how many have answers."""
    stores.redis.delete("rated:puzzles")
    kept, batch = 0, {}
    pipe = stores.redis.pipeline(transaction=False)
    for n, h in enumerate(held(Library(shipped()), Filter(sources=("pools",)))):
        if n >= members:
            break
        score = prior(len(h.moves), len({m.robot for m in h.moves})).value + rng.gauss(0, 120)
        batch[h.puzzle.code()] = score
        if abs(score - 1500) <= 250:
            kept += 1
            moves = [m.to_json() for m in h.moves]
            pipe.set(f"solve:{h.puzzle.content_hash()}", _answer(moves, h.puzzle.code()), ex=3600)
        if len(batch) >= 5000:
            pipe.zadd("rated:puzzles", batch)
            pipe.execute()
            batch = {}
    if batch:
        pipe.zadd("rated:puzzles", batch)
    pipe.execute()
    return kept


def _answer(moves: list[dict], code: str) -> str:
    from workers.stores.base import dump

    return dump("answer", {"status": "optimal", "length": len(moves), "moves": moves, "lower_bound": len(moves),
                           "void": False, "code": code})


def timed(client, stores: Stores, players: int) -> list[float]:
    """Seconds per GET /v1/puzzles/next: half new players (first steps: 6 moves
    at most), half with attempts behind them."""
    out = []
    for k in range(players):
        player = f"bench{uuid.uuid4().hex[:10]}"
        if k % 2:
            stores.redis.hset(f"rating:player:public:{player}", mapping={"attempts": 10})
        start = time.perf_counter()
        r = client.get(f"/v1/puzzles/next?player={player}&solution=false")
        out.append(time.perf_counter() - start)
        if r.status_code != 200:
            raise SystemExit(f"/next answered {r.status_code}: {r.json}")
    return out


def sizes(client, stores: Stores) -> None:
    """What a player's keys and a played puzzle hold after n attempts."""
    at = {"REMOTE_ADDR": "10.200.0.1"}
    codes = [client.get(f"/v1/puzzles/random?length=6&seed=size{k}&solution=false", environ_base=at).json["code"]
             for k in range(100)]
    for n in (1, 10, 100):
        player = f"size{n}-{uuid.uuid4().hex[:6]}"
        for code in codes[:n]:
            client.post("/v1/verify", json={"puzzle": {"code": code}, "moves": [], "player": player}, environ_base=at)
        used = {kind: stores.redis.memory_usage(f"{kind}:public:{player}") or 0
                for kind in ("rating:player", "played", "history")}
        print(f"player after {n:>3} attempts: {sum(used.values()):>6} bytes ({used})")
    from solver.model.puzzle import Puzzle

    puzzle = stores.redis.memory_usage(f"rating:puzzle:{Puzzle.from_code(codes[0]).content_hash()}")
    print(f"a played puzzle's record: {puzzle} bytes; rated:puzzles: "
          f"{(stores.redis.memory_usage('rated:puzzles') or 0) / max(1, stores.redis.zcard('rated:puzzles')):.0f} "
          "bytes a member")
    stream = stores.redis.memory_usage("attempts", samples=0) or 0
    print(f"attempts stream: {stream / max(1, stores.redis.xlen('attempts')):.0f} bytes an entry")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, default=200_000)
    parser.add_argument("--players", type=int, default=40)
    args = parser.parse_args()
    rng = random.Random(57)
    with EmbeddedRedis(Path(tempfile.mkdtemp()), persist=False) as server:
        app = create_app({"REDIS_URL": server.url, "RATE_LIMITS_ENABLED": False})
        client, stores = app.test_client(), Stores.from_url(server.url)
        timed(client, stores, 4)  # the pools read once, as a running server has
        for members in (200, args.members):
            kept = fill(stores, members, rng)
            before = rss_mib()
            for ran in ("first served", "served before"):  # themes worked out, then kept (as a server has them)
                took = sorted(timed(client, stores, args.players))
                print(f"{stores.redis.zcard('rated:puzzles'):>7} members ({kept} near the aim with answers), "
                      f"{ran}: /next median {statistics.median(took) * 1000:.1f} ms, "
                      f"p95 {took[int(len(took) * 0.95) - 1] * 1000:.1f} ms")
            window = []
            for _ in range(200):
                start = time.perf_counter()
                codes = stores.ratings.near(1500, 150, 16)
                stores.ratings.played("public", "nobody", [c[:20] for c in codes])
                window.append(time.perf_counter() - start)
            print(f"        the window (near + played, {len(codes)} codes): median "
                  f"{statistics.median(window) * 1000:.2f} ms; RSS {before:.0f} -> {rss_mib():.0f} MiB")
        sizes(client, stores)


if __name__ == "__main__":
    main()
