"""The faults a cluster run injects, each recorded in the history when it starts
and when it is healed; `run` puts a workload on the cluster, injects a list of
them one after another and returns the checked history.

    worker_lost     the busiest worker host lost whole (unplugged, every process SIGKILLed) mid-pack
    worker_cut      the busiest worker host cut from Redis (its link down) for `hold` seconds, then healed
    slow_network    100 ms delay and 5% loss on every link for `hold` seconds
    api_lost        an API host lost behind the front; a new one started after `hold` seconds
    redis_failover  the Redis primary SIGKILLed: the Sentinels promote the replica, every process follows;
                    the killed server restarted (as a supervisor would), it comes back as a replica
    beat_lost       the beat's host lost whole (with a busy worker host, so that only the beat can send
                    the lost pack chunk again); a new beat started on a replacement host
    replica_lag_failover  the replica `LAG_MS` behind its primary, then the primary killed with the
                    replication in flight: what `RICOCHET_WAIT_REPLICAS` is for (bench/cluster.py
                    --wait-replicas 0 shows the writes lost without it)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cluster.history import Fault, History, Workload, check
from tests.cluster.stack import Cluster

WORKERS = ("w1", "w2", "w3")


def _cpu(cluster: Cluster, host: str) -> float:
    total = 0.0
    for pid in cluster.net_pids(host):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total


def busiest_worker(cluster: Cluster, alive: list[str], seconds: float = 1.0) -> str:
    before = {h: _cpu(cluster, h) for h in alive}
    time.sleep(seconds)
    return max(alive, key=lambda h: _cpu(cluster, h) - before[h])


def _mid_pack(state: dict, timeout: float = 120) -> None:
    """Until a pack's job is running, some of its puzzles made (a chunk is being searched)."""
    workload = state["workload"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if workload.pack_state == "running" and 0 < workload.pack_progress < 1:
            return
        time.sleep(0.2)
    raise TimeoutError(f"no pack was running (the last: {workload.pack_job} {workload.pack_state} "
                       f"{workload.pack_progress})")


def worker_lost(cluster: Cluster, history: History, hold: float, state: dict) -> None:
    _mid_pack(state)
    host = busiest_worker(cluster, state["workers"])
    history.faults.append(Fault(f"worker host {host} lost mid-pack", time.time()))
    cluster.net.lose(host)
    state["workers"].remove(host)
    time.sleep(hold)
    history.faults[-1].healed = time.time()


def worker_cut(cluster: Cluster, history: History, hold: float, state: dict) -> None:
    _mid_pack(state)
    host = busiest_worker(cluster, state["workers"])
    history.faults.append(Fault(f"worker host {host} cut from Redis {hold:.0f} s", time.time()))
    cluster.net.cut(host)
    time.sleep(hold)
    cluster.net.heal(host)
    history.faults[-1].healed = time.time()


def slow_network(cluster: Cluster, history: History, hold: float, state: dict) -> None:
    hosts = list(cluster.net.hosts)
    how = {cluster.net.impair(h, 100, 5, cluster.netem) for h in hosts}
    state["round_trip_ms"] = cluster.round_trip_ms()  # that the delay is there: about 200 ms
    history.faults.append(Fault(f"every link: {'; '.join(sorted(how))}, {hold:.0f} s "
                                f"(a PING from the client to Redis: {state['round_trip_ms']:.0f} ms)", time.time()))
    time.sleep(hold)
    dead = cluster.net.dead_delayers()
    # still there at the end: the smaller of the two round trips is the one the run reports
    state["round_trip_ms"] = min(state["round_trip_ms"], cluster.round_trip_ms())
    for h in hosts:
        cluster.net.unimpair(h)
    history.faults[-1].healed = time.time()
    if dead:
        raise RuntimeError(f"the delay queue exited on {dead}: the links were not slowed as the history says")


def api_lost(cluster: Cluster, history: History, hold: float, state: dict) -> None:
    lost = state["apis"][0]
    spare = next(h for h in ("api1", "api2", "api3") if h not in state["apis"])
    history.faults.append(Fault(f"API host {lost} lost behind the front", time.time(), loses_in_flight=True))
    cluster.net.lose(lost)
    time.sleep(hold)
    # The runbook's replacement: a new host, put in the front's upstream (a reload) once it answers /readyz.
    cluster.start_api(spare)
    cluster.wait(lambda: cluster.api_ready(spare), 120, "the replacement API host")
    state["apis"] = [*state["apis"][1:], spare]
    cluster.configure_front(state["apis"], reload=True)
    history.faults[-1].healed = time.time()


def redis_failover(cluster: Cluster, history: History, hold: float, state: dict) -> None:
    history.faults.append(Fault("Redis primary killed, replica promoted by Sentinel", time.time(), allows_503=True))
    old = cluster.kill_redis_primary()
    _promoted_then_restarted(cluster, old, hold, state)
    history.faults[-1].healed = time.time()


def _promoted_then_restarted(cluster: Cluster, old: tuple[str, int], after: float, state: dict) -> None:
    """Until the Sentinels promote a replica over the killed `old` primary; `after` seconds
    on, `old` restarted as a supervisor would (it joins as a replica), until it is one."""
    state["promoted_s"] = cluster.wait(lambda: cluster.primary() not in (None, old), 60, "a promoted replica")
    time.sleep(after)
    cluster.redis.restart(cluster.redis.name_of(old))
    cluster.wait(lambda: cluster.inside(cluster.redis._ready), 60, "the old primary back as a replica")


LAG_MS = 1000  # how far the replica falls behind in replica_lag_failover


def replica_lag_failover(cluster: Cluster, history: History, hold: float, state: dict) -> None:
    """The replication stream from the primary to its replica held LAG_MS (the replica
    falls that far behind), then the primary killed with what is on that wire (as when
    its host goes): the promoted replica lacks the writes of the last LAG_MS.  Acknowledged
    writes survive only if each waited for the replica (RICOCHET_WAIT_REPLICAS=1)."""
    primary = cluster.primary()
    assert primary is not None
    replica = cluster.replica_link(primary)
    match = f"-p tcp -s {primary[0]} --sport {primary[1]} -d {replica[0]} --dport {replica[1]}"
    cluster.net.delay("redis", LAG_MS, match, queue=1)
    history.faults.append(Fault(f"Redis primary killed while its replica lagged {LAG_MS} ms, the replica promoted",
                                time.time(), allows_503=True))
    time.sleep(hold)
    # The primary's host goes: nothing more of that stream arrives (its kernel would send the killed
    # server's unacknowledged bytes again, which a lost host does not), and what was on the wire is lost.
    cluster.net.block("redis", match)
    old = cluster.kill_redis_primary()
    cluster.net.undelay("redis", queue=1, drop=True)
    _promoted_then_restarted(cluster, old, 5, state)
    cluster.net.block("redis", match, on=False)
    history.faults[-1].healed = time.time()


def beat_lost(cluster: Cluster, history: History, hold: float, state: dict) -> None:
    _mid_pack(state)
    host = busiest_worker(cluster, state["workers"])
    history.faults.append(Fault(f"beat host lost (and worker host {host} mid-pack); a new beat", time.time()))
    cluster.net.lose("beat")
    cluster.net.lose(host)
    state["workers"].remove(host)
    time.sleep(hold)
    cluster.net.heal("beat")  # the replacement host: a new machine, with no schedule file of the lost one's
    (cluster.folder / "beat" / "celerybeat-schedule").unlink(missing_ok=True)
    cluster.start_beat("beat")
    history.faults[-1].healed = time.time()


FAULTS: dict[str, Callable[[Cluster, History, float, dict], None]] = {
    f.__name__: f for f in (worker_lost, worker_cut, slow_network, api_lost, redis_failover, beat_lost,
                            replica_lag_failover)}


def puzzles_off_request(history: History) -> dict[str, list[str]]:
    """Each pack's puzzles that are not what it asked for, solved here: a code that does
    not read, or whose optimal length is outside min_length..max_length.  (Which puzzle
    lands at which index is not fixed: chunks run at once on several workers, and a
    pack keeps its puzzles distinct in the order they are made.)"""
    from solver.model.puzzle import Puzzle
    from solver.search.solve import solve

    off: dict[str, list[str]] = {}
    for job, pack in history.packs.items():
        low, high = pack["request"]["min_length"], pack["request"]["max_length"]
        for code in pack["puzzles"] if isinstance(pack["puzzles"], list) else []:
            answer = solve(Puzzle.from_code(code))
            if answer.status != "optimal" or not low <= answer.length <= high:
                off.setdefault(job, []).append(code)
    return off


def run(cluster: Cluster, plan: list[tuple[str, float]], folder: Path, board: str, calm: float = 10,
        settle_timeout: float = 300, pack_count: int = 12) -> dict[str, Any]:
    """The workload on the cluster (packs of `pack_count` puzzles), `plan`'s faults (name,
    seconds held) one after another with `calm` seconds between them, then everything
    read back and checked."""
    history = History()
    workload = Workload(cluster.front_url, history, board, cluster.workload_key(), pack_count)
    threads = [cluster.inside_thread(t) for t in (workload.writes, workload.reads, workload.packs)]
    state: dict[str, Any] = {"workers": list(WORKERS), "workload": workload, "apis": ["api1", "api2"]}
    try:
        cluster.issue_key(history, "before")
        time.sleep(calm)
        for name, hold in plan:
            FAULTS[name](cluster, history, hold, state)
            cluster.issue_key(history, name)
            time.sleep(calm)
    finally:
        workload.stopping.set()
        history.stopped = time.time()
        for t in threads:
            t.join(timeout=60)
        history.dump(folder / "history.jsonl")  # read back even when a fault could not be injected
    stuck = [t.name for t in threads if t.is_alive()]
    if stuck:  # its acknowledgements could land after the read-back began, unread
        raise RuntimeError(f"the workload's threads {stuck} did not stop within 60 s; history in {folder}")
    dead = [name for name in ("writes", "reads", "packs") if name not in workload.finished]
    if dead:  # a thread that died on an answer it did not expect stopped recording early
        raise RuntimeError(f"the workload's {dead} thread(s) died: {workload.finished}; history in {folder}")
    workload.stopping.clear()
    cluster.inside(lambda: workload.settle(settle_timeout))
    cluster.list_keys(history)
    history.dump(folder / "history.jsonl")
    verdict = check(history, puzzles_off_request(history))
    verdict["promoted_s"] = state.get("promoted_s")
    verdict["round_trip_ms"] = state.get("round_trip_ms")
    (folder / "verdict.json").write_text(json.dumps(verdict, indent=2))
    return verdict
