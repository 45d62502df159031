"""The house's sizes: no view over 30 lines and no function over 60, so that a
newcomer reads any one of them at a glance.  A view parses, calls a use case and
renders; what is longer belongs in application/ or below."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("service", "application", "workers", "solver", "ricochet_client", "bench")
VIEW_LINES, FUNCTION_LINES = 30, 60


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for top in CODE:
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found += [(f"{path.relative_to(ROOT)}:{node.name}", node) for node in ast.walk(tree)
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return found


def _lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return (node.end_lineno or node.lineno) - node.lineno + 1


def _is_view(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and getattr(d.func, "id", None) == "operation" for d in node.decorator_list)


def test_views_are_short():
    views = [(name, node) for name, node in _functions() if _is_view(node)]
    assert len(views) >= 30  # every route is declared with @operation, so this sees them all
    assert [f"{name} ({_lines(node)} lines)" for name, node in views if _lines(node) > VIEW_LINES] == []


def test_functions_are_short():
    assert [f"{name} ({_lines(node)} lines)" for name, node in _functions() if _lines(node) > FUNCTION_LINES] == []
