"""The catalogue of long puzzles on a deployment's workers: its growth, fills and
lifts as the workers run them (each board and position claimed in Redis, so it
is tried once, by one worker, across runs; each puzzle proven kept by its pool
id, where the deployment's packs draw on it), and queueing them
(`ricochet catalogue ... --queue`)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from solver.model.puzzle import Puzzle
from solver.production import catalogue, library
from solver.production.generated import Generated
from solver.production.pools import Library
from workers.messages import Message
from workers.stores import Stores, Unavailable

from . import Context, jobs


def grow(ctx: Context, codes: list[str], seconds: float, part: list[int] | None = None,
         discover: list[str] | None = None) -> dict[str, int]:
    """Grow the catalogue from these long puzzles for about `seconds`
    (ricochet.catalogue_grow): share `part` (k, n) of their families' sweep, and
    the screen of the families in `discover`.  Run again, it goes on where it stopped."""
    stores = ctx.required_stores()
    deadline = time.monotonic() + seconds
    return _keep(ctx, catalogue.grow([Puzzle.from_code(c) for c in codes], claim=stores.catalogue.claim,
                                     seed=",".join(codes[:1] or discover or []), until=deadline,
                                     part=(part[0], part[1]) if part else (0, 1), discover=discover or ()))


def fill(ctx: Context, items: list[list[Any]], seconds: float, enough: int | None = None) -> dict[str, int]:
    """More puzzles of SEED_FROM moves on one pair holding few (`items`: its known
    ones, code and found JSON) until it holds `enough` (ricochet.catalogue_fill),
    for at most `seconds` (and catalogue.FILL_SECONDS)."""
    found = catalogue.fill_pair([(code, item) for code, item in items], ctx.required_stores().catalogue.claim,
                                seconds, enough or catalogue.PER_SEED)
    return _keep(ctx, found)


def lift(ctx: Context, family: str, spec: str, seconds: float) -> dict[str, int]:
    """One pair lifted (catalogue.lift_pair: a board of `family`) for at most
    `seconds` and catalogue.LIFT_BUDGET (ricochet.catalogue_lift)."""
    return _keep(ctx, catalogue.lift_pair(family, spec, ctx.required_stores().catalogue.claim, seconds))


def _keep(ctx: Context, found: Iterable[Generated]) -> dict[str, int]:
    """Each proven puzzle kept in the deployment's catalogue store by its pool id; how many ({"found": n})."""
    stores = ctx.required_stores()
    count = 0
    for g in found:
        stores.catalogue.add(catalogue.catalogue_pool_id(g), g.puzzle.code(), catalogue.found_json(g))
        count += 1
    return {"found": count}


def queue(ctx: Context, messages: Sequence[Message[Any]]) -> None:
    """One task per message (grow, fill, lift or themes: CATALOGUE_GROW.of(...), ...) on the analysis queue."""
    for message in messages:
        jobs.send(ctx, message)


class Tables:
    """The themes tables the workers' pass reads and writes: the deployment's
    (Redis, the pools store), else the package's as shipped (a copy to go on from)."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores
        self.shipped = library.TableDirectory(library.TABLES)

    def read(self, pool: str) -> library.ThemeTable | None:
        data = self.stores.pools.themes_table(pool)
        return library.ThemeTable.loads(data) if data is not None else self.shipped.read(pool)

    def write(self, table: library.ThemeTable) -> None:
        self.stores.pools.write_themes_table(table.pool, table.dumps())


def themes_pass(ctx: Context, mode: str, seconds: float) -> dict[str, int]:
    """The library's themes pass over every pool this deployment sees
    (ricochet.themes_pass), `mode` cheap, targeted or thorough, for at most
    `seconds`: it goes on where the last one stopped (the tables in Redis),
    and keeps how far it got after each pool (`ricochet themes --queue` queues
    it; the pools store's pass_progress reads it)."""
    stores = ctx.required_stores()
    deadline = time.monotonic() + seconds

    def progress(done: int, total: int, read: int) -> None:
        stores.pools.set_pass_progress({"pools": total, "pools_done": done, "rows_read": read, "stopped": 0,
                                        "at": int(time.time())})

    counts = library.theme_pass(ctx.pools, Tables(stores), thorough=mode != "cheap", progress=progress,
                                stop=lambda: time.monotonic() > deadline,
                                rows=library.may_be_rare if mode == "targeted" else None)
    stores.pools.set_pass_progress({**counts, "at": int(time.time())})
    return counts


def index_library(stores: Stores | None, pools: Library) -> None:
    """The themes' index of this process (solver/production/library.py), over
    every pool it sees with the tables the workers' pass left in Redis, else
    the shipped ones; built once, before gunicorn forks.  Redis unreachable:
    the shipped pools and tables alone."""
    tables: list[library.Tables] = [library.TableDirectory(library.TABLES)]
    if stores is not None:
        try:
            stores.pools.pass_progress()  # reachable?
            tables = [Tables(stores)]
        except Unavailable:
            pass
    library.shared(pools, tables)
