"""The type checker (make lint's mypy, [tool.mypy] in pyproject.toml) catches a misnamed key in a
use case's typed reply: a copy of application.jobs.view's reply with one key planted wrong fails the
check, and the same reply with the right keys passes it (so the failure is the key's, not the set-up's)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

REPLY = """\
from application.jobs import JobView


def right() -> JobView:
    return {{"id": "j", "kind": "solve", "state": "pending", "progress": 0.0, "created": 1.0,
             "started": None, "finished": None, "error": None, "result": None}}


def planted() -> JobView:
    return {{"id": "j", "kind": "solve", "state": "pending", "progress": 0.0, "created": 1.0,
             "started": None, "finished": None, "error": None, "{key}": None}}
"""


def test_a_planted_wrong_key_fails_the_type_check(tmp_path: Path) -> None:
    module = tmp_path / "planted_reply.py"
    module.write_text(textwrap.dedent(REPLY.format(key="results")), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", str(module)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert run.returncode == 1, run.stdout + run.stderr
    # Only the planted reply fails (its return, line 10: "results" for "result"), for that key alone.
    assert all(line.startswith(f"{module}:10:") for line in errors), run.stdout
    assert sorted(line.split(": error: ")[1] for line in errors) == [
        'Extra key "results" for TypedDict "JobView"  [typeddict-unknown-key]',
        'Missing key "result" for TypedDict "JobView"  [typeddict-item]'], run.stdout
