"""Every bench starts and, where it can in seconds, runs at its smallest size: a
bench that dies at start (an argparse default reading a name that moved) fails
here, not on the day someone wants its figures.  No timing is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHES = sorted(p.name for p in (ROOT / "bench").glob("*.py") if not p.name.startswith("_"))  # _x.py: helpers


def _run(*args: str, cwd: Path = ROOT, timeout: float = 240) -> str:
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.parametrize("bench", BENCHES)
def test_every_bench_starts(bench):
    assert "usage:" in _run(str(ROOT / "bench" / bench), "--help")


def test_the_generator_bench_runs_its_smallest_size():
    out = _run("bench/generate.py", "--min-length", "3", "--max-length", "4", "--samples", "1", "--budget", "10")
    assert "band 2-8:" in out and "none after" not in out


def test_the_solver_bench_runs_quick():
    out = _run("bench/solver.py", "--quick")
    assert "speed-up over the reference BFS" in out and "peak memory" in out


def test_the_peers_bench_runs_without_a_peer():
    out = _run("bench/peers.py", "--count", "4")
    assert "24 moves: ours" in out


def test_the_distribution_bench_writes_where_it_is_told(tmp_path):
    out = _run("bench/distribution.py", "--positions", "40", "--output", str(tmp_path))
    assert "5-none: 40 positions" in out
    assert (tmp_path / "solver" / "production" / "data" / "distribution.json").exists()
    assert (tmp_path / "docs" / "distribution.md").read_text().startswith("# Optimal lengths")


@pytest.mark.slow
def test_the_soak_ends_with_every_process_within_its_budget():
    """bench/soak.py for as long as the suite affords (10 s of traffic, the first
    4 s of it warm-up, on the stack `ricochet serve` runs; its traffic takes both
    cores, and its fixed part, the stack's start, an export, books and three event
    streams of 25 s, about 50 s of a core): every process, and the
    stack, within its budget at the end (workers/memory.py's BUDGETS_MIB, the table
    docs/operations.md shows; an hour of it by hand is in bench/RESULTS.md)."""
    out = _run("bench/soak.py", "--seconds", "6", "--warmup", "4", "--check", timeout=420)
    assert "over budget at the end: none" in out
    assert "processes started or gone during the run: 0" in out
    for route in ("verify", "picture", "anon-room", "oembed", "webhooks", "made-up"):
        assert f"\n{route:>10} " in out, f"the soak's mix sent no {route} request"
