"""The C core's functions as solver/core/module.c declares them (each entry point's
argument table, X_ARGS, and what it builds for its answer), for the type checker.
The classes below exist only here: they name the shapes of the core's answers."""

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

from typing_extensions import CapsuleType

RULES_KNOWN: int
RULE_PLAIN: int
RULE_VORTEX_SIGHTLINE: int

# (layout, robots' cells, colour indices, target cell, robots that may finish (bit i), rule flags)
_Request = tuple[CapsuleType, Sequence[int], Sequence[int], int, int, int]
# solve's answer: status, moves, length or lower bound, states, nodes, seconds, strategy, reach, eligible, lone bound
_Solved = tuple[str, list[Any], int, int, int, float, str, tuple[int, ...] | None, int, int]
# a position with one optimal plain-rule solution: length, cells, (robot, direction) pairs
_Row = tuple[int, tuple[int, ...], tuple[tuple[int, int], ...]]

class _Reach(TypedDict):
    depths: bytes
    complete_to: int
    status: str
    states: int
    nodes: int
    seconds: float

class _Facts(TypedDict):
    status: str  # the rest only when "optimal"
    solutions: NotRequired[int]
    capped: NotRequired[bool]
    fewest_robots: NotRequired[int]
    fewest_robots_mask: NotRequired[int]
    fewest_switches: NotRequired[int]
    nodes: NotRequired[int]
    seconds: NotRequired[float]
    listed: NotRequired[bytes]

class _Exhaustive(TypedDict):
    status: str
    counts: list[int]
    unsolvable: int
    layers: int
    positions: list[_Row]
    capped: bool
    probes: list[int | None]
    longest: int
    seconds: float

class _AnalysisInfo(TypedDict):
    counts: list[int]
    unsolvable: int
    layers: int
    seconds: float
    bytes: int

class _Sample(TypedDict):
    counts: dict[int, int]
    positions: list[_Row]

class _Selftest(TypedDict):
    bad: int
    slots: int
    in_place: int

def compile_board(width: int, height: int, step: bytes, barrier: bytes, has_openings: bool) -> CapsuleType: ...
def layout_bytes(layout: CapsuleType) -> int: ...
def solve(request: _Request, max_depth: int = 64, time_budget: float = 0.0, state_budget: int = 1073741824,
          cancel: bytearray | None = None, strategy: int = 0, exact: CapsuleType | None = None, threads: int = 1,
          crew_from: int = 1024, ida_nodes: int = 500000, crew_yields: bool = True,
          moves: Sequence[Sequence[Any]] | None = None) -> _Solved: ...
def reach(request: _Request, max_depth: int = 10, time_budget: float = 0.0,
          state_budget: int = 1073741824) -> _Reach: ...
def upper_bound(request: _Request, helper_moves: int = 1) -> int | None: ...
def facts(request: _Request, length: int, cap: int = 1000000, time_budget: float = 0.0,
          state_budget: int = 268435456, exact: CapsuleType | None = None, list: int = 0) -> _Facts: ...
def exhaustive(layout: CapsuleType, colours: Sequence[int], target: int, candidates: int, free: bytes,
               min_length: int, limit: int = 100000, probes: Sequence[Sequence[int]] | None = None,
               threads: int = 2, state_budget: int = 5368709120, time_budget: float = 0.0) -> _Exhaustive: ...
def analyse(layout: CapsuleType, colours: Sequence[int], target: int, candidates: int, free: bytes,
            threads: int = 2, state_budget: int = 5368709120, time_budget: float = 0.0) -> CapsuleType: ...
def analysis_info(analysis: CapsuleType) -> _AnalysisInfo: ...
def analysis_release(analysis: CapsuleType) -> None: ...
def analysis_lengths(analysis: CapsuleType, positions: Sequence[Sequence[int]]) -> list[int | None]: ...
def analysis_sample(analysis: CapsuleType, start: bytes, min_length: int, per_length: int,
                    seed: int) -> _Sample: ...
def _table_selftest(n: int, crowd: int, key_bits: int, threads: int, seed: int) -> _Selftest: ...
