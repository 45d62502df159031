"""Check a player's answer: a wrong move, a short answer, and the optimal one."""

from client import call

daily = call("GET", "/v1/daily")
solution = call("GET", f"/v1/daily/{daily['date']}/solution")["moves"]
attempts = {
    "one move short": solution[:-1],
    "the published solution": solution,
}
for name, moves in attempts.items():
    v = call("POST", "/v1/verify", {"puzzle": daily["puzzle"], "moves": moves})
    print(f"{name}: legal={v['legal']} solved={v['solved']} length={v['length']} "
          f"optimal={v['optimal']} (optimum {v['optimal_length']})")
