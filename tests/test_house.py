"""The house's sizes: no view over 30 lines and no function over 60, so that a
newcomer reads any one of them at a glance.  A view parses, calls a use case and
renders; what is longer belongs in application/ or below."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("service", "application", "workers", "solver", "clients/python", "bench")
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


def _views() -> list[Path]:
    """The views' modules: service/*.py with a blueprint of declared operations."""
    return [p for p in sorted((ROOT / "service").glob("*.py"))
            if "= Blueprint(" in (text := p.read_text(encoding="utf-8")) and "@operation(" in text]


def _hand_reads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in (("os", "environ"), ("request", "args")):
                found.append(f"{where} {node.value.id}.{node.attr}")
            if (node.value.id, node.attr) == ("json", "dumps"):
                found.append(f"{where} json.dumps")
        if isinstance(node, ast.Dict):
            keys = {k.value: v for k, v in zip(node.keys, node.values, strict=True) if isinstance(k, ast.Constant)}
            value = keys.get("in")
            if isinstance(value, ast.Constant) and value.value in ("path", "query", "header", "cookie"):
                found.append(f"{where} a hand-written {value.value} parameter")
    return found


def test_views_read_no_parameter_by_hand_and_dump_every_reply_by_its_shape():
    """A view's path, query and header parameters are declared (@operation's path=,
    query=, header=: loaded and documented from one schema), its settings come
    from the app's config, never os.environ, and its replies are dumped by their
    shapes (declare.dumped, ndjson, event_stream), never json.dumps."""
    views = _views()
    assert len(views) >= 10
    assert [found for path in views for found in _hand_reads(path)] == []


def test_the_contract_reads_its_limits_from_the_settings():
    from service import contract
    from workers.settings import Settings

    told = contract.description(Settings.from_env({"RICOCHET_SOLVE_TIME_BUDGET": "2.5",
                                                   "RICOCHET_JOB_TIME_BUDGET": "90", "RICOCHET_JOB_STATE_MB": "2048",
                                                   "RICOCHET_RATE_LIMIT": "5000 per hour",
                                                   "RICOCHET_RATE_LIMIT_SEARCH": "30/minute"}))
    assert "searches for at most 2.5 s" in told and "may search for 90 s" in told and "within 2 GiB" in told
    assert "5,000 requests per hour" in told and "30 per minute for the routes that search" in told
    document = (ROOT / "openapi.yaml").read_text(encoding="utf-8")
    defaults = contract.description()
    assert "1,200 requests per minute" in defaults and "at most 1 s" in defaults
    assert all(line.strip() in document for line in defaults.splitlines() if line.strip())
