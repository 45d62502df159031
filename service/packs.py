"""Packs: creating one (application.packs decides), reading it as JSON, NDJSON, CSV
(the export's columns) or printable sheets."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, request

from application import books, packs
from solver.formats.svg import sheet_svg
from solver.model.puzzle import Puzzle, moves_from_json

from . import limits
from .common import SVG, accepted, context
from .declare import JOB_LINKS, Reply, ndjson, operation
from .errors import Problem
from .requests.packs import BookQuery, IdempotencyHeader, PackQuery, PackRequest, SheetQuery
from .shapes import Job, Pack, PackItem

bp = Blueprint("packs", __name__)

@operation(bp, "post /v1/packs", "createPack", tag="packs", body=PackRequest, searches=True, quota="pack",
           summary="Generate a pack of puzzles in the background (202 + the job's Location)",
           header=IdempotencyHeader, errors=(400, 409, 422, 503), replies={
               202: Reply("Accepted; follow `Location`", Job, headers={"Location": {"schema": {"type": "string"}}},
                          links=JOB_LINKS)})
def create_pack(body: packs.PackRequest, header: dict[str, Any]) -> Any:
    return accepted(packs.submit(context(), body, header.get("key")))


NDJSON, CSV = "application/x-ndjson", "text/csv"
LINES = {NDJSON: "ndjson", CSV: "csv"}  # the formats of one puzzle per line, by the media type Accept may name


@operation(bp, "get /v1/packs/<pack_id>", "getPack", tag="packs",
           summary="A finished pack as JSON, or (with ?format=ndjson|csv or Accept application/x-ndjson|text/csv) "
                   "one puzzle per line: the puzzles made so far, also while the pack is running (header "
                   "X-Pack-State); CSV has the columns of GET /v1/puzzles/export, source `pack:<id>`",
           query=PackQuery,
           errors=(400, 404, 409, 410), replies={
               200: Reply("The puzzles in order of `index`, each a docs/formats.md puzzle with its solution and "
                          "difficulty; `failed` lists the items that could not be made, with the reason", Pack,
                          headers={"Vary": {"schema": {"type": "string"}, "description": "Accept"},
                                   "X-Pack-State": {"schema": {"type": "string"},
                                                    "description": "NDJSON and CSV only: the pack's job state"}},
                          media={NDJSON: {"schema": {"type": "string"}}, CSV: {"schema": {"type": "string"}}})})
def get_pack(pack_id: str, query: dict[str, Any]) -> Any:
    fmt = query.get("format") or LINES.get(request.accept_mimetypes.best or "", "json")
    # The line formats stream the puzzles made so far, also while the pack is still running.
    job, puzzles = packs.read(context(), pack_id, finished=fmt == "json")
    if fmt == "json":
        failed = (job.get("result") or {}).get("failed", [])
        return {"pack_id": pack_id, "title": packs.title(packs.request_of(job)), "count": len(puzzles),
                "request": job["request"], "pairs": packs.pairs(puzzles),
                "puzzles": puzzles, "failed": failed}, 200, {"Vary": "Accept"}
    headers = {"X-Pack-State": job["state"], "Vary": "Accept"}
    if fmt == "ndjson":
        return Response(ndjson(PackItem, puzzles), mimetype=NDJSON, headers=headers)
    headers["Content-Disposition"] = f'attachment; filename="ricochet-pack-{pack_id}.csv"'
    return Response(packs.csv_lines(puzzles, f"pack:{pack_id}"), mimetype=CSV, headers=headers)


SHEET_SIZE = 24  # puzzles per SVG sheet


@operation(bp, "get /v1/packs/<pack_id>.svg", "getPackSheet", tag="packs", query=SheetQuery,
           summary="A finished pack drawn as printable SVG sheets of 24 puzzles, captioned with code and length",
           errors=(400, 404, 409, 410),
           replies={200: Reply("One sheet", media={SVG: {"schema": {"type": "string"}}})})
def pack_sheet(pack_id: str, query: dict[str, Any]) -> Response:
    _, puzzles = packs.read(context(), pack_id)
    pages = (len(puzzles) + SHEET_SIZE - 1) // SHEET_SIZE
    if query["page"] > pages:
        raise Problem("not-found", f"the pack has {pages} sheet(s) of {SHEET_SIZE} puzzles", field="page")
    first = (query["page"] - 1) * SHEET_SIZE
    items = []
    for index, item in enumerate(puzzles[first:first + SHEET_SIZE], start=first + 1):
        p = Puzzle.from_json({k: item[k] for k in ("board", "robots", "target", "rules")})
        moves = moves_from_json(item["solution"]) if query["solution"] else None
        items.append((p, f"{index}. {item['code']} · {item['optimal_length']} moves", moves))
    sheet = sheet_svg(items, columns=4, title=f"Pack {pack_id}, sheet {query['page']} of {pages}")
    return Response(sheet, mimetype=SVG, headers={"Cache-Control": "private, max-age=3600"})


PDF = "application/pdf"
BOOKS_PER_CLIENT = 2  # books one client waits for at once (429 beyond): each holds a web thread while a worker works
BOOKS_AT_ONCE = 8  # books every client together waits for at once (503 beyond)
BOOK_WAIT = 10.0  # seconds a request waits for its book before 503 with Retry-After (the book is kept once made)


@operation(bp, "get /v1/packs/<pack_id>.pdf", "getPackBook", tag="packs", query=BookQuery,
           summary="A finished pack as a printable book (PDF): A4 or Letter, 1 to 20 puzzles a page, titled, each "
                   "numbered with its length and grade and captioned with its robot and target, the solutions at "
                   "the back; vector boards, fonts embedded",
           description="A worker makes the book (never a web process) and it is kept for an hour, so asking again "
                       "is quick. A client waits for at most 2 books being made at once (429 with Retry-After "
                       "beyond); a book not made within 10 s is 503 with Retry-After (ask again: it is kept once "
                       "made).",
           errors=(400, 404, 409, 410, 503),
           replies={200: Reply("The book", media={PDF: {"schema": {"type": "string", "format": "binary"}}})})
def pack_book(pack_id: str, query: dict[str, Any]) -> Response:
    ctx = context()
    asked = books.wanted(ctx, pack_id, query["paper"], query["per_page"], query["solutions"])
    if asked.document is not None:
        document = asked.document
    else:
        give_back = limits.hold("book", BOOKS_PER_CLIENT, BOOK_WAIT + 5, "books being made", BOOKS_AT_ONCE)
        try:
            document = books.made(ctx, asked, BOOK_WAIT)
        finally:
            give_back()
    return Response(document, mimetype=PDF, headers={
        "Cache-Control": "private, max-age=3600",
        "Content-Disposition": f'inline; filename="ricochet-pack-{pack_id}.pdf"'})
