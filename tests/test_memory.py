"""Memory bounded by bytes, not by count: the per-process caches (compiled
boards, PNG pictures) stay within their budgets whatever clients send, here a
flood of distinct 32x32 custom boards, each solved once (a board's tables grow
with its searches, so a cache counting boards grew to gigabytes)."""

from __future__ import annotations

from solver import _core
from solver.model.puzzle import Puzzle
from solver.search.solve import compiled, solve


def _custom(i: int) -> Puzzle:
    walls = [[i % 32, (i // 32) % 32, "E"], [(i * 7) % 32, 5, "S"], [3, (i * 3) % 32, "E"]]
    return Puzzle.from_json({
        "board": {"width": 32, "height": 32, "walls": walls, "blocked": [],
                  "targets": [{"cell": [20, 20], "colour": "red", "symbol": "circle"}], "diagonals": []},
        "robots": {"red": [1, 1], "green": [30, 2], "blue": [2, 30], "yellow": [29, 28]},
        "target": {"colour": "red", "symbol": "circle"}})


def test_compiled_boards_stay_within_their_byte_budget(monkeypatch):
    budget = 4 << 20
    monkeypatch.setattr(compiled, "budget", budget)
    largest = 0
    for i in range(40):
        p = _custom(i)
        solve(p, time_budget=0.05)
        largest = max(largest, _core.layout_bytes(compiled(p.board)))
    assert largest > 256 << 10  # a 32x32 board with one target's tables: the growth the budget must count
    assert compiled.bytes <= budget
    held = sum(_core.layout_bytes(layout) for layout, _ in compiled._boards.values())
    assert held <= budget + largest  # counted late by at most the board searched last
    assert 1 < len(compiled) < 40


def test_pictures_stay_within_their_byte_budget():
    from service.pictures import Pictures
    from solver.formats.svg import puzzle_svg

    pictures = Pictures(300 << 10)
    sizes = []
    for i in range(12):
        p = Puzzle.from_json({"board": "green-A,yellow-B,red-B,blue-B", "target": {"colour": "red", "symbol": "circle"},
                              "robots": {"red": [i, 0], "green": [0, 15], "blue": [15, 15], "yellow": [15, 0]}})
        data = pictures(puzzle_svg(p))
        assert data.startswith(b"\x89PNG")
        sizes.append(len(data))
    assert pictures.bytes <= 300 << 10 and sum(sizes) > 300 << 10


def test_the_budgets_are_settings(monkeypatch):
    from service.app import create_app
    from service.pictures import png
    from workers.settings import Settings

    monkeypatch.setattr(compiled, "budget", compiled.budget)
    monkeypatch.setattr(png, "budget", png.budget)
    settings = Settings.from_env({"RICOCHET_BOARD_CACHE_MB": "5", "RICOCHET_PICTURE_CACHE_MB": "3"})
    create_app({"TESTING": True}, settings)
    assert compiled.budget == 5 << 20 and png.budget == 3 << 20
