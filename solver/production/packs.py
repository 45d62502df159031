"""A pack's plan: which puzzles come from pools, and which are searched for.

A pure function of the request, its seed and the pool set.  Lengths take
turns (lo..hi in an order drawn from the seed), and for each length the
(board, target) pairs whose pools hold it take turns too, so a pack spreads
over every fitting pool before it repeats one.  No two planned puzzles share
a board, target and optimal solution (a pool keeps one position per solution,
and a pack draws each row at most once).  Items the pools cannot fill (no
pool holds the length, or its rows are used up) are searched for.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .generated import Generated
from .pools import Library, Pool


@dataclass(frozen=True)
class Planned:
    """Item `index`: a pool row, or (pool None) a search for `length` moves."""

    index: int
    length: int
    pool: Pool | None = None
    row: int = -1

    def generated(self) -> Generated:
        assert self.pool is not None
        return self.pool.generated(self.row)


def variety_key(item: dict[str, Any]) -> str:
    """What no two puzzles of a pack share: board, target and optimal solution."""
    board = item["board"] if isinstance(item["board"], str) else item["board"].get("spec", str(item["board"]))
    target = item["target"]
    moves = " ".join(f"{m['robot'][0]}{m['direction']}" for m in item["solution"])
    return f"{board}|{target.get('cell')}|{target.get('colour')}|{moves}"


def plan(count: int, lo: int, hi: int, *, board: str, robots: int, ricochet: str, seed: int | str,
         library: Library | None) -> list[Planned]:
    rng = random.Random(f"pack-plan:{seed}:{lo}:{hi}:{board}:{robots}:{ricochet}")
    lengths = list(range(lo, hi + 1))
    rng.shuffle(lengths)
    queues: dict[int, Iterator[tuple[Pool, int]]] = {}
    if library is not None and robots == 4:
        pools = list(library.pools(board, robots, ricochet))
        for n in lengths:
            queues[n] = _turns([(p, p.lengths().get(n, [])) for p in pools], rng)
    out = []
    for index in range(count):
        n = lengths[index % len(lengths)]
        pick = next(queues[n], None) if n in queues else None
        out.append(Planned(index, n, *pick) if pick else Planned(index, n))
    return out


def _turns(pools: list[tuple[Pool, list[int]]], rng: random.Random) -> Iterator[tuple[Pool, int]]:
    """Rows of several pools, one pool after another in turn, each pool's rows
    in an order drawn from rng."""
    queues = []
    for pool, rows in pools:
        if rows:
            order = list(rows)
            rng.shuffle(order)
            queues.append((pool, order))
    rng.shuffle(queues)
    k = 0
    while queues:
        live = []
        for pool, order in queues:
            if k < len(order):
                yield pool, order[k]
                live.append((pool, order))
        queues = live
        k += 1
