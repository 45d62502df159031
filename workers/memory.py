"""Keeping a process near its working set: glibc gives each thread that allocates
an arena of its own and keeps there what a search freed, so a long-running
process's RSS creeps up to what its largest searches once took.  Fewer arenas,
and what is free handed back now and then, keep it down (measured in
docs/operations.md)."""

from __future__ import annotations

import contextlib
import ctypes

M_ARENA_MAX = -8


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None


def budget_caches(board_cache_mb: int) -> None:
    """The process's compiled boards within their byte budget (RICOCHET_BOARD_CACHE_MB)."""
    from solver.search.solve import compiled

    compiled.budget = board_cache_mb << 20


def cap_searches(search_mb: int) -> None:
    """Each search of this process within `search_mb` of tables, whatever its
    caller asks: a server's processes call it as they start (gunicorn's config,
    the Celery worker's), never a library user or a test."""
    from solver.search.solve import ceiling

    ceiling.state_bytes = search_mb << 20


def limit_arenas(count: int = 2) -> None:
    """At most `count` malloc arenas: call before the process starts its threads."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.mallopt(M_ARENA_MAX, count)


def hand_back() -> None:
    """Return the memory freed since to the system (milliseconds at most)."""
    libc = _libc()
    if libc is not None:
        with contextlib.suppress(AttributeError):
            libc.malloc_trim(0)
