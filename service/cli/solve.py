"""`ricochet solve`: an optimal solution as docs/formats.md's answer, one file or one line at a time."""

from __future__ import annotations

import argparse
from typing import Any

from solver.model.puzzle import Puzzle

from .common import InputError, each


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("solve", help="print an optimal solution as the docs/formats.md answer")
    p.add_argument("file", help="puzzle JSON ('-' for standard input)")
    p.add_argument("--jsonl", action="store_true", help="one puzzle per line, one answer per line")
    p.add_argument("--max-depth", type=int, default=64,
                   help="search no deeper than this many moves (0 to 254, default 64): deeper is depth_limit")
    p.add_argument("--time-budget", type=float, default=None,
                   help="seconds per puzzle (default none): a search past it answers timeout")
    p.add_argument("--reference", action="store_true", help="use the plain Python breadth-first search")
    p.add_argument("--facts", action="store_true",
                   help="add facts over all optimal solutions (count, fewest robots moved, fewest switches)")
    p.add_argument("--all", action="store_true", help="add every distinct optimal solution (solutions that differ "
                   "only in the order of independent moves count as one): \"all\": {count, complete, orderings, "
                   "solutions}")
    p.add_argument("--limit", type=int, default=100, help="with --all, list at most this many (default 100)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.max_depth < 0 or args.max_depth > 254:
        raise InputError("--max-depth must be from 0 to 254")
    if not 1 <= args.limit <= 10_000:
        raise InputError("--limit must be from 1 to 10000")

    def judge(doc: Any) -> dict[str, Any]:
        puzzle = Puzzle.from_json(doc)
        if args.reference:
            from solver.search.reference import reference_solve

            return reference_solve(puzzle, max_depth=args.max_depth).to_json()
        from solver.search.solve import solution_facts, solve

        answer = solve(puzzle, max_depth=args.max_depth, time_budget=args.time_budget)
        out = answer.to_json()
        if args.facts and answer.length is not None:
            out["facts"] = solution_facts(puzzle, answer.length, time_budget=args.time_budget)
        if args.all and answer.length is not None:
            from solver.search.orders import distinct

            out["all"] = distinct(puzzle, answer.length, limit=args.limit, time_budget=args.time_budget)
        return out

    return each(args.file, args.jsonl, judge)
