"""Building the daily calendar: one proven puzzle per day, never the same twice.

A maintainer runs this once per schedule version; the result is frozen into
the package (`solver/data/daily/`) and `solver.play.daily` only reads it.  Freezing
is what keeps a published day fixed: the generator, the bank and the pools may
all change between releases, the calendar file does not.

    python -m solver.production.calendar --version 2 --from 2026-01-01 --to 2036-12-31 \
        --out solver/data/daily/calendar-v2.jsonl.gz --processes 2

Monday to Friday are searched from random 2013 boards, seeded by the date
(`generate(..., bank_seeds=False)`); Saturdays and Sundays are drawn from the
starter pools (4 robots, ricochet rule on),
taking turns over pools so that a board and target comes back as rarely as
possible.  A day whose puzzle (board, robots, target) already appeared is
searched again with the next seed.  Work is written to `<out>.work` as it
finishes, so a killed build resumes where it stopped.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import random
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from solver.model.board import BoardKind
from solver.model.puzzle import Puzzle, Ricochet
from solver.play.daily import SCHEDULE
from solver.production.generate import generate
from solver.production.generated import Generated
from solver.production.pools import Library, Pool, packaged

FROM_POOLS = 15  # days asking for at least this many moves draw on the pools (searching them takes minutes)


def identity(puzzle: Puzzle) -> tuple[Any, ...]:
    """What makes two days the same puzzle: board, robots and target."""
    return (puzzle.board.spec, tuple(sorted(puzzle.robots)), puzzle.goal.cell, puzzle.goal.colour)


def line(day: dt.date, g: Generated, source: str) -> dict[str, Any]:
    return {"date": day.isoformat(), "code": g.puzzle.code(), "optimal_length": g.solution.length,
            "solution": [m.to_json() for m in g.solution.moves], "difficulty": g.difficulty, "source": source}


def _searched(job: tuple[str, int, int, int, int]) -> dict[str, Any]:
    date, lo, hi, version, attempt = job
    day = dt.date.fromisoformat(date)
    seed = f"daily:v{version}:{date}" + (f":{attempt}" if attempt else "")
    g = generate(min_length=lo, max_length=hi, board=BoardKind.RANDOM_2013, robots=4, seed=seed, bank_seeds=False)
    return {**line(day, g, "search"), "attempt": attempt}


class _FromPools:
    """Pool rows for the long days, handed out in turns over pools, each row once."""

    def __init__(self, library: Library, lo: int, hi: int, version: int) -> None:
        # rows of lo..hi moves (the lengths of every day drawn from pools)
        self.rows: dict[int, list[tuple[Pool, int]]] = {}
        self.used: dict[str, int] = {}
        for pool in library.pools(BoardKind.RANDOM_2013, 4, Ricochet.TURN):
            for n, rows in pool.lengths().items():
                if lo <= n <= hi:
                    self.rows.setdefault(n, []).extend((pool, r) for r in rows)
        self.taken: set[tuple[str, int]] = set()
        self.version = version

    def draw(self, day: dt.date, seen: set[tuple[Any, ...]]) -> dict[str, Any]:
        rng = random.Random(f"daily:v{self.version}:{day.isoformat()}")
        lo, hi = SCHEDULE[day.weekday()]
        lengths = sorted(n for n, rows in self.rows.items() if lo <= n <= hi)
        n = rng.choice(lengths)
        free = [(p, r) for p, r in self.rows[n] if (p.id, r) not in self.taken]
        least = min(self.used.get(p.id, 0) for p, _ in free)
        pool, row = rng.choice([(p, r) for p, r in free if self.used.get(p.id, 0) == least])
        self.taken.add((pool.id, row))
        self.used[pool.id] = self.used.get(pool.id, 0) + 1
        g = pool.generated(row)
        if identity(g.puzzle) in seen:
            return self.draw(day, seen)
        return line(day, g, f"pool:{pool.id}")


def days(start: dt.date, end: dt.date) -> Iterator[dt.date]:
    day = start
    while day <= end:
        yield day
        day += dt.timedelta(days=1)


def build(start: dt.date, end: dt.date, out: Path, *, version: int, processes: int = 2) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.with_name(out.name + ".work")
    done: dict[tuple[str, int], dict[str, Any]] = {}
    if work.exists():
        for raw in work.read_text().splitlines():
            d = json.loads(raw)
            done[(d["date"], d["attempt"])] = d
    searched = [(d.isoformat(), *SCHEDULE[d.weekday()], version, 0) for d in days(start, end)
                if SCHEDULE[d.weekday()][0] < FROM_POOLS]
    with work.open("a") as sink, ProcessPoolExecutor(processes) as ex:
        def run(jobs: list[tuple[str, int, int, int, int]]) -> None:
            todo = [j for j in jobs if (j[0], j[4]) not in done]
            for i, d in enumerate(ex.map(_searched, todo, chunksize=1)):
                done[(d["date"], d["attempt"])] = d
                sink.write(json.dumps(d, separators=(",", ":")) + "\n")
                sink.flush()
                if i % 50 == 0:
                    print(f"{d['date']} {d['optimal_length']} moves ({i + 1}/{len(todo)})", flush=True)

        run(searched)
        while True:  # settle repeats: a later day that repeats an earlier one searches again
            seen: set[tuple[Any, ...]] = set()
            again = []
            for date, lo, hi, _, _ in searched:
                attempt = max(a for (d, a) in done if d == date)
                key = identity(Puzzle.from_code(done[(date, attempt)]["code"]))
                if key in seen:
                    again.append((date, lo, hi, version, attempt + 1))
                seen.add(key)
            if not again:
                break
            print(f"{len(again)} repeats: searching them again", flush=True)
            run(again)
    wanted = {date for date, *_ in searched}
    latest = {}
    for (date, _attempt), d in sorted(done.items()):
        if date in wanted:
            latest[date] = d
    seen = {identity(Puzzle.from_code(d["code"])) for d in latest.values()}
    from_pools = _FromPools(Library([packaged()]), FROM_POOLS, max(hi for _, hi in SCHEDULE.values()), version)
    lines = []
    for day in days(start, end):
        if day.isoformat() in latest:
            d = {k: v for k, v in latest[day.isoformat()].items() if k != "attempt"}
        else:
            d = from_pools.draw(day, seen)
            seen.add(identity(Puzzle.from_code(d["code"])))
        lines.append(json.dumps(d, separators=(",", ":"), sort_keys=True))
    out.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode(), mtime=0))
    print(f"wrote {len(lines)} days to {out}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", type=int, required=True, help="the schedule version the calendar is for")
    ap.add_argument("--from", dest="start", type=dt.date.fromisoformat, required=True, help="first day, YYYY-MM-DD")
    ap.add_argument("--to", dest="end", type=dt.date.fromisoformat, required=True, help="last day, YYYY-MM-DD")
    ap.add_argument("--out", type=Path, required=True, help="the calendar file to write (.jsonl.gz)")
    ap.add_argument("--processes", type=int, default=2, help="searching processes (default 2)")
    a = ap.parse_args(argv)
    build(a.start, a.end, a.out, version=a.version, processes=a.processes)


if __name__ == "__main__":
    main()
