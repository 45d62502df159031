"""The stack on separate hosts (network namespaces), faults injected, the history
checked (tests/cluster/faults.py, history.py).  The default run holds each
fault briefly; `bench/cluster.py` runs every fault at full length and prints
the figures docs/operations.md quotes.

Skipped, with the reason, where network namespaces cannot be made (not root,
no iproute2); CI runs as root and runs them (`make cluster-tools` installs
what they need).
"""

from __future__ import annotations

import pytest

from tests.cluster import netns

pytestmark = pytest.mark.slow

_why = netns.why_not()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if _why:
        pytest.skip(_why)
    from tests.cluster.stack import Cluster

    netns.sweep()  # what a killed run left behind
    c = Cluster(tmp_path_factory.mktemp("cluster"), netem=netns.netem_available())
    try:  # the namespaces go whatever happens: a failed start, a failed test, an interrupted run
        c.start()
        yield c
    finally:
        c.close()


def _report(verdict: dict) -> str:
    lines = [f"{f['fault']}: resumed in {f['resumed_s']} s (reads {f['reads_resumed_s']} s), "
             f"{f['answered_503']} answered 503, "
             f"{f['failed']} failed of {f['requests']}" for f in verdict["faults"]]
    return "\n".join([*verdict["problems"], *lines])


def test_hosts_lost_links_cut_and_redis_failed_over(cluster, tmp_path):
    """Four of the faults, shortened (bench/cluster.py runs all six at length): the
    history holds (no acknowledged write lost, each pack complete with each puzzle
    once, no 5xx but 503s while Redis fails over), and the slowed links were slow
    (a round trip between two hosts crosses two 100 ms delays)."""
    from tests.cluster.faults import run
    from tests.helpers import unpooled_board

    plan = [("worker_lost", 3), ("redis_failover", 2), ("api_lost", 5), ("slow_network", 8)]
    # Packs of 6 (3-4 s of a worker's search each, bench/cluster.py's 12 twice that): each fault still
    # waits for one mid-flight, and the packs' searches were half the run's CPU.
    verdict = run(cluster, plan, tmp_path, unpooled_board(), calm=3, settle_timeout=240, pack_count=6)
    print(_report(verdict))
    assert verdict["ok"], _report(verdict)
    acknowledged = verdict["acknowledged"]
    assert min(acknowledged["room"], acknowledged["rating"]) >= 10 and acknowledged["pack"] >= 2, acknowledged
    assert len(verdict["faults"]) == len(plan)
    assert verdict["round_trip_ms"] >= 180, "the 100 ms delay on each host's link was not applied"


def test_a_failed_run_leaves_no_namespace_behind(tmp_path):
    """The sweep removes the namespaces (and kills the processes) of a run whose process is gone."""
    if _why:
        pytest.skip(_why)
    import subprocess
    import sys

    script = ("from tests.cluster import netns; n = netns.Network(); n.add('h', 9); "
              "import subprocess, os; subprocess.Popen(['ip', 'netns', 'exec', n.ns('h'), 'sleep', '600'], "
              "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True); "
              "print(n.prefix, flush=True); os._exit(1)")
    prefix = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                            cwd=netns.Path(__file__).resolve().parents[2]).stdout.strip()
    assert prefix and any(ns.startswith(prefix) for ns in netns.namespaces())
    removed = netns.sweep()
    assert f"{prefix}-h" in removed and not any(ns.startswith(prefix) for ns in netns.namespaces())
