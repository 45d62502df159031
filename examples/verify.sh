#!/bin/sh
# Check a player's answer to today's puzzle: here, the published solution with
# its last move missing (legal, not solved), then the whole solution (optimal).
set -eu
BASE="${RICOCHET_URL:-http://127.0.0.1:8000}"
DATE=$(curl -fsS "$BASE/v1/daily" | jq -r .date)
PUZZLE=$(curl -fsS "$BASE/v1/daily/$DATE" | jq -c .puzzle)
MOVES=$(curl -fsS "$BASE/v1/daily/$DATE/solution" | jq -c .moves)
SHORT=$(echo "$MOVES" | jq -c '.[:-1]')
for ATTEMPT in "$SHORT" "$MOVES"; do
  curl -fsS -X POST "$BASE/v1/verify" -H 'Content-Type: application/json' \
    -d "{\"puzzle\": $PUZZLE, \"moves\": $ATTEMPT}" | jq -c '{legal, solved, length, optimal, optimal_length}'
done
