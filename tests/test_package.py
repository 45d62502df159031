"""The installed package, as the image runs it: a wheel (not the source tree)
installed into a fresh virtualenv and served by gunicorn from another folder,
with the Dockerfile's own command.  Docker need not be installed: the test
reads the Dockerfile and does what its run stage does."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "deploy" / "Dockerfile").read_text()


def test_the_dockerfile_builds_in_one_stage_and_runs_the_installed_package_in_another():
    stages = re.findall(r"^FROM (\S+)(?: AS (\w+))?", DOCKERFILE, re.M)
    assert len(stages) == 2 and stages[0][1] == "build"
    run_stage = DOCKERFILE.split("\nFROM ")[-1]
    assert "COPY --from=build /wheels" in run_stage and "pip install" in run_stage
    assert not re.search(r"^COPY (solver|service|workers)\b", run_stage, re.M)  # no source tree to shadow it
    user = re.findall(r"^USER (\S+)", run_stage, re.M)
    assert user and user[-1] not in ("root", "0")
    assert re.search(r"^HEALTHCHECK .*\n?.*healthz", run_stage, re.M)


def _build_context(into: Path) -> Path:
    """The build stage's work folder: exactly what its COPY lines take from the
    context (the checkout less .dockerignore's patterns)."""
    build_stage = DOCKERFILE.split("\nFROM ")[1]
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    names = {Path(p).name.removeprefix("*") for p in ignored if p.startswith("**/")}

    def skip(folder: str, entries: list[str]) -> list[str]:
        return [e for e in entries if e in names or any(e.endswith(n) for n in names if n.startswith("."))]

    into.mkdir()
    for line in re.findall(r"^COPY (?!--)(.+)$", build_stage, re.M):
        *sources, target = line.split()
        for source in sources:
            path = ROOT / source
            assert path.exists(), f"the Dockerfile copies {source}, which the checkout lacks"
            if path.is_dir():
                shutil.copytree(path, into / target, ignore=skip)
            else:
                shutil.copy(path, into / (target if target not in ("./", ".") else source))
    return into


def test_the_build_stage_copies_every_package_the_wheel_names(tmp_path):
    """Every package pyproject.toml lists is in the build stage's folder, and nothing
    the context must not carry (.dockerignore) is."""
    context = _build_context(tmp_path / "src")
    listed = re.search(r"^packages = \[(.*)\]", (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    for package in re.findall(r'"([\w.]+)"', listed):
        assert (context / package.replace(".", "/") / "__init__.py").exists(), package
    assert not list(context.rglob("__pycache__")) and not list(context.rglob("*.so"))
    for needed in (".venv", ".git", "instance", "build"):
        assert needed in (ROOT / ".dockerignore").read_text()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.status, r.headers["Content-Type"], r.read()


@pytest.mark.slow
def test_the_wheel_serves_from_a_fresh_virtualenv(tmp_path):
    wheels = tmp_path / "wheels"
    # The plain build of the core (every `make install` makes the profile-guided one): this is about the wheel.
    # Built from the build stage's own files alone, as `docker build` would.
    context = _build_context(tmp_path / "src")
    quiet = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # its note is the machine's
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--wheel-dir", str(wheels),
                            str(context)], check=True, env={**quiet, "RICOCHET_PGO": "0"}, capture_output=True,
                           text=True)
    warned = [line for line in (built.stdout + built.stderr).splitlines()
              if re.search(r"\bwarn(ing)?\b|Package would be ignored|[Dd]eprecat", line, re.I)
              and "WARNING: Location" not in line]  # pip's own, about the machine's package index
    assert warned == [], "the build warns (python -m build runs the same backend):\n" + "\n".join(warned)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # The package itself from the wheel; its dependencies from the test environment's
    # site-packages, read through PYTHONPATH (where .pth files, and so the editable
    # install of this checkout, are not read).
    deps = sysconfig.get_paths()["purelib"]
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    *map(str, wheels.glob("*.whl"))], check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PYTHONPATH")}
    env["PYTHONPATH"] = deps
    probe = "import service, solver._core as c; print(service.__file__, c.__file__)"
    where = subprocess.run([str(python), "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True,
                           check=True).stdout
    assert all(str(venv) in path for path in where.split()), where
    # Every data file the app reads is in the installed package.
    installed = Path(where.split()[0]).parents[1]
    folders = ("service/static", "solver/data", "solver/production/data")
    data = [p for folder in folders for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".txt"]  # .txt: a local build's records
    data += [ROOT / f for f in ("service/openapi.yaml", "service/front.conf.template")]
    missing = [str(p.relative_to(ROOT)) for p in data if not (installed / p.relative_to(ROOT)).is_file()]
    assert len(data) > 900 and missing == []
    # The image's own command (its settings come from the installed package).
    cmd = json.loads(re.search(r"^CMD (\[.*\])", DOCKERFILE, re.M).group(1))
    assert cmd[0] == "gunicorn"
    cmd = [str(python), "-m", "gunicorn", *cmd[1:]]
    port = _free_port()
    env.update(RICOCHET_BIND=f"127.0.0.1:{port}", RICOCHET_WEB_WORKERS="1")
    server = subprocess.Popen(cmd, cwd=elsewhere, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                assert _get(base + "/healthz")[0] == 200
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                assert time.monotonic() < deadline
                time.sleep(0.3)
        status, kind, page = _get(base + "/")
        assert status == 200 and kind.startswith("text/html") and b"og:image" in page
        assert _get(base + "/static/play.js")[0] == 200
        status, _, spec = _get(base + "/openapi.yaml")
        assert status == 200 and spec.startswith(b"openapi: 3.1.0")
        status, _, body = _get(base + "/v1/daily")
        daily = json.loads(body)
        assert status == 200 and daily["optimal_length"] >= 5
        assert _get(base + daily["image_url"])[1] == "image/png"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
