#!/bin/sh
# Ask for a pack of 6 puzzles of 8 to 10 moves, follow the job, fetch the pack.
# The Idempotency-Key makes a retried POST return the same job.
set -eu
BASE="${RICOCHET_URL:-http://127.0.0.1:8000}"
JOB=$(curl -fsS -X POST "$BASE/v1/packs" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: example-pack-$(date +%s)" \
  -d '{"count": 6, "min_length": 8, "max_length": 10, "seed": "example"}' | jq -r .id)
while :; do
  STATE=$(curl -fsS "$BASE/v1/jobs/$JOB")
  echo "job $JOB: $(echo "$STATE" | jq -r .state) $(echo "$STATE" | jq -r .progress)"
  case $(echo "$STATE" | jq -r .state) in succeeded) break ;; failed) exit 1 ;; esac
  sleep 1
done
curl -fsS "$BASE/v1/packs/$JOB?format=ndjson" | jq -c '{code, optimal_length, grade: .difficulty.grade}'
