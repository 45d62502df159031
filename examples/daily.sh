#!/bin/sh
# Today's puzzle, then (only on request) its solution.  The ETag lets a client
# revalidate cheaply: a second request with If-None-Match answers 304.
set -eu
BASE="${RICOCHET_URL:-http://127.0.0.1:8000}"
curl -fsS -D headers.tmp "$BASE/v1/daily" -o daily.json
DATE=$(jq -r .date daily.json)
ETAG=$(grep -i '^etag:' headers.tmp | cut -d' ' -f2 | tr -d '\r')
echo "puzzle of $DATE: $(jq -r .code daily.json), $(jq .optimal_length daily.json) moves ($(jq -r .difficulty.grade daily.json))"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $ETAG" "$BASE/v1/daily/$DATE")
echo "revalidated with If-None-Match: $STATUS"
curl -fsS "$BASE/v1/daily/$DATE/solution" | jq -c .moves
rm -f headers.tmp daily.json
