"""The HTTP front `ricochet serve` runs before gunicorn when nginx is installed
(`make install` installs it): service/front.conf.template, the server block
the compose file's nginx runs too, inside a main configuration of its own
under the instance folder."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from string import Template

TEMPLATE = Path(__file__).resolve().parents[1] / "front.conf.template"  # package data of `service`


def template() -> Path | None:
    return TEMPLATE if TEMPLATE.exists() else None


def available() -> bool:
    return shutil.which("nginx") is not None and template() is not None


def configure(folder: Path, listen: str, upstream: str) -> Path:
    """Write the front's configuration into `folder`; returns the main file."""
    source = template()
    assert source is not None
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    server = Template(source.read_text(encoding="utf-8")).safe_substitute(
        FRONT_LISTEN=listen, FRONT_UPSTREAM=upstream)
    (folder / "server.conf").write_text(server, encoding="utf-8")
    temp = folder / "temp"
    temp.mkdir(exist_ok=True)
    main = f"""# Written by `ricochet serve` around {source.name}; rewritten at every start.
worker_processes 1;
worker_rlimit_nofile 8192;
error_log stderr warn;
pid {folder / "nginx.pid"};
events {{ worker_connections 4096; }}
http {{
    access_log off;
    server_tokens off;
    client_body_temp_path {temp / "body"};
    proxy_temp_path {temp / "proxy"};
    fastcgi_temp_path {temp / "fastcgi"};
    uwsgi_temp_path {temp / "uwsgi"};
    scgi_temp_path {temp / "scgi"};
    include {folder / "server.conf"};
}}
"""
    path = folder / "nginx.conf"
    path.write_text(main, encoding="utf-8")
    return path


def start(config: Path, launch: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen) -> subprocess.Popen[bytes]:
    """nginx with `config`, in the foreground (`ricochet serve` launches it in its stack, which
    ends what a dead master leaves: a worker still holding the port)."""
    # -e stderr: not the compiled-in log file, which a user without root cannot open
    check = subprocess.run(["nginx", "-t", "-q", "-e", "stderr", "-p", str(config.parent), "-c", str(config)],
                           capture_output=True, text=True)
    if check.returncode != 0:
        raise RuntimeError(f"nginx refused its configuration: {check.stderr.strip()}")
    return launch(["nginx", "-e", "stderr", "-p", str(config.parent), "-c", str(config), "-g", "daemon off;"])
