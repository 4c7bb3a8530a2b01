"""The package's rooms: every module imports, none is in an import circle, none is over 600 lines.

The import graph is read from the source: every ``import`` statement of a module (those inside
functions too, which run at run time; not those under ``if TYPE_CHECKING:``, which never run).
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import trialscore

PACKAGE = Path(trialscore.__file__).parent
RUNNER = "trialscore.runner"
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__``)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(node: ast.AST, module: str, package: bool) -> Iterator[str]:
    """The package's modules that the statements under ``node`` import when they run."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child):
            for other in child.orelse:
                yield from _imported(other, module, package)
            continue
        if isinstance(child, ast.Import):
            yield from (alias.name for alias in child.names)
        elif isinstance(child, ast.ImportFrom):
            base = child.module or ""
            if child.level:
                parts = module.split(".") if package else module.split(".")[:-1]
                parts = parts[: len(parts) - child.level + 1]
                base = ".".join([*parts, *([child.module] if child.module else [])])
            for alias in child.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
        yield from _imported(child, module, package)


@functools.cache
def _graph() -> dict[str, set[str]]:
    """The import graph of the package's source, read once (two tests check it)."""
    graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = _imported(tree, name, path.name == "__init__.py")
        graph[name] = {other for other in found if other in MODULES and other != name}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle_and_only_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]


@pytest.mark.slow
def test_no_module_is_in_an_import_circle() -> None:
    assert _circles(_graph()) == []


@pytest.mark.slow
def test_the_import_graph_sees_imports_inside_functions_but_not_type_checking_ones() -> None:
    graph = _graph()
    assert (
        "trialscore.runner.distributed.backends" in graph["trialscore.runner.orchestrator"]
    )  # in a function
    assert "trialscore.runner.session" not in graph["trialscore.runner.distributed.controller"]  # typing only


def test_every_module_imports() -> None:
    names = sorted(MODULES)
    assert len([name for name in names if name.startswith(RUNNER)]) > 50
    assert [importlib.import_module(name).__name__ for name in names] == names


def test_no_module_is_over_600_lines() -> None:
    long = {
        name: lines
        for name, path in MODULES.items()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_statistics_are_private_modules_behind_one_namespace() -> None:
    """As scipy.stats: ``trialscore.stats`` is the API, its implementation modules are private."""
    import trialscore.stats as stats

    public = [
        name
        for name in MODULES
        if name.startswith("trialscore.stats.") and not name.split(".")[-1].startswith("_")
    ]
    assert public == []
    assert all(getattr(stats, name) is not None for name in stats.__all__)
