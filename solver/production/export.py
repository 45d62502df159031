"""The puzzle database: every puzzle a deployment holds, once, with its proof.

Sources, in this order: the bank of verified long puzzles, the published daily
puzzles (up to today: a day not yet published stays secret), then every pool
(the starter set shipped with the package and the deployment's).  A puzzle met
again later is skipped: the bank's and the days' puzzles are kept in a set of
hashes (a few thousand; a day's puzzle may be a pool's too), and pools never
share a puzzle (each holds one board, target, robot count and rule, each
position once), nor does the calendar repeat one.

CSV columns (`COLUMNS`) and NDJSON fields are documented in docs/ratings.md.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from solver.formats import lines
from solver.formats.driftingdroids import driftingdroids_id
from solver.model.puzzle import Move, Puzzle, moves_from_json, moves_to_json
from solver.play import daily
from solver.production import bank
from solver.production.pools import Library

SOURCES = ("bank", "daily", "pools")
COLUMNS = ("code", "board", "robots", "target", "target_cell", "ricochet", "vortex_sightline", "optimal_length",
           "solution", "rating", "deviation", "popularity", "plays", "themes", "driftingdroids_id", "source")


@dataclass(frozen=True)
class Held:
    """One puzzle the deployment holds, with one optimal solution and where it came from."""

    puzzle: Puzzle
    moves: list[Move]
    source: str


@dataclass(frozen=True)
class Filter:
    min_length: int = 2
    max_length: int = 64
    robots: int | None = None
    ricochet: str | None = None
    sources: tuple[str, ...] = SOURCES

    def keeps(self, length: int, robots: int, ricochet: str) -> bool:
        return (self.min_length <= length <= self.max_length and self.robots in (None, robots)
                and self.ricochet in (None, ricochet))


def held(library: Library, wanted: Filter, today: dt.date | None = None) -> Iterator[Held]:
    """Every puzzle the filter keeps, each once (see the module's docstring)."""
    seen: set[str] = set()
    if "bank" in wanted.sources:
        for entry in bank.entries():
            if wanted.keeps(entry["length"], entry["robots"], entry["ricochet"]):
                p = Puzzle.from_code(entry["code"])
                seen.add(p.content_hash())
                yield Held(p, bank.solution_of(entry), "bank")
    if "daily" in wanted.sources:
        for found in _published(today or daily.today()):
            p = Puzzle.from_code(found["code"])
            if wanted.keeps(found["optimal_length"], len(p.robots), p.rules.ricochet) and p.content_hash() not in seen:
                seen.add(p.content_hash())
                yield Held(p, moves_from_json(found["solution"]), f"daily:{found['date']}")
    if "pools" in wanted.sources:
        yield from _pools(library, wanted, seen)


def _published(today: dt.date) -> Iterator[daily.DayRecord]:
    day = daily.FIRST_DAY
    while day <= today:
        yield daily.daily_json(day)
        day += dt.timedelta(days=1)


def _pools(library: Library, wanted: Filter, seen: set[str]) -> Iterator[Held]:
    for entry in library.entries():
        if wanted.robots not in (None, entry.robots) or wanted.ricochet not in (None, entry.ricochet):
            continue
        pool = library.load(entry.id)
        if pool is None:
            continue
        for length in sorted(n for n in pool.lengths() if wanted.min_length <= n <= wanted.max_length):
            for i in pool.lengths()[length]:
                p = pool.puzzle(i)
                if not seen or p.content_hash() not in seen:
                    yield Held(p, pool.moves(i), f"pool:{pool.id}")


def ndjson_line(h: Held, played: Mapping[str, Any]) -> str:
    """One NDJSON line: the docs/formats.md puzzle, its code, optimal length, solution,
    what play made of it (`played`: rating, popularity, themes), its
    DriftingDroids id and source."""
    return lines.ndjson_line({**h.puzzle.to_json(), "code": h.puzzle.code(), "optimal_length": len(h.moves),
                             "solution": moves_to_json(h.moves), **played,
                             "driftingdroids_id": driftingdroids_id(h.puzzle), "source": h.source})


def csv_header() -> str:
    return lines.csv_line(COLUMNS)


def csv_line(h: Held, played: Mapping[str, Any]) -> str:
    p, rating = h.puzzle, played["rating"]
    goal = p.goal
    return lines.csv_line((
        p.code(), p.board.spec or "custom", " ".join(f"{c}:{x},{y}" for c, (x, y) in p.robots),
        "vortex" if goal.colour is None else f"{goal.colour}-{goal.symbol}", "{},{}".format(*goal.cell),
        p.rules.ricochet, str(p.rules.vortex_sightline).lower(), len(h.moves),
        " ".join(f"{m.robot}-{m.direction}" for m in h.moves), rating["value"], rating["deviation"],
        played["popularity"], rating["plays"], " ".join(played["themes"]), driftingdroids_id(h.puzzle) or "",
        h.source))
