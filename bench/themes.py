"""The puzzle library by theme (issue 68): GET /v1/puzzles/next?theme= for each
theme x difficulty, for new players and for players rated 1000, 1500 and 2200.

    .venv/bin/python bench/themes.py [--players 10] [--themes short,many-ways]

A private Redis; the app in this process, warmed as gunicorn's master is (the
pools and the themes' index loaded before the first request).  Each player
asks once per theme and difficulty.  Printed per theme x difficulty: the share
answered 200 with the theme, p50 and p99 latency, the mean distance from the
aim; then the library's counts per theme and rating band (GET /v1/themes and
the index).  Exits 1 if any request was not answered with its theme.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from application.ratings import OFFSETS  # noqa: E402
from service.app import create_app, warm  # noqa: E402
from solver.model.puzzle import Ricochet  # noqa: E402
from solver.production import library  # noqa: E402
from solver.production.themes import THEMES  # noqa: E402
from workers.embedded import EmbeddedRedis  # noqa: E402
from workers.stores import Stores  # noqa: E402

LEVELS = {"new": None, "1000": 1000.0, "1500": 1500.0, "2200": 2200.0}


def player(stores: Stores, rating: float | None) -> str:
    """A new player, or one with this rating and attempts behind them (as play leaves them)."""
    who = f"bench{uuid.uuid4().hex[:10]}"
    if rating is not None:
        stores.redis.hset(f"rating:player:public:{who}", mapping={
            "value": rating, "deviation": 80.0, "volatility": 0.06, "attempts": 40})
    return who


def run(client, stores: Stores, themes: list[str], players: int) -> bool:
    ok = True
    print(f"{'theme':20} {'difficulty':10} {'level':5} {'served':>7} {'p50 ms':>7} {'p99 ms':>7} {'|off aim|':>9}")
    for theme in themes:
        for difficulty in OFFSETS:
            for level, rating in LEVELS.items():
                took, off, served = [], [], 0
                for _ in range(players):
                    who = player(stores, rating)
                    start = time.perf_counter()
                    r = client.get(f"/v1/puzzles/next?player={who}&theme={theme}&difficulty={difficulty}")
                    took.append(time.perf_counter() - start)
                    if r.status_code == 200 and theme in r.json["themes"]:
                        served += 1
                        off.append(abs(r.json["off_aim"]))
                took.sort()
                ok &= served == players
                p99 = took[min(len(took) - 1, int(len(took) * 0.99))]
                print(f"{theme:20} {difficulty:10} {level:5} {served:>3}/{players:<3} "
                      f"{statistics.median(took) * 1000:7.1f} {p99 * 1000:7.1f}"
                      f" {statistics.mean(off) if off else float('nan'):9.0f}")
    return ok


def counts() -> None:
    index = library.shared()
    print("\nthe library, ricochet rule (turn): puzzles per theme and rating band")
    bands = range(1000, 3800, library.BAND)
    print(f"{'theme':20} {'all':>7} " + " ".join(f"{b:>5}" for b in bands))
    for theme in THEMES:
        per = {b: 0 for b in bands}
        column = index.columns.get((theme, Ricochet.TURN.value))
        if column is not None:
            for r in column.ratings:
                b = library.band_of(float(r))
                if b in per:
                    per[b] += 1
        print(f"{theme:20} {index.count(theme):7d} " + " ".join(f"{per[b]:5d}" for b in bands))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=10)
    parser.add_argument("--themes", default=",".join(THEMES))
    args = parser.parse_args()
    with EmbeddedRedis(Path(tempfile.mkdtemp()), persist=False) as server:
        app = create_app({"REDIS_URL": server.url, "RATE_LIMITS_ENABLED": False})
        started = time.perf_counter()
        warm(app)
        print(f"warm (pools and the themes' index): {time.perf_counter() - started:.1f} s")
        ok = run(app.test_client(), Stores.from_url(server.url), args.themes.split(","), args.players)
        counts()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
