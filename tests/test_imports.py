"""The package's import graph: no circles, and the layers point one way.

Every import counts, also those inside functions: a lazy import that closes a
circle is still a circle, only one that fails later."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solver", "application", "workers", "service", "ricochet_client")
FOLDERS = {"ricochet_client": ROOT / "clients" / "python" / "ricochet_client"}  # a distribution of its own


def _modules() -> dict[str, Path]:
    out = {}
    for package in PACKAGES:
        folder = FOLDERS.get(package, ROOT / package)
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
        for path in folder.glob("*/module.c"):  # a C extension (solver/core -> solver._core)
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


def _third_party(path: Path) -> set[str]:
    """The top-level names of the packages outside ours a module imports (flask, celery, redis, ...)."""
    if path.suffix == ".c":
        return set()
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name.partition(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.partition(".")[0])
    return found - set(PACKAGES)


def task_modules(modules: dict[str, Path] | None = None) -> set[str]:
    """The Celery tasks' modules: workers/tasks.py and any other workers/*tasks.py."""
    return {m for m in (modules or _modules()) if m.startswith("workers.") and m.rpartition(".")[2].endswith("tasks")}


def layers() -> dict[str, set[str]]:
    """The house's layers (docs/architecture.md): the edges (HTTP views and the
    command line in service/, the Celery tasks in workers/*tasks.py), the use cases
    (application/), what sits below them (workers/: the stores, the Celery app's
    factory and the tasks' messages, settings, answers), and the domain (solver/)."""
    modules = _modules()
    tasks = task_modules(modules)
    return {"edge": {m for m in modules if m.startswith("service")} | tasks,
            "use case": {m for m in modules if m.startswith("application")},
            "below": {m for m in modules if m.startswith("workers") and m not in tasks},
            "domain": {m for m in modules if m.startswith("solver")}}


def _stores(targets: set[str]) -> set[str]:
    return {t for t in targets if t == "workers.stores" or t.startswith("workers.stores.")}


def test_the_edges_call_the_use_cases_and_never_a_store():
    """Views, commands and tasks reach the stores through application/ (a Context
    the use cases are given), never by importing one; the tasks call use cases."""
    edges, found = graph(), layers()
    assert task_modules() >= {"workers.tasks"}
    for module in sorted(found["edge"]):
        assert not _stores(edges[module]), f"{module} imports a store: {sorted(_stores(edges[module]))}"
        assert "redis" not in _third_party(_modules()[module]), f"{module} imports redis"
        assert not edges[module] & (task_modules() - {module}), f"{module} reaches into a task module"
    for module in task_modules():
        assert any(t.startswith("application") for t in edges[module]), f"{module} calls no use case"
    views = [m for m in found["edge"] if m.startswith("service.") and not m.startswith("service.cli")]
    assert sum(any(t.startswith("application") for t in edges[m]) for m in views) >= 10


def test_the_use_cases_know_no_edge():
    """application/ imports no Flask, no Celery and no task module (it queues
    work through its Context, by a TaskSpec), and nothing of service/."""
    edges, modules, found = graph(), _modules(), layers()
    for module in sorted(found["use case"]):
        assert not edges[module] & (found["edge"]), f"{module} imports an edge: {edges[module] & found['edge']}"
        assert not _third_party(modules[module]) & {"flask", "werkzeug", "celery", "kombu"}, module


def test_below_the_use_cases_nothing_looks_up():
    """The stores, the Celery app's factory and the messages import neither the
    use cases nor an edge (the worker finds its tasks by name: include=[...])."""
    edges, found = graph(), layers()
    for module in sorted(found["below"]):
        assert not edges[module] & (found["edge"] | found["use case"]), f"{module} looks up: {edges[module]}"


def test_the_domain_is_pure():
    """solver/ imports no Flask, Celery or Redis, and nothing of ours above it;
    the game does not import production (the daily puzzle reads a frozen
    calendar; production builds it); the client stands alone (HTTP only: it
    imports nothing of the service's packages)."""
    edges, modules, found = graph(), _modules(), layers()
    for module in sorted(found["domain"]):
        assert not _third_party(modules[module]) & {"flask", "werkzeug", "celery", "kombu", "redis"}, module
        assert not any(t.startswith(("application", "workers", "service")) for t in edges[module]), module
    assert not any(t.startswith("solver.production") for t in edges["solver.play.daily"])
    for module, targets in edges.items():
        if module.startswith("ricochet_client"):
            assert all(t.startswith("ricochet_client") for t in targets), (module, targets)


def test_only_the_stores_touch_redis():
    """No module of service/, application/ or solver/ imports redis or calls Redis commands
    itself: storage is the stores' (workers/stores/), and their keys with it."""
    for top in ("service", "solver", "application"):
        for path in (ROOT / top).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"^\s*(import redis|from redis)", text, re.M), path
            assert not re.search(r"\.redis\.\w+\(", text), f"{path} calls Redis itself"
            assert not re.search(r"[\"']ricochet:[a-z]", text), f"{path} names a Redis key"
