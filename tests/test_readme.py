"""Every `ricochet` command in the code blocks of the README and docs/, run exactly as printed
(through bash, from a folder whose .venv is this one), in the order printed.

Commands that run for minutes by design (a pool build, a bank search of 30 or
100 minutes) must still be working, with nothing on standard error but their
progress, when they are stopped after a few seconds; every other command must
finish with exit 0.  The files the commands read stand ready: the puzzles of
examples/, a copy of the bank for --merge to append to, and pool files
for `pool import` (what `pool build --output pools/` writes)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solver.production.pools import PACKAGED

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNS_FOR_MINUTES = ("ricochet pool build", "ricochet bank --min-length", "ricochet bank --walk",
                    "ricochet bank --exhaustive")
STOP_AFTER = 2.5  # seconds a long command runs in the test before it is stopped


def readme_commands() -> list[str]:
    """Each `.venv/bin/ricochet` line of the documents' sh blocks, without its
    comment, once (the README and docs/ print some alike)."""
    text = "\n".join(path.read_text(encoding="utf-8") for path in DOCUMENTS)
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.startswith(".venv/bin/ricochet "):
                lines.append(re.sub(r"\s+#.*$", "", line).strip())
    return list(dict.fromkeys(lines))


def test_the_readme_names_the_commands():
    commands = readme_commands()
    assert len(commands) >= 15 and not any("..." in c for c in commands)
    assert any(c.startswith(".venv/bin/ricochet pack ") for c in commands)


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bank = tmp_path / "solver" / "production" / "data"
    bank.mkdir(parents=True)
    (bank / "bank.jsonl").write_bytes((ROOT / "solver" / "production" / "data" / "bank.jsonl").read_bytes())
    (tmp_path / "pools").mkdir()
    for path in sorted(PACKAGED.glob("*.pool.gz"))[:2]:
        (tmp_path / "pools" / path.name).write_bytes(path.read_bytes())
    return tmp_path


@pytest.mark.slow
def test_every_readme_command_runs_as_printed(workdir, redis_url):
    base, _, _ = redis_url.rpartition("/")
    env = {**os.environ, "REDIS_URL": f"{base}/9", "PYTHONPATH": str(ROOT)}
    for command in readme_commands():
        proc = subprocess.Popen(["bash", "-c", command], cwd=workdir, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        if any(name in command for name in RUNS_FOR_MINUTES):
            # It runs STOP_AFTER seconds and, if it names an --output file, until that is there
            # (a loaded machine may take longer to start it; the merge below reads it).
            output = re.search(r"--output (\S+)", command)
            start = time.monotonic()
            while proc.poll() is None and (time.monotonic() < start + STOP_AFTER or (
                    output and not (workdir / output[1]).exists() and time.monotonic() < start + 120)):
                time.sleep(0.2)
            still_running = proc.poll() is None
            if still_running:
                os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=30)
            assert still_running or proc.returncode == 0, f"{command}\n{err[-2000:]}"
            assert "Traceback" not in err and "error" not in err.lower(), f"{command}\n{err[-2000:]}"
            continue
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{command} exited {proc.returncode}\n{err[-2000:]}"
    # What the finished commands wrote is what the README says they write.
    assert (workdir / "board.svg").read_text().startswith("<svg")
    assert len((workdir / "puzzles.jsonl").read_text().splitlines()) == 5  # generate --count 5
    pack = [json.loads(line) for line in (workdir / "pack.jsonl").read_text().splitlines()]
    assert len(pack) == 100 and all(14 <= p["optimal_length"] <= 18 for p in pack)
    assert (workdir / "book.pdf").read_bytes().startswith(b"%PDF")  # pack --pdf
