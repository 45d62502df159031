"""Printable books: a pack's puzzles as a PDF (solver/formats/pdf.py), for
GET /v1/packs/{id}.pdf and `ricochet pack --pdf` alike.

A big book is seconds of CPU (1,000 pages: 3-4 s and 4.5 MB), so the API never
makes one in a web process: a worker makes it (ricochet.book, on the packs
queue) and keeps it (workers/stores/books.py, an hour, under a cap), and the
request waits for it without using the CPU.  A kept book is named by what it
shows: the pack (whose items never change once it has succeeded: its id and
when it finished name them), its title and the book's options, so asking again
serves the same bytes."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from solver.formats.pdf import GRIDS, PAPERS, BookItem, book_pdf
from solver.model.puzzle import Puzzle, moves_from_json
from workers.messages import BOOK
from workers.stores.packs import MadeItem

from . import Context, jobs
from .packs import PackItem, read_job, request_of, title
from .problems import Problem

__all__ = ["GRIDS", "PAPERS", "Book", "book", "made", "make_kept", "wanted"]

log = logging.getLogger(__name__)

LAYOUT = 2  # the book's layout: a new one names every book anew, so none kept from before is served
MAKING_SECONDS = 120.0  # a claim to make a book lapses after this (its worker died): the next request sends it again
POLL_SECONDS = 0.1


def book(items: Sequence[MadeItem] | Sequence[PackItem], title: str, paper: str = "a4", per_page: int = 4,
         solutions: bool = True) -> bytes:
    """A pack's items (as GET /v1/packs/{id} shows them, in order) as a book: numbered
    from 1, each with its optimal length, grade, robot and target, the solutions at the back."""
    if paper not in PAPERS:
        raise Problem("invalid-input", f"paper is {' or '.join(PAPERS)}", field="paper")
    if per_page not in GRIDS:
        raise Problem("invalid-input", f"per_page is one of {', '.join(map(str, GRIDS))}", field="per_page")
    pages = [BookItem(Puzzle.from_json({k: item[k] for k in ("board", "robots", "target", "rules")}), n,
                      item["optimal_length"], (item.get("difficulty") or {}).get("grade"), item["code"],
                      moves_from_json(item["solution"]))
             for n, item in enumerate(items, start=1)]
    return book_pdf(pages, title, paper, per_page, solutions)


@dataclass(frozen=True)
class Book:
    """A pack's book as asked for: its key (what it shows), its title, and its bytes when kept."""

    pack_id: str
    key: str
    title: str
    paper: str
    per_page: int
    solutions: bool
    document: bytes | None = None


def wanted(ctx: Context, pack_id: str, paper: str, per_page: int, solutions: bool) -> Book:
    """The book of a finished pack (404, 409 or 410 as GET /v1/packs/{id} says),
    with its bytes when a worker made it lately."""
    job = read_job(ctx, pack_id)
    named = title(request_of(job))
    shown = json.dumps([LAYOUT, pack_id, job.get("finished"), named, paper, per_page, solutions])
    key = hashlib.sha256(shown.encode()).hexdigest()
    return Book(pack_id, key, named, paper, per_page, solutions, ctx.required_stores().books.get(key))


def made(ctx: Context, asked: Book, wait: float) -> bytes:
    """The book's bytes: sent to a worker to make (once, however many ask at
    once) and waited for up to `wait` seconds; 503 with Retry-After when it is
    not made by then (it is kept once made, so the retry gets it)."""
    if asked.document is not None:
        return asked.document
    books = ctx.required_stores().books
    if books.claim(asked.key, MAKING_SECONDS):
        try:
            jobs.send(ctx, BOOK.of({"key": asked.key, "pack_id": asked.pack_id, "paper": asked.paper,
                                    "per_page": asked.per_page, "solutions": asked.solutions}))
        except Exception:
            books.fail(asked.key, "unavailable", "the book could not be sent to a worker")
            raise
    deadline = time.monotonic() + wait
    while True:
        kept, failed = books.state(asked.key)
        if kept:
            document = books.get(asked.key)
            if document is not None:
                return document
        if failed is not None:
            raise Problem(failed["kind"], failed["detail"])
        if time.monotonic() >= deadline:
            raise Problem("unavailable", "the book is still being made (a book of many pages takes seconds); "
                          "retry after Retry-After seconds: it is kept for an hour once made",
                          headers={"Retry-After": "5"})
        time.sleep(POLL_SECONDS)


def make_kept(ctx: Context, key: str, pack_id: str, paper: str, per_page: int, solutions: bool) -> int:
    """A worker's part (ricochet.book): the book made and kept under `key`, or why
    not told to the requests waiting.  Returns its size in bytes (0: not made)."""
    stores = ctx.required_stores()
    try:
        job = read_job(ctx, pack_id)
        items = stores.packs.items(pack_id, job["request"]["count"])
        document = book(items, title(request_of(job)), paper, per_page, solutions)
    except Problem as e:
        stores.books.fail(key, e.kind, e.detail)
        return 0
    except Exception:
        log.exception("the book of pack %s could not be made", pack_id)
        stores.books.fail(key, "server-error", "the book could not be made; the error is logged")
        return 0
    stores.books.keep(key, document, time.time())
    return len(document)
