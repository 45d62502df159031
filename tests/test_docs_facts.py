"""The figures and paths README.md and docs/*.md state, held to the checkout:
every file they name exists (a module's function, where they name one), a
file's stated size in lines is near its true size, and the counts of boards
are the model's.  A rename, a deletion or a file that doubled fails here
until the documents follow (links are test_standalone's)."""

from __future__ import annotations

import re

from tests.conftest import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A path in backticks under one of the checkout's folders.
PATH = re.compile(r"`((?:solver|application|workers|service|bench|tests|deploy|clients|examples|docs|\.ci|\.github)"
                  r"/[^`\s]*)`")
# Named in the documents but made at run time, not kept in the checkout.
MADE_AT_RUN_TIME = {"instance/"}
# "`service/declare.py` is about 250 lines", "`x.py` (about 250 lines)".
LINES = re.compile(r"`([\w./-]+\.\w+)`(?: is| \(|,)? ?(?:about |some |nearly )?([\d,]+) lines")


def documents() -> list[tuple[str, str]]:
    return [(doc.relative_to(ROOT).as_posix(), doc.read_text(encoding="utf-8")) for doc in DOCUMENTS]


def names_something_real(target: str) -> bool:
    """A file or folder of the checkout, or `package/module.name`: a name the module defines."""
    path = target.split("#")[0].split(":")[0]
    if (ROOT / path).exists():
        return True
    module, _, name = path.rpartition(".")
    source = ROOT / f"{module}.py"
    return bool(name) and source.is_file() and re.search(
        rf"^(?:def|class) {re.escape(name)}\b|^{re.escape(name)}\s*[:=]", source.read_text(encoding="utf-8"), re.M
    ) is not None


def test_every_path_the_documents_name_exists():
    named, missing = 0, []
    for doc, text in documents():
        for target in PATH.findall(text):
            if any(ch in target for ch in "*{}<>|+") or target.startswith(tuple(MADE_AT_RUN_TIME)):
                continue  # a pattern, a placeholder, a media type (application/problem+json), a run's file
            named += 1
            if not names_something_real(target):
                missing.append(f"{doc}: {target}")
    assert named > 200  # the scan finds what the documents name (321 paths when written)
    assert missing == [], "the documents name paths that are not in the checkout:\n" + "\n".join(missing)


def test_the_pattern_finds_a_stated_size():
    """The line-count pattern reads the sentence forms the documents use."""
    assert LINES.findall("`service/declare.py` is about 250 lines: ...") == [("service/declare.py", "250")]
    assert LINES.findall("`a/b.c` (1,200 lines)") == [("a/b.c", "1,200")]


def test_stated_line_counts_are_near_the_files():
    """A stated size within a fifth of the file's (it is 'about' a size)."""
    stated = [(doc, path, int(n.replace(",", ""))) for doc, text in documents() for path, n in LINES.findall(text)]
    assert stated, "no stated size found: the pattern no longer reads the documents"
    wrong = []
    for doc, path, n in stated:
        actual = len((ROOT / path).read_text(encoding="utf-8").splitlines())
        if abs(actual - n) > n / 5:
            wrong.append(f"{doc}: {path} said to be {n} lines, holds {actual}")
    assert wrong == []


def test_the_board_counts_are_the_models():
    """README's 96 distinct 1999 boards, docs/production.md's 1,536 (2013)."""
    from solver.model.board import all_boards

    counts = {edition: len(list(all_boards(edition))) for edition in ("1999", "2013")}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    production = (ROOT / "docs" / "production.md").read_text(encoding="utf-8")
    said_1999 = re.findall(r"the ([\d,]+) distinct 1999 boards", readme)
    said_2013 = re.findall(r"all ([\d,]+) boards", production)
    assert said_1999 and said_2013
    assert {int(n.replace(",", "")) for n in said_1999} == {counts["1999"]}
    assert {int(n.replace(",", "")) for n in said_2013} == {counts["2013"]}


def test_the_core_documents_its_arguments_as_it_parses_them():
    """Each entry point of the C core has its arguments declared once: the
    signature help() shows is the table the parser reads, so a keyword the
    signature names is one the function takes, and one it does not name is
    refused."""
    import inspect

    import pytest

    from solver import _core

    entry_points = [getattr(_core, n) for n in dir(_core) if callable(getattr(_core, n))]
    assert len(entry_points) >= 12
    for function in entry_points:
        parameters = inspect.signature(function).parameters
        assert parameters, function.__name__
        with pytest.raises(TypeError, match="unexpected keyword argument 'no_such_argument'"):
            function(**{name: None for name in parameters}, no_such_argument=1)
    solve = inspect.signature(_core.solve).parameters
    assert solve["max_depth"].default == 64 and solve["crew_yields"].default is True
    with pytest.raises(TypeError, match="missing required argument 'request'"):
        _core.solve(max_depth=3)
    import random

    from solver.search.solve import _request
    from tests.helpers import random_real_puzzle

    request = _request(random_real_puzzle(random.Random(3), 4, "2013"))
    with pytest.raises(TypeError, match="'max_depth' must be int, not float"):
        _core.solve(request, 3.5)
    with pytest.raises(TypeError, match="at most 12 arguments"):
        _core.solve(request, *range(12))
    assert _core.solve(request, max_depth=64, strategy=1)[0] == "optimal"


def test_the_core_points_to_files_that_exist():
    """The C core's comments send the reader to Python files and documents (its
    ricochet status to solver/model/moves.py, not to a solver/rules.py long gone)."""
    pointer = re.compile(r"\b((?:solver|docs|bench|tests)/[\w/]+\.(?:py|md|c|h))\b")
    named = [(source.name, target) for source in sorted((ROOT / "solver" / "core").glob("*.[ch]"))
             for target in pointer.findall(source.read_text(encoding="utf-8"))]
    assert len(named) >= 4  # four when written
    assert [f"{name}: {target}" for name, target in named if not (ROOT / target).exists()] == []
