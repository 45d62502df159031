"""Keeping a process near its working set: glibc gives each thread that allocates
an arena of its own and keeps there what a search freed, so a long-running
process's RSS creeps up to what its largest searches once took.  Fewer arenas,
and what is free handed back now and then, keep it down (measured in
docs/operations.md)."""

from __future__ import annotations

import contextlib
import ctypes

M_ARENA_MAX = -8

# What each process of the default deployment (`ricochet serve` on 2 cores: five
# web processes, one worker process) may hold, in MiB of PSS: the one table that
# docs/operations.md shows ("The default deployment's budget"; tests/test_memory.py
# checks they agree) and bench/soak.py judges its run by.
BUDGETS_MIB: dict[str, int] = {
    "gunicorn master": 140,
    "web process": 320,
    "web process exporting": 380,
    "worker's main process": 70,
    "worker process": 700,
    "webhook worker": 80,
    "beat": 70,
}
# Three web processes at 320 and two exporting, and one of each other process.
STACK_BUDGET_MIB = sum(BUDGETS_MIB.values()) + 2 * BUDGETS_MIB["web process"] + BUDGETS_MIB["web process exporting"]


def role_of(name: str) -> str | None:
    """The budget's row for a process bench/soak.py names "PART" (the process it
    started) or "PART: COMMAND" (a child of it); None for Redis (its maxmemory)."""
    part, child = name.split(":", 1)[0], ":" in name
    roles = {("gunicorn", False): "gunicorn master", ("gunicorn", True): "web process",
             ("worker", False): "worker's main process", ("worker", True): "worker process",
             ("webhook worker", False): "webhook worker", ("beat", False): "beat"}
    return roles.get((part, child))


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
