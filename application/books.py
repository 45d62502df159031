"""Printable books: a pack's puzzles as a PDF (solver/formats/pdf.py), for
GET /v1/packs/{id}.pdf and `ricochet pack --pdf` alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from solver.formats.pdf import GRIDS, PAPERS, BookItem, book_pdf
from solver.model.puzzle import Puzzle, moves_from_json

from .problems import Problem

__all__ = ["GRIDS", "PAPERS", "book"]


def book(items: Sequence[dict[str, Any]], title: str, paper: str = "a4", per_page: int = 4,
         solutions: bool = True) -> bytes:
    """A pack's items (as GET /v1/packs/{id} shows them, in order) as a book: numbered
    from 1, each with its optimal length and grade, the solutions at the back."""
    if paper not in PAPERS:
        raise Problem("invalid-input", f"paper is {' or '.join(PAPERS)}", field="paper")
    if per_page not in GRIDS:
        raise Problem("invalid-input", f"per_page is one of {', '.join(map(str, GRIDS))}", field="per_page")
    pages = [BookItem(Puzzle.from_json({k: item[k] for k in ("board", "robots", "target", "rules")}), n,
                      item["optimal_length"], (item.get("difficulty") or {}).get("grade"), item["code"],
                      moves_from_json(item["solution"]))
             for n, item in enumerate(items, start=1)]
    return book_pdf(pages, title, paper, per_page, solutions)
