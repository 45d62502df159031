"""Pictures, pack sheets and the contract are the same bytes in every process:
nothing drawn may follow a set's order, which changes with the hash seed."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RICOCHET = str(Path(sys.executable).parent / "ricochet")
DRAW = """
import hashlib, json, sys
from service.pictures import png
from solver.model.board import real_board
from solver.model.puzzle import Puzzle
from solver.formats.svg import board_svg, puzzle_svg, sheet_svg
rows = [json.loads(line) for line in open(sys.argv[1]).read().splitlines()]
puzzles = [Puzzle.from_json(r) for r in rows]
board = real_board("green-A,yellow-B,red-B,blue-B")
svgs = [board_svg(board), puzzle_svg(puzzles[0]), sheet_svg([(p, p.code(), None) for p in puzzles], columns=2,
                                                             title="sheet")]
for picture in svgs + [png(svgs[1])]:
    data = picture.encode() if isinstance(picture, str) else picture
    print(hashlib.sha256(data).hexdigest())
"""


def _under_seed(seed: str, command: list[str]) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    return hashlib.sha256(done.stdout.encode()).hexdigest()


def test_the_board_command_draws_the_same_bytes_under_any_hash_seed():
    command = [RICOCHET, "board", "green-A,yellow-B,red-B,blue-B", "--svg"]
    assert len({_under_seed(seed, command) for seed in ("1", "2", "3")}) == 1


def test_pictures_and_sheets_are_the_same_bytes_under_any_hash_seed():
    command = [sys.executable, "-c", DRAW, str(ROOT / "examples" / "puzzles.jsonl")]
    assert len({_under_seed(seed, command) for seed in ("1", "2", "3", "4")}) == 1


def test_the_contract_is_the_same_bytes_under_any_hash_seed():
    command = [sys.executable, "-c", "from service.contract import build, render; print(render(build()))"]
    assert len({_under_seed(seed, command) for seed in ("1", "2")}) == 1
