"""The `ricochet` command line: boards, checking answers, solving (FORMATS.md shapes).

Exit status: 0 when the input could be read and judged, 2 (with a message on
standard error) for unreadable or invalid input.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from .board import Board, all_boards
from .errors import InvalidInput
from .puzzle import Goal, Puzzle, moves_from_json
from .render import LEGEND, ascii_board, ascii_puzzle
from .rules import check
from .svg import board_svg, puzzle_svg

EXIT_OK, EXIT_INPUT = 0, 2


class InputError(Exception):
    """Input the command cannot read or judge."""


def main(argv: list[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run a command; `parser` lets outer layers (the service) add their own subcommands."""
    args = (parser or build_parser()[0]).parse_args(argv)
    try:
        return args.run(args)
    except InputError as e:
        print(f"ricochet: {e}", file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK


def build_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The parser and its subcommand group, for other packages to extend."""
    parser = argparse.ArgumentParser(prog="ricochet", description="Ricochet Robots puzzles: boards, solving, checking.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("board", help="draw a board (ASCII by default)")
    p.add_argument("spec", nargs="?", help="a board spec like 'green-A,yellow-B,red-B,blue-B', or a JSON file "
                   "(puzzle or custom board; '-' for standard input); not needed with --list")
    p.add_argument("--format", choices=("ascii", "svg", "json"), default="ascii")
    p.add_argument("--svg", dest="format", action="store_const", const="svg", help="same as --format svg")
    p.add_argument("--list", action="store_true", help="list every distinct board of --edition instead")
    p.add_argument("--edition", choices=("1999", "2013"), default="2013")
    p.set_defaults(run=_board)

    p = sub.add_parser("check", help="replay a puzzle's \"moves\" and print the verdict")
    p.add_argument("file", help="puzzle JSON with a \"moves\" field ('-' for standard input)")
    p.add_argument("--jsonl", action="store_true", help="one puzzle per line, one verdict per line")
    p.set_defaults(run=_check)

    p = sub.add_parser("solve", help="print an optimal solution as the FORMATS.md answer")
    p.add_argument("file", help="puzzle JSON ('-' for standard input)")
    p.add_argument("--jsonl", action="store_true", help="one puzzle per line, one answer per line")
    p.add_argument("--max-depth", type=int, default=64)
    p.add_argument("--time-budget", type=float, default=None, help="seconds per puzzle")
    p.add_argument("--reference", action="store_true", help="use the plain Python breadth-first search")
    p.add_argument("--facts", action="store_true",
                   help="add facts over all optimal solutions (count, fewest robots moved, fewest switches)")
    p.set_defaults(run=_solve)

    p = sub.add_parser("generate", help="generate puzzles of an exact optimal length (JSON lines)")
    p.add_argument("--length", type=int, help="exact optimal length")
    p.add_argument("--min-length", type=int)
    p.add_argument("--max-length", type=int)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--seed", default="0")
    p.add_argument("--board", default="random-2013",
                   help="a board spec, random-2013, random-1999 or random-beginner (no barrier sections)")
    p.add_argument("--robots", type=int, choices=(4, 5), default=4)
    p.add_argument("--target", default="any", help="a colour, vortex or any")
    p.add_argument("--ricochet", choices=("turn", "none"), default="turn")
    p.add_argument("--format", choices=("json", "driftingdroids"), default="json",
                   help="json: one FORMATS.md puzzle with solution and report per line; driftingdroids: one "
                        "DriftingDroids game ID per line (boards without diagonal barriers, e.g. --board "
                        "random-1999)")
    p.set_defaults(run=_generate)

    p = sub.add_parser("daily", help="print daily puzzles, one JSON line per day as GET /v1/daily/{date} shows it")
    p.add_argument("--from", dest="start", type=_date, default=None, help="first day, YYYY-MM-DD (default today, UTC)")
    p.add_argument("--to", dest="end", type=_date, default=None, help="last day, YYYY-MM-DD (default --from)")
    p.add_argument("--solutions", action="store_true", help="add each day's optimal solution")
    p.set_defaults(run=_daily)

    p = sub.add_parser("bank", help="grow the bank of verified long puzzles (maintainers, in a checkout)")
    p.add_argument("--bank", default="solver/production/data/bank.jsonl",
                   help="the bank file to grow (default: the checkout's, relative to the current folder)")
    p.add_argument("--min-length", type=int, default=16)
    p.add_argument("--robots", type=int, choices=(4, 5), default=4)
    p.add_argument("--ricochet", choices=("turn", "none"), default="turn")
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--seed", default="0")
    p.add_argument("--edition", choices=("2013", "1999"), default="2013")
    p.add_argument("--threads", type=int, default=2, help="solver threads (default 2)")
    p.add_argument("--output", help="append finds here instead of to --bank")
    p.add_argument("--merge", nargs="+", metavar="FILE",
                   help="append the new entries of FILEs (from --output runs) to the bank, then stop")
    p.add_argument("--walk", action="store_true",
                   help="walk from the bank's long puzzles (generate) instead of sampling random positions")
    p.add_argument("--spread", type=int, metavar="N",
                   help="at most N entries per board and target, at every length: a run that looks for new "
                        "boards and targets (a pack spreads over them) rather than more of the same")
    p.add_argument("--exhaustive", nargs=2, metavar=("BOARD", "TARGET"),
                   help="analyse every position of one board and target (e.g. green-B,blue-B,red-B,yellow-D "
                        "yellow-square; 4 GiB, minutes) and bank its longest fair positions")
    p.add_argument("--per-length", type=int, default=20,
                   help="with --exhaustive: at most this many entries per length for that board and target")
    p.set_defaults(run=_bank)
    return parser, sub


# -- input -----------------------------------------------------------------------


def _open(path: str) -> TextIO:
    if path == "-":
        return sys.stdin
    try:
        return open(path, encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from None


def _load(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None


def _documents(path: str, jsonl: bool) -> Iterator[tuple[str, Any]]:
    with _open(path) as f:
        if not jsonl:
            yield path, _load(f.read(), path)
            return
        for n, line in enumerate(f, 1):
            if line.strip():
                yield f"{path}:{n}", _load(line, f"{path}:{n}")


def _each(path: str, jsonl: bool, judge: Callable[[Any], dict[str, Any]]) -> int:
    """Run `judge` on each document; an invalid line prints an error object in its
    place (keeping answers in order) and the command exits 2 at the end."""
    status = EXIT_OK
    for where, doc in _documents(path, jsonl):
        try:
            answer = judge(doc)
        except InvalidInput as e:
            if not jsonl:
                raise InputError(f"{where}: {e}") from None
            print(f"ricochet: {where}: {e}", file=sys.stderr)
            answer = {"error": e.message, "field": e.field}
            status = EXIT_INPUT
        print(json.dumps(answer), flush=jsonl)
    return status


# -- commands ----------------------------------------------------------------------


def _board(args: argparse.Namespace) -> int:
    if args.list:
        for spec in all_boards(args.edition):
            print(spec)
        return EXIT_OK
    if args.spec is None:
        raise InputError("give a board spec (or --list)")
    puzzle = None
    if args.spec == "-" or args.spec.endswith(".json"):
        doc = next(_documents(args.spec, False))[1]
        try:
            if isinstance(doc, dict) and "robots" in doc:
                puzzle = Puzzle.from_json(doc)
                board = puzzle.board
            else:
                board = Board.from_json(doc)
        except InvalidInput as e:
            raise InputError(str(e)) from None
    else:
        try:
            board = Board.from_json(args.spec)
        except InvalidInput as e:
            raise InputError(str(e)) from None
    if args.format == "svg":
        print(puzzle_svg(puzzle) if puzzle else board_svg(board))
    elif args.format == "json":
        print(json.dumps(board.to_object()))
    else:
        print(ascii_puzzle(puzzle) if puzzle else ascii_board(board))
        print(LEGEND)
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    def judge(doc: Any) -> dict[str, Any]:
        puzzle = Puzzle.from_json(doc)
        if "moves" not in doc:
            raise InvalidInput("moves", "is required: the moves to replay")
        return check(puzzle, moves_from_json(doc["moves"])).to_json()

    return _each(args.file, args.jsonl, judge)


def _solve(args: argparse.Namespace) -> int:
    if args.max_depth < 0 or args.max_depth > 254:
        raise InputError("--max-depth must be from 0 to 254")

    def judge(doc: Any) -> dict[str, Any]:
        puzzle = Puzzle.from_json(doc)
        if args.reference:
            from .reference import reference_solve

            return reference_solve(puzzle, max_depth=args.max_depth).to_json()
        from .solve import solution_facts, solve

        answer = solve(puzzle, max_depth=args.max_depth, time_budget=args.time_budget)
        out = answer.to_json()
        if args.facts and answer.length is not None:
            out["facts"] = solution_facts(puzzle, answer.length, time_budget=args.time_budget)
        return out

    return _each(args.file, args.jsonl, judge)


def _generate(args: argparse.Namespace) -> int:
    from .production.generate import NoPuzzleFound, generate
    from .production.pools import Library, packaged
    from .puzzle import Rules

    if args.count < 1 or args.count > 100_000:
        raise InputError("--count must be from 1 to 100000")
    show_progress = args.count > 1 and sys.stderr.isatty()
    library = Library([packaged()])  # the starter set of pools shipped with the package
    for i in range(args.count):
        try:
            g = generate(args.length, min_length=args.min_length, max_length=args.max_length, board=args.board,
                         robots=args.robots, target=args.target, rules=Rules(args.ricochet),
                         seed=f"{args.seed}:{i}", pools=library)
        except (InvalidInput, NoPuzzleFound) as e:
            raise InputError(str(e)) from None
        if args.format == "driftingdroids":
            if g.to_json()["driftingdroids_id"] is None:
                raise InputError(f"{g.puzzle.board.spec} has diagonal barriers, which DriftingDroids does not "
                                 "show: use --board random-1999 or random-beginner")
            print(g.to_json()["driftingdroids_id"], flush=True)
        else:
            print(json.dumps(g.to_json()), flush=True)
        if show_progress:
            done = (i + 1) * 30 // args.count
            print(f"\r[{'#' * done}{'.' * (30 - done)}] {i + 1}/{args.count}", end="", file=sys.stderr)
    if show_progress:
        print(file=sys.stderr)
    return EXIT_OK


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a date: use YYYY-MM-DD") from None


def _daily(args: argparse.Namespace) -> int:
    from . import daily

    start = args.start or daily.today()
    end = args.end or start
    if end < start:
        raise InputError("--to must not come before --from")
    if start < daily.FIRST_DAY or end > daily.last_day():
        raise InputError(f"the calendar runs from {daily.FIRST_DAY} to {daily.last_day()}")
    out = sys.stdout
    day = start
    while day <= end:
        out.write(json.dumps(daily.view(daily.daily_json(day), solutions=args.solutions),
                             separators=(",", ":")) + "\n")
        day += dt.timedelta(days=1)
    out.flush()
    return EXIT_OK


def _board_and_target(spec: str, target: str) -> tuple[Board, Goal]:
    """A real board and one of its chips, as `colour-symbol` or `vortex`."""
    try:
        board = Board.from_json(spec)
    except InvalidInput as e:
        raise InputError(str(e)) from None
    names = {(f"{t.colour}-{t.symbol}" if t.colour else t.symbol): t for t in board.targets}
    if target not in names:
        raise InputError(f"{target!r} is not a chip of {spec}; choose one of {', '.join(sorted(names))}")
    t = names[target]
    return board, Goal(t.cell, t.colour, t.symbol)


def _bank(args: argparse.Namespace) -> int:
    from .production.maintain import exhaustive_search, merge, search

    if args.merge:
        added = merge([Path(f) for f in args.merge], Path(args.bank))
        print(f"ricochet: {len(added)} new puzzles appended to {args.bank}", file=sys.stderr)
        return EXIT_OK

    if args.exhaustive:
        board, goal = _board_and_target(*args.exhaustive)
        finds = exhaustive_search(board, goal, args.min_length, args.ricochet, args.seed, args.minutes * 60,
                                  edition=args.edition, threads=args.threads, per_length=args.per_length)
    else:
        finds = search(args.min_length, args.robots, args.ricochet, args.seed, args.minutes * 60,
                       edition=args.edition, threads=args.threads, walk=args.walk, spread=args.spread)
    found = 0
    path = args.output or args.bank
    with open(path, "a", encoding="utf-8") as f:
        for entry in finds:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            found += 1
            print(f"ricochet: banked {entry['code']} ({entry['length']} moves)", file=sys.stderr)
    print(f"ricochet: {found} new puzzles in {path}", file=sys.stderr)
    return EXIT_OK


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ricochet-service")
    except PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
