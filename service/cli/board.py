"""`ricochet board`: draw a board or a puzzle (ASCII, SVG or JSON), or list an edition's boards."""

from __future__ import annotations

import argparse
import json

from solver.errors import InvalidInput
from solver.formats.ascii import LEGEND, ascii_board, ascii_puzzle
from solver.formats.svg import board_svg, puzzle_svg
from solver.model.board import Board, all_boards
from solver.model.puzzle import Puzzle

from .common import EXIT_OK, InputError, documents


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("board", help="draw a board (ASCII by default)")
    p.add_argument("spec", nargs="?", help="a board spec like 'green-A,yellow-B,red-B,blue-B', or a JSON file "
                   "(puzzle or custom board; '-' for standard input); not needed with --list")
    p.add_argument("--format", choices=("ascii", "svg", "json"), default="ascii",
                   help="ascii (a picture with a legend), svg or json (docs/formats.md's board object)")
    p.add_argument("--svg", dest="format", action="store_const", const="svg", help="same as --format svg")
    p.add_argument("--list", action="store_true", help="list every distinct board of --edition instead")
    p.add_argument("--edition", choices=("1999", "2013"), default="2013", help="the edition --list lists")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.list:
        for spec in all_boards(args.edition):
            print(spec)
        return EXIT_OK
    if args.spec is None:
        raise InputError("give a board spec (or --list)")
    puzzle = None
    try:
        if args.spec == "-" or args.spec.endswith(".json"):
            doc = next(documents(args.spec, False))[1]
            if isinstance(doc, dict) and "robots" in doc:
                puzzle = Puzzle.from_json(doc)
                board = puzzle.board
            else:
                board = Board.from_json(doc)
        else:
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
