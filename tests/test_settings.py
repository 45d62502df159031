"""Settings in one place: every variable the code reads is a checked setting,
the README's table is generated from them, and a bad value stops every process
at its start with a line that names the variable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workers.settings import VARIABLES, Settings, SettingsError, table, with_table

ROOT = Path(__file__).resolve().parents[1]
CODE = [p for top in ("service", "workers", "solver") for p in (ROOT / top).rglob("*.py")]
RICOCHET = str(Path(sys.executable).parent / "ricochet")


def test_the_readme_table_is_the_generated_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table() in readme and with_table(readme) == readme, \
        "run `.venv/bin/python -m workers.settings README.md`"


def test_every_variable_the_code_reads_is_a_setting():
    named = set()
    for path in CODE:
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r"\bRICOCHET_[A-Z0-9_]+\b", text))
        if path.name != "settings.py":  # only the settings read the environment for these
            for line in text.splitlines():
                if re.search(r"os\.(environ|getenv)", line) and re.search(r"RICOCHET_|REDIS_URL", line):
                    pytest.fail(f"{path.relative_to(ROOT)} reads the environment: {line.strip()}")
    assert named and named <= set(VARIABLES), f"not settings: {sorted(named - set(VARIABLES))}"


def test_defaults_and_values():
    defaults = Settings.from_env({})
    assert defaults.redis_url is None and defaults.solve_time_budget == 1.0 and defaults.job_threads == 2
    assert defaults.rate_limit == "1200 per minute" and defaults.web_workers == (os.cpu_count() or 1) * 2 + 1
    chosen = Settings.from_env({"REDIS_URL": "redis://h:1/2", "RICOCHET_RATE_LIMIT": "10/second;100 per hour",
                                "RICOCHET_JOB_THREADS": "1", "RICOCHET_BIND": "unix:/tmp/s"})
    assert chosen.redis_url == "redis://h:1/2" and chosen.rate_limit == "10/second;100 per hour"
    assert chosen.job_threads == 1 and chosen.bind == "unix:/tmp/s"


@pytest.mark.parametrize(("variable", "value"), [
    ("RICOCHET_RATE_LIMIT", "lots"), ("RICOCHET_RATE_LIMIT_SEARCH", "120 per fortnight"),
    ("RICOCHET_SOLVE_TIME_BUDGET", "abc"), ("RICOCHET_SOLVE_TIME_BUDGET", "0"), ("RICOCHET_JOB_THREADS", "9"),
    ("RICOCHET_JOB_THREADS", "two"), ("RICOCHET_RATE_LIMITS", "yes"), ("RICOCHET_BIND", "8000"),
    ("REDIS_URL", "localhost:6379"), ("RICOCHET_WEB_WORKERS", "0"), ("RICOCHET_JOB_TIME_BUDGET", "nan"),
])
def test_a_bad_value_names_the_variable_and_what_it_takes(variable, value):
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({variable: value})
    assert str(caught.value).startswith(f"{variable}={value!r} is not accepted: it takes {VARIABLES[variable].accepts}")


def _started(command: list[str], variable: str, value: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RICOCHET_") and k != "REDIS_URL"}
    return subprocess.run(command, env={**env, variable: value}, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("command", [
    [RICOCHET, "serve"],
    [RICOCHET, "worker"],
    [sys.executable, "-m", "celery", "-A", "workers.app", "worker"],
    [sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_config", "service.app:create_app()"],
], ids=["serve", "worker", "celery", "gunicorn"])
@pytest.mark.parametrize(("variable", "value"), [("RICOCHET_RATE_LIMIT", "lots"),
                                                 ("RICOCHET_SOLVE_TIME_BUDGET", "abc")])
def test_a_bad_value_stops_every_process_at_its_start(command, variable, value, tmp_path):
    done = _started(command, variable, value, tmp_path)
    assert done.returncode != 0
    assert f"ricochet: {variable}={value!r} is not accepted" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "instance").exists()  # nothing was started first
