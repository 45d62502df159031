"""Today's puzzle, a hint, then its solution (served only on request)."""

import os

from ricochet_client import Client

api = Client(os.environ.get("RICOCHET_URL", "http://127.0.0.1:8000"))
today = api.daily()
print(f"puzzle #{today.number} of {today.date}: {today.code}, {today.optimal_length} moves ({today.grade}), "
      f"target {today.puzzle['target']}")
print(" ".join(f"{m['robot']}-{m['direction']}" for m in api.daily_solution(today.date)))
hint = api.daily_hint(today.date, level=2)
print(f"hint: {hint.optimal_length} moves, {hint.robots_moved} robot(s) move")
