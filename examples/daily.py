"""Today's puzzle, then its solution (served only on request)."""

from client import call

daily = call("GET", "/v1/daily")
print(f"puzzle of {daily['date']}: {daily['code']}, {daily['optimal_length']} moves "
      f"({daily['difficulty']['grade']}), target {daily['puzzle']['target']}")
solution = call("GET", f"/v1/daily/{daily['date']}/solution")["moves"]
print(" ".join(f"{m['robot']}-{m['direction']}" for m in solution))
