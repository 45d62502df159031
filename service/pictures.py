"""PNG pictures next to every SVG one, for chat apps and link previews (they don't
show SVG).  resvg (through resvg-py) rasterises the same SVG the API serves."""

from __future__ import annotations

import functools

import resvg_py
from flask import Response

from .caching import IMMUTABLE, cached

PNG = "image/png"
ZOOM = 1.5  # the SVG board is 656 px wide; link previews want about 1000


@functools.lru_cache(maxsize=256)
def png(svg: str) -> bytes:
    return bytes(resvg_py.svg_to_bytes(svg_string=svg, zoom=ZOOM, background="#ffffff"))


def picture(svg: str, mimetype: str, cache_control: str = IMMUTABLE) -> Response:
    """A picture (the SVG, or the PNG made from it) with an ETag and cache headers;
    answers 304 to a request that already holds it."""
    return cached(Response(png(svg) if mimetype == PNG else svg.encode(), mimetype=mimetype), cache_control)
