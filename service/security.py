"""Security headers on every answer (pages, pictures, JSON, problems, static files).

A Content-Security-Policy that admits no inline script (the pages load only
their own files; seat tokens live in the page's storage, so an injected script
must have nowhere to come from), no framing but by this site's own pages, no
MIME sniffing and a referrer policy that sends other sites only the origin.

A view's own header wins (set, never replaced): the embed pages set a policy
with `frame-ancestors *` of their own, and get no X-Frame-Options (only a
policy whose frame-ancestors is 'self' or 'none' is said again in that header).
Pages with an inline style block (the problem types) name it by its hash:
`policy(styles=...)`; /docs admits inline styles (Swagger UI renders <style>
elements), never inline script.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from flask import Flask, request

from .errors import Problem

CSP = "Content-Security-Policy"
DIRECTIVES = (("default-src", "'self'"), ("script-src", "'self'"), ("style-src", "'self'"),
              ("img-src", "'self' data:"), ("connect-src", "'self'"), ("object-src", "'none'"),
              ("frame-ancestors", "'self'"), ("base-uri", "'none'"), ("form-action", "'self'"))
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
}


def policy(styles: tuple[str, ...] = (), any_style: bool = False) -> str:
    """The site's policy; `styles` are inline <style> blocks a page carries, admitted by their hash;
    `any_style` admits every inline style (Swagger UI's React renders <style> elements): never scripts."""
    hashes = "".join(f" 'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in styles)
    extra = " 'unsafe-inline'" if any_style else hashes  # a hash beside 'unsafe-inline' would turn it off
    return "; ".join(f"{name} {value}{extra if name == 'style-src' else ''}" for name, value in DIRECTIVES)


POLICY = policy()


def _secure(response: Any) -> Any:
    headers = response.headers
    headers.setdefault(CSP, POLICY)
    for name, value in HEADERS.items():
        headers.setdefault(name, value)
    # frame-ancestors said again for browsers before CSP 2; a policy that lets others frame says it alone
    framing = {"frame-ancestors 'self'": "SAMEORIGIN", "frame-ancestors 'none'": "DENY"}
    said = next((framing[d.strip()] for d in headers[CSP].split(";") if d.strip() in framing), None)
    if said is not None:
        headers.setdefault("X-Frame-Options", said)
    return response


HEAD_LIMIT = 32 << 10  # the request line and headers in all: the front's limit (service/front.conf.template)


def _head_within_limit() -> None:
    """Headers over 32 KiB in all are 431 here too, where gunicorn faces clients
    itself (it limits each header, 8 KiB, not their sum)."""
    size = len(request.method) + len(request.full_path) + 11  # "GET /path HTTP/1.1\r\n"
    size += sum(len(name) + len(value) + 4 for name, value in request.headers.items())
    if size > HEAD_LIMIT:
        raise Problem("request-headers-too-large", f"the request line and headers are {size >> 10} KiB in all, over "
                      f"the limit of {HEAD_LIMIT >> 10} KiB (8 KiB for one header)")


def register(app: Flask) -> None:
    """Register first: after_request functions run last-registered first, so this
    one sees the final response (an error answered as a page included)."""
    app.before_request(_head_within_limit)
    app.after_request(_secure)
