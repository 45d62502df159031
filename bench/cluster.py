"""Many machines, proven: the stack on separate hosts (network namespaces, see
tests/cluster/), every fault at full length, the history checked, and what
each fault cost: seconds until the service answered again, requests answered
503 meanwhile.  Also what waiting for a replica costs a write (`--wait-cost`).

    sudo .venv/bin/python bench/cluster.py                 # every fault (about 15 minutes)
    sudo .venv/bin/python bench/cluster.py --faults redis_failover,api_lost
    sudo .venv/bin/python bench/cluster.py --faults redis_failover --replicas 2
    sudo .venv/bin/python bench/cluster.py --faults replica_lag_failover [--wait-replicas 0]
    .venv/bin/python bench/cluster.py --wait-cost 300      # POST /v1/rooms with and without WAIT 1

Needs root for the namespaces (the wait cost does not).  Figures: bench/RESULTS.md, docs/operations.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FULL = {"worker_lost": 30, "worker_cut": 30, "slow_network": 60, "api_lost": 30, "redis_failover": 5,
        "beat_lost": 30, "replica_lag_failover": 10}
# seconds each is held (redis_failover: from the promotion until a supervisor restarts the killed server;
# replica_lag_failover: the lag before the kill)


def faults(names: list[str], calm: float, replicas: int, wait_replicas: int) -> int:
    from tests.cluster import netns
    from tests.cluster.faults import run
    from tests.cluster.stack import Cluster
    from tests.helpers import unpooled_board

    why = netns.why_not()
    if why:
        raise SystemExit(f"cluster: {why}")
    netns.sweep()
    folder = Path(tempfile.mkdtemp(prefix="ricochet-cluster-"))
    cluster = Cluster(folder, netem=netns.netem_available(), replicas=replicas, wait_replicas=wait_replicas)
    try:
        started = time.monotonic()
        cluster.start()
        print(f"cluster up in {time.monotonic() - started:.0f} s ({len(cluster.net.hosts)} hosts, {replicas} Redis "
              f"replica(s), RICOCHET_WAIT_REPLICAS={wait_replicas}; logs in {folder})", flush=True)
        verdict = run(cluster, [(n, FULL[n]) for n in names], folder, unpooled_board(), calm=calm,
                      settle_timeout=600)
    finally:
        cluster.close()
    print(f"history: {verdict['requests']} requests, acknowledged {verdict['acknowledged']}, "
          f"{verdict['packs']} packs ({verdict['unmade']} items reported unmade); "
          f"verdict: {'holds' if verdict['ok'] else 'VIOLATED'}")
    for p in verdict["problems"]:
        print("  problem:", p)
    print("| fault | time to resume (reads) | answered 503 | unanswered in flight | failed / requests | slowest pack |")
    print("|---|---|---|---|---|---|")
    for f in verdict["faults"]:
        print(f"| {f['fault']} | {f['resumed_s']} s ({f['reads_resumed_s']} s) | {f['answered_503']} | "
              f"{f['unanswered_in_flight']} | {f['failed']} / {f['requests']} | {f['slowest_pack_s']} s |")
    ended = verdict.get("pack_seconds", [])
    if ended:
        print(f"packs: median {statistics.median(ended):.1f} s from acknowledgement to end, slowest {max(ended):.1f} s")
    if verdict.get("promoted_s") is not None:
        print(f"Sentinel promoted the replica {verdict['promoted_s']:.1f} s after the primary was killed")
    print(json.dumps(verdict))
    return 0 if verdict["ok"] else 1


def wait_cost(count: int) -> int:
    """POST /v1/rooms through the app, with RICOCHET_WAIT_REPLICAS 0 and 1 in turn, on a
    local primary + replica + Sentinels: the milliseconds a write's acknowledgement waits."""
    from service.app import create_app
    from tests.sentinels import Group
    from workers.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        group = Group(Path(tmp)).start()
        try:
            times: dict[int, list[float]] = {0: [], 1: []}
            clients = {w: create_app(settings=Settings.from_env(group.env(
                RICOCHET_WAIT_REPLICAS=str(w), RICOCHET_RATE_LIMITS="off"))).test_client() for w in times}
            for _ in range(count):
                for w, client in clients.items():  # in turn, so that the machine's load falls on both alike
                    t = time.perf_counter()
                    assert client.post("/v1/rooms", json={"name": "Ada"}).status_code == 201
                    times[w].append((time.perf_counter() - t) * 1000)
        finally:
            group.stop()
    print("| RICOCHET_WAIT_REPLICAS | POST /v1/rooms median | p90 | p99 |")
    print("|---|---|---|---|")
    for w, ms in times.items():
        q = statistics.quantiles(ms, n=100)
        print(f"| {w} | {statistics.median(ms):.2f} ms | {q[89]:.2f} ms | {q[98]:.2f} ms |")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--faults", default=",".join(FULL), help=f"which, in order (default all: {','.join(FULL)})")
    p.add_argument("--calm", type=float, default=20, help="seconds between two faults")
    p.add_argument("--replicas", type=int, default=1, choices=(1, 2),
                   help="Redis replicas beside the primary (2: writes need not wait for the killed one's return)")
    p.add_argument("--wait-replicas", type=int, default=1, choices=(0, 1),
                   help="RICOCHET_WAIT_REPLICAS of every process (0: replica_lag_failover loses acknowledged writes)")
    p.add_argument("--wait-cost", type=int, metavar="N", help="time N writes with and without WAIT instead")
    args = p.parse_args()
    if args.wait_cost:
        return wait_cost(args.wait_cost)
    names = [n for n in args.faults.split(",") if n]
    unknown = [n for n in names if n not in FULL]
    if unknown:
        p.error(f"unknown faults {unknown}; known: {', '.join(FULL)}")
    return faults(names, args.calm, args.replicas, args.wait_replicas)


if __name__ == "__main__":
    sys.exit(main())
