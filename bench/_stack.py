"""What the benches that start a stack share: waiting until it is ready."""

from __future__ import annotations

import time
import urllib.error
import urllib.request


def wait_ready(base: str, seconds: float = 90, path: str = "/readyz") -> None:
    """Return once GET base+path answers 200; SystemExit after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(base + path, timeout=5) as r:
                if r.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{base} did not become ready within {seconds:g} s")
        time.sleep(0.5)
