"""The package's import graph: no circles, and the layers point one way.

Every import counts, also those inside functions: a lazy import that closes a
circle is still a circle, only one that fails later."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solver", "application", "workers", "service", "ricochet_client")


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
        for path in (ROOT / package).glob("*/module.c"):  # a C extension (solver/core -> solver._core)
            out[f"{package}._{path.parent.name}"] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    if path.suffix == ".c":
        return set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = ".".join(p for p in (base if node.level else "", node.module or "") if p)
            # `from a import b` imports module a.b when there is one, else a name of a.
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
        else:
            continue
        for target in targets:
            # The module itself, or the nearest package of ours that holds it.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    modules = _modules()
    edges = {name: _imports(name, path, modules) for name, path in modules.items()}
    # A package's __init__ runs before its modules: importing a.b imports a too, but that
    # edge is not a circle of the code's making, so it is left out.
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    assert _cycles(graph()) == []


def test_the_layers_point_one_way():
    """solver knows nothing of the use cases, workers or service; the use cases
    (application) nothing of HTTP or the tasks; workers nothing of service;
    the game does not import production (the daily puzzle reads a frozen
    calendar; production builds it); the command line (service.cli) sits on top;
    the service reaches no helper through the Celery task module."""
    edges = graph()
    for module, targets in edges.items():
        if module.startswith("solver"):
            assert not any(t.startswith(("application", "workers", "service")) for t in targets), module
        if module.startswith("application"):  # the use cases know nothing of HTTP or of the task module
            assert not any(t.startswith(("service", "flask", "workers.tasks")) for t in targets), module
        if module.startswith("workers.stores"):
            assert not any(t.startswith("application") for t in targets), module
        if module.startswith("workers"):
            assert not any(t.startswith("service") for t in targets), module
        if module.startswith("ricochet_client"):  # the client stands alone: HTTP only
            assert not targets, module
        if module == "solver.play.daily":
            assert not any(t.startswith("solver.production") for t in targets), module
        if module.startswith("service"):  # the service queues tasks by name; it never imports them
            assert "workers.tasks" not in targets, f"{module} reaches into the task module"


def test_only_the_stores_touch_redis():
    """No module of service/, application/ or solver/ imports redis or calls Redis commands
    itself: storage is the stores' (workers/stores/), and their keys with it."""
    for top in ("service", "solver", "application"):
        for path in (ROOT / top).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"^\s*(import redis|from redis)", text, re.M), path
            assert not re.search(r"\.redis\.\w+\(", text), f"{path} calls Redis itself"
            assert not re.search(r"[\"']ricochet:[a-z]", text), f"{path} names a Redis key"
