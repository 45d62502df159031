"""The checkout stands alone: nothing reads or links outside it (../shared is
optional: its samples run when it is there, tests/conftest.py is their one
door), the own samples are rows of the outside ones, and the documents' links
resolve inside the checkout."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT, outside_samples, own_samples, puzzle_key

# The files that may name ../shared: the one door to the outside samples, and what explains it.
DOORS = {"tests/conftest.py", "tests/test_standalone.py", "tests/fixtures/README.md", ".ci/run"}
SKIPPED = {".git", ".venv", "node_modules", "build", "dist", "__pycache__"}
OUTSIDE = re.compile(r"\.\./shared|/ *\"shared\"")


def tracked() -> list[Path]:
    """The project's text files (what a clone holds, less the data)."""
    found = []
    for path in ROOT.rglob("*"):
        parts = set(path.relative_to(ROOT).parts)
        if parts & SKIPPED or any(p.endswith(".egg-info") for p in parts) or not path.is_file():
            continue
        if path.suffix in {".py", ".md", ".toml", ".yaml", ".yml", ".cfg", ".c", ".h", ".js", ".html", ".sh"} \
                or path.name in {"Makefile", "run", "Dockerfile", "Procfile", "MANIFEST.in"}:
            found.append(path)
    return found


def test_nothing_reads_or_points_outside_the_checkout():
    named = []
    for path in tracked():
        rel = path.relative_to(ROOT).as_posix()
        if rel in DOORS:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                named.append(f"{rel}:{n}: {line.strip()}")
    assert not named, "these lines reach outside the checkout:\n" + "\n".join(named)


def test_the_documents_link_inside_the_checkout():
    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*/README.md"))]:
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (doc.parent / target.split("#")[0]).resolve()
            if not path.exists() or ROOT not in path.parents and path != ROOT:
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, "links that do not resolve inside the checkout:\n" + "\n".join(broken)


def test_the_own_samples_are_rows_of_the_outside_ones():
    """Each row of tests/fixtures/puzzles.jsonl is, field for field, a row of
    ../shared/puzzles (when it is there): the copy has not drifted."""
    rows = outside_samples()
    own = own_samples()
    assert len(own) >= 30 and len({puzzle_key(r) for r in own}) == len(own)
    if rows is None:
        import pytest

        pytest.skip("../shared is not beside this checkout (it is optional)")
    by_key = {puzzle_key(r): r for r in rows}
    assert [r for r in own if by_key.get(puzzle_key(r)) != r] == []


def test_the_own_docs_name_every_option_and_field():
    """docs/rules.md names every rule and game option the code takes, and
    docs/formats.md every field of an answer, a verdict and a board object:
    a new one cannot go undocumented."""
    from dataclasses import fields

    from solver.model.moves import Verdict
    from solver.model.puzzle import Rules
    from solver.play.game import DEFAULT_OPTIONS
    from solver.search.solution import STATUSES
    from solver.search.solve import solve
    from tests.helpers import random_real_puzzle

    rules = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    formats = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    options = [f.name for f in fields(Rules)] + list(DEFAULT_OPTIONS)
    assert [o for o in options if f"`{o}`" not in rules] == []
    import random

    answer = solve(random_real_puzzle(random.Random(1), 4, "2013")).to_json()
    named = [*answer, "lower_bound", "message", "void_reason", *STATUSES, *(f.name for f in fields(Verdict)),
             "width", "height", "walls", "blocked", "targets", "diagonals", "openings"]
    assert [n for n in named if f"`{n}`" not in formats] == []


def test_the_architecture_guide_names_every_module():
    """docs/architecture.md's "Every module" names each module of the packages
    (and each C file of the core): a new one cannot go unplaced."""
    guide = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    modules = [p for package in ("solver", "application", "workers", "service", "clients/python")
               for p in (ROOT / package).rglob("*") if p.suffix in (".py", ".c", ".h") and "__pycache__" not in p.parts]
    assert len(modules) > 100
    assert [str(p.relative_to(ROOT)) for p in modules if f"`{p.relative_to(ROOT).as_posix()}`" not in guide] == []


def test_the_results_are_newest_first_and_a_screen_a_topic():
    """bench/RESULTS.md: each topic's figures fit one screen outside its folded
    history, and a table dated by rows lists the newest first."""
    text = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    topics = re.split(r"\n(?=## )", text)
    assert len(topics) >= 8
    for topic in topics:
        shown = re.sub(r"<details>.*?</details>", "", topic, flags=re.S)
        assert len(shown.splitlines()) <= 70, topic.splitlines()[0]
    for table in re.findall(r"^\| date \|.*?(?=\n\n|\Z)", text, re.M | re.S):
        dates = [row.split("|")[1].strip() for row in table.splitlines()[2:]]
        assert dates == sorted(dates, reverse=True), dates


def test_the_catalogue_figures_in_the_docs_are_the_shipped_ones():
    """docs/production.md's figures of the shipped catalogue (pools, rows,
    megabytes) are what solver/production/data/catalogue holds: a fill that
    grows it fails here until the figures follow (the message gives them)."""
    import gzip
    import json

    from solver.production.pools import CATALOGUE

    files = sorted(CATALOGUE.glob("*.pool.gz"))
    rows = sum(len(json.loads(gzip.decompress(f.read_bytes()))["rows"]) for f in files)
    mb = f"{sum(f.stat().st_size for f in files) / 1e6:.1f}"
    text = (ROOT / "docs" / "production.md").read_text(encoding="utf-8")
    shown = {("pools", n) for n in re.findall(r"([\d,]+) pools, [\d,]+ puzzles\)", text)}
    shown |= {("rows", n) for n in re.findall(r"\(\d+ pools, ([\d,]+) puzzles\)|holds ([\d,]+) rows in", text)
              for n in n if n}
    shown |= {("MB", n) for n in re.findall(r"catalogue (?:is|holds [\d,]+ rows in) ([\d.]+) MB", text)}
    assert len(shown) >= 3
    assert shown == {("pools", f"{len(files):,}"), ("rows", f"{rows:,}"), ("MB", mb)}
