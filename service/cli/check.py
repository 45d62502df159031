"""`ricochet check`: replay a puzzle's moves and print the verdict (docs/formats.md)."""

from __future__ import annotations

import argparse
from typing import Any

from solver.errors import InvalidInput
from solver.model.moves import check
from solver.model.puzzle import Puzzle, moves_from_json

from .common import each


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="replay a puzzle's \"moves\" and print the verdict")
    p.add_argument("file", help="puzzle JSON with a \"moves\" field ('-' for standard input)")
    p.add_argument("--jsonl", action="store_true", help="one puzzle per line, one verdict per line")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    def judge(doc: Any) -> dict[str, Any]:
        puzzle = Puzzle.from_json(doc)
        if "moves" not in doc:
            raise InvalidInput("moves", "is required: the moves to replay")
        return check(puzzle, moves_from_json(doc["moves"])).to_json()

    return each(args.file, args.jsonl, judge)
