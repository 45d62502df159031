"""A pack of puzzles: create the job, follow its progress, fetch the puzzles."""

import os
import sys
import uuid

from ricochet_client import Client

api = Client(os.environ.get("RICOCHET_URL", "http://127.0.0.1:8000"))
job = api.pack(count=6, min_length=8, max_length=10, seed="example", idempotency_key=f"example-{uuid.uuid4()}")
job.wait(progress=lambda j: print(f"\rjob {j.id}: {j.state} {100 * j.progress:.0f}%", end="", file=sys.stderr))
print(file=sys.stderr)
if job.state != "succeeded":
    raise SystemExit(f"the pack {job.state}: {job.raw.get('error')}")
for p in job.puzzles():
    print(p.code, p.optimal_length, p.difficulty["grade"])
