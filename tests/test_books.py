"""Printable books: a pack as a PDF (GET /v1/packs/{id}.pdf, `ricochet pack --pdf`),
read back with pypdf: pages, every puzzle's number and length where it belongs,
the solutions at the back, fonts embedded, boards as vectors (no images)."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys

from pypdf import PdfReader

from service.app import create_app
from solver.formats.pdf import SOLUTIONS_PER_PAGE
from tests.helpers import made_pack


def fonts_and_images(reader: PdfReader) -> tuple[dict[str, bool], int]:
    """Every font the pages use, with whether its file is embedded; and how many images they hold."""
    fonts: dict[str, bool] = {}
    images = 0
    for page in reader.pages:
        resources = page["/Resources"]
        for font in (resources.get("/Font") or {}).values():
            font = font.get_object()
            descriptor = font.get("/FontDescriptor")
            descriptor = descriptor.get_object() if descriptor is not None else {}
            fonts[font["/BaseFont"]] = any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3"))
        for xobject in (resources.get("/XObject") or {}).values():
            images += xobject.get_object().get("/Subtype") == "/Image"
    return fonts, images


def test_a_100_puzzle_pack_as_a_book(redis_url, celery_worker):
    client = create_app({"REDIS_URL": redis_url}).test_client()
    job, made = made_pack(client, {"count": 100, "min_length": 8, "max_length": 12, "seed": "book"}, timeout=300)
    pack = made["puzzles"]
    assert len(pack) == 100

    r = client.get(f"/v1/packs/{job['pack_id']}.pdf?per_page=4")
    assert r.status_code == 200 and r.mimetype == "application/pdf" and r.data.startswith(b"%PDF")
    reader = PdfReader(io.BytesIO(r.data))
    solution_pages = math.ceil(100 / SOLUTIONS_PER_PAGE)
    assert len(reader.pages) == 25 + solution_pages
    texts = [page.extract_text() for page in reader.pages]
    for number, item in enumerate(pack, start=1):
        moves = "move" if item["optimal_length"] == 1 else "moves"
        caption = f"{number}. {item['optimal_length']} {moves} · {item['difficulty']['grade']}"
        assert caption in texts[(number - 1) // 4], (number, caption)  # four a page, in order
        assert item["code"] in texts[(number - 1) // 4]
        solutions = texts[25 + (number - 1) // SOLUTIONS_PER_PAGE]  # at the back, in order
        assert caption in solutions
        first = item["solution"][0]
        assert f"{first['robot']} {first['direction']}" in solutions
    assert all(f"page {n} of {len(texts)}" in text for n, text in enumerate(texts, start=1))
    fonts, images = fonts_and_images(reader)
    assert fonts and all(fonts.values()), fonts  # every font embedded
    assert images == 0  # the boards are vectors
    assert float(reader.pages[0].mediabox.width) == 595.2756 or round(float(reader.pages[0].mediabox.width)) == 595

    letter = PdfReader(io.BytesIO(client.get(f"/v1/packs/{job['pack_id']}.pdf?paper=letter&per_page=12"
                                             "&solutions=false").data))
    assert len(letter.pages) == math.ceil(100 / 12)
    assert (round(float(letter.pages[0].mediabox.width)), round(float(letter.pages[0].mediabox.height))) == (612, 792)
    assert "100. " in letter.pages[-1].extract_text()
    for bad, field in (("per_page=5", "per_page"), ("paper=a3", "paper"), ("solutions=maybe", "solutions")):
        refused = client.get(f"/v1/packs/{job['pack_id']}.pdf?{bad}")
        assert refused.status_code == 400 and refused.json["field"] == field, refused.json
    assert client.get("/v1/packs/nosuchpack.pdf").status_code == 404


def test_ricochet_pack_writes_a_book(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    out = tmp_path / "book.pdf"
    run = subprocess.run([sys.executable, "-m", "service.cli", "pack", "--count", "7", "--length", "5", "--seed",
                          "cli-book", "--pdf", str(out), "--per-page", "6", "--paper", "letter"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 7  # the JSON lines as ever, and the book beside them
    reader = PdfReader(out)
    assert len(reader.pages) == 2 + 1
    assert "7. 5 moves" in reader.pages[1].extract_text() and "1. 5 moves" in reader.pages[2].extract_text()
    piped = subprocess.run([sys.executable, "-m", "service.cli", "pack", "--count", "2", "--length", "4",
                            "--pdf", "-", "--no-solutions"], capture_output=True, env=env, timeout=300)
    assert piped.returncode == 0 and piped.stdout.startswith(b"%PDF")
    assert len(PdfReader(io.BytesIO(piped.stdout)).pages) == 1
