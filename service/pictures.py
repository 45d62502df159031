"""PNG pictures next to every SVG one, for chat apps and link previews (they don't
show SVG).  resvg (through resvg-py) rasterises the same SVG the API serves."""

from __future__ import annotations

import threading
from collections import OrderedDict

import resvg_py
from flask import Response

from .caching import IMMUTABLE, cached

PNG = "image/png"
ZOOM = 1.5  # the SVG board is 656 px wide; link previews want about 1000


class Pictures:
    """PNGs made from SVGs, the most recently used kept within a byte budget
    (a board's PNG is 40-120 KiB).  Safe across threads."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __call__(self, svg: str) -> bytes:
        with self._lock:
            found = self._kept.get(svg)
            if found is not None:
                self._kept.move_to_end(svg)
                return found
        data = bytes(resvg_py.svg_to_bytes(svg_string=svg, zoom=ZOOM, background="#ffffff"))
        size = len(data) + len(svg)
        with self._lock:
            if svg not in self._kept and size <= self.budget:
                self._kept[svg] = data
                self._bytes += size
                while self._bytes > self.budget:
                    old_svg, old = self._kept.popitem(last=False)
                    self._bytes -= len(old) + len(old_svg)
        return data

    @property
    def bytes(self) -> int:
        return self._bytes


png = Pictures(12 << 20)  # create_app sets the budget from RICOCHET_PICTURE_CACHE_MB


def picture(svg: str, mimetype: str, cache_control: str = IMMUTABLE) -> Response:
    """A picture (the SVG, or the PNG made from it) with an ETag and cache headers;
    answers 304 to a request that already holds it."""
    return cached(Response(png(svg) if mimetype == PNG else svg.encode(), mimetype=mimetype), cache_control)
