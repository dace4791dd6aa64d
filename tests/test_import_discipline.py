"""How the code imports itself, checked on the real import graph (what ``lint-imports`` builds):

* a layer package (``apps.<app>.services`` / ``selectors``) is reached through its public
  names only: code outside the package imports ``apps.<app>.services``, never one of its
  modules, so the package's ``__init__`` is the whole surface and helpers stay inside;
* a name with a leading underscore is private to its package: only the modules beside it
  import it;
* no import circle among an app's modules (services enqueue tasks by name through the app's
  ``queue`` module, so ``tasks`` → ``services`` is one way).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("apps", "lab", "tests", "config")
LAYER_PACKAGES = ("services", "selectors")


@cache
def _graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def _layer_package(module: str) -> str | None:
    parts = module.split(".")
    if len(parts) >= 3 and parts[0] == "apps" and parts[2] in LAYER_PACKAGES:
        return ".".join(parts[:3])
    return None


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_layer_packages_are_imported_through_their_public_names_only():
    graph = _graph()
    reaching_in = sorted(
        f"{importer} -> {imported}"
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if (package := _layer_package(imported)) is not None
        and imported != package
        and not _inside(importer, package)
    )

    assert reaching_in == []


def _python_files() -> Iterator[Path]:
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                yield path


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _parent(module: str) -> str:
    return module.rpartition(".")[0]


def test_private_names_are_imported_only_beside_their_module():
    private = sorted(
        f"{path.relative_to(ROOT)}:{node.lineno} {node.module}.{alias.name}"
        for path in _python_files()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
        if node.module.partition(".")[0] in PACKAGES
        and _parent(node.module) != _parent(_module_name(path))
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    )

    assert private == []


def _strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_strongly_connected_finds_a_circle_and_nothing_else():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

    assert _strongly_connected({"a", "b", "c", "d"}, edges) == [["a", "b", "c"]]


def test_no_import_circle_among_an_apps_modules():
    graph = _graph()
    circles = {}
    for app in sorted(graph.find_children("apps")):
        modules = {app, *graph.find_descendants(app)}
        edges = {
            module: graph.find_modules_directly_imported_by(module) & modules for module in modules
        }
        found = _strongly_connected(modules, edges)
        if found:
            circles[app] = found

    assert circles == {}
