"""Check a player's answer: a wrong move, a short answer, and the optimal one."""

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
    v = api.verify(today.puzzle, moves)
    print(f"{name}: legal={v.legal} solved={v.solved} length={v.length} "
          f"optimal={v.optimal} (optimum {v.optimal_length})")
