"""No import circle among ``kafka_placement``'s modules.

How it checks: every ``.py`` file under the installed ``kafka_placement`` package is parsed with
:mod:`ast` (nothing is imported). Every ``import`` and ``from … import`` statement anywhere in the file
counts — at module level, inside functions and methods (the lazy imports), and inside
``if TYPE_CHECKING:`` blocks (a circle only type checkers see is still two modules that each need the
other). Relative imports are resolved against the file's package. A statement makes an edge from the
file's module to the module it names: ``from P import x`` goes to ``P.x`` when ``x`` is a module (a
``.py`` file, or a compiled extension found by its ``.pyi`` stub or extension file), else to ``P``
itself. The implicit import of a package's ``__init__`` that precedes any import of its submodules is
not an edge (it would make every package and its submodules a circle). The strongly connected
components of that graph (Tarjan) must all be single modules.
"""

from __future__ import annotations

import ast
import importlib.machinery
import sys
from collections.abc import Iterator
from pathlib import Path

import kafka_placement

ROOT = Path(kafka_placement.__file__).parent
PACKAGE = "kafka_placement"

#: Edges that close a circle today, each with why it is still here; an entry must name an edge that
#: exists (the test below fails when it is gone, so the list only shrinks).
KNOWN: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, tuple[Path | None, bool]]:
    """Module name → (its ``.py`` file or None for a compiled extension, is a package)."""
    found: dict[str, tuple[Path | None, bool]] = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    suffixes = (".pyi", *importlib.machinery.EXTENSION_SUFFIXES)
    for path in ROOT.rglob("*"):
        for suffix in suffixes:
            if path.name.endswith(suffix) and path.name != "__init__.pyi":
                stem = path.name[: -len(suffix)]
                name = ".".join((*path.parent.relative_to(ROOT.parent).parts, stem))
                found.setdefault(name, (None, False))
    return found


def _imported(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> Iterator[str]:
    """The kafka_placement modules ``module`` imports, every statement anywhere in it."""

    def nearest(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    target = nearest(alias.name)
                    if target:
                        yield target
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source != PACKAGE and not source.startswith(PACKAGE + "."):
                continue
            for alias in node.names:
                target = f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else nearest(source)
                if target:
                    yield target


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    names = set(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        if path is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = set(_imported(tree, name, is_package, names)) - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_import_circle_among_kafka_placement_modules() -> None:
    graph = import_graph()
    for source, target in KNOWN:
        graph[source].discard(target)
    found = circles(graph)
    described = [
        " ↔ ".join(c) + ": " + "; ".join(f"{a} → {b}" for a in c for b in sorted(graph[a] & set(c)))
        for c in found
    ]
    assert not found, "import circles:\n" + "\n".join(described)


def test_every_known_exception_still_exists() -> None:
    graph = import_graph()
    gone = [edge for edge in KNOWN if edge[1] not in graph.get(edge[0], set())]
    assert not gone, f"fixed, remove from KNOWN: {gone}"


def test_the_walk_sees_lazy_relative_and_type_only_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from . import sibling\n"
        "from ..other import thing\n"
        "if TYPE_CHECKING:\n"
        "    from kafka_placement.pkg.typed import T\n"
        "def f():\n"
        "    import kafka_placement.pkg.lazy\n"
        "    from kafka_placement.pkg import _ext\n"
    )
    modules = {"kafka_placement", "kafka_placement.pkg"} | {
        f"kafka_placement.pkg.{name}" for name in ("sub.mod", "sub.sibling", "other", "typed", "lazy", "_ext")
    }
    found = set(_imported(ast.parse(source), "kafka_placement.pkg.sub.mod", False, modules))
    assert found == {
        "kafka_placement.pkg.sub.sibling",
        "kafka_placement.pkg.other",
        "kafka_placement.pkg.typed",
        "kafka_placement.pkg.lazy",
        "kafka_placement.pkg._ext",
    }
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
