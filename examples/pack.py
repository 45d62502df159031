"""A pack of puzzles: create the job, follow its progress, fetch the puzzles."""

import sys
import time
import uuid

from client import call

job = call("POST", "/v1/packs", {"count": 6, "min_length": 8, "max_length": 10, "seed": "example"},
           headers={"Idempotency-Key": f"example-{uuid.uuid4()}"})
while job["state"] not in ("succeeded", "failed"):
    print(f"\rjob {job['id']}: {job['state']} {100 * job['progress']:.0f}%", end="", file=sys.stderr)
    time.sleep(1)
    job = call("GET", f"/v1/jobs/{job['id']}")
print(file=sys.stderr)
if job["state"] == "failed":
    raise SystemExit(f"the pack failed: {job['error']}")
pack = call("GET", f"/v1/packs/{job['pack_id']}")
for p in pack["puzzles"]:
    print(p["code"], p["optimal_length"], p["difficulty"]["grade"])
