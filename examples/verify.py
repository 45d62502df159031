"""Check a player's answer, a short one and the optimal one; with `player`, each attempt is recorded
(only a first attempt at a puzzle handed without its answer moves the ratings: docs/ratings.md)."""

import os

from ricochet_client import Client

api = Client(os.environ.get("RICOCHET_URL", "http://127.0.0.1:8000"))
today = api.daily()
solution = api.daily_solution(today.date)
attempts = {
    "one move short": solution[:-1],
    "the published solution": solution,
}
for name, moves in attempts.items():
    v = api.verify(today.puzzle, moves, player="example-player")  # with a player, the attempt is recorded
    rated = v.attempt["rated"] if v.attempt else None
    print(f"{name}: legal={v.legal} solved={v.solved} length={v.length} "
          f"optimal={v.optimal} (optimum {v.optimal_length}) rated={rated}")
