"""The import rules of the library's layers, checked from the source.

``python tests/architecture/import_rules.py`` (run by ``make lint``, and by
``make test`` through ``test_import_rules.py``) reads every module of the
``tickler`` package with :mod:`ast` and fails on:

- a layer importing one above it: ``core`` imports neither ``shell`` nor
  ``adapters``, ``shell`` does not import ``adapters``;
- a private import across layers: a module outside ``tickler.core``
  importing ``tickler.core._x`` (or outside ``tickler.shell``,
  ``tickler.shell._x``, and so on); a layer is used by its public names;
- any import cycle between modules;
- a breach of the core's rooms: the time engine (``tickler.core.timing``)
  and the wire (``tickler.core.wire``) are pure subpackages below the
  domain (the rest of ``tickler.core``). The domain uses a room by its
  package name, never its private modules; a room imports nothing of the
  domain but its vocabulary (``_errors``, ``_profile``: modules that import
  nothing of the core), and only the rooms below it (timing may use the
  wire, the wire is a leaf).

Every import counts, wherever it stands: at the top, inside a function
(where a cycle hides, because it no longer fails at import time) or under
``if TYPE_CHECKING:``. A module is a file; ``from pkg import name`` is an
import of ``pkg.name`` when that is a module, else of ``pkg`` itself. An
import by a name computed at run time (``importlib.import_module``, as the
lazy facades do within their own layer) is not seen.

A small checker rather than import-linter: its contracts list modules by
name, where this rule means any module whose name starts with ``_``, and
its cycle contract (``acyclic_siblings``) is about siblings, where this
rule means any two modules.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "tickler"
# The folders of the package (the repository root is the package itself).
FOLDERS = ("core", "shell", "adapters", "testing")
# Which layers each layer may not import at all.
FORBIDDEN_LAYERS = {"core": {"shell", "adapters", "testing"}, "shell": {"adapters", "testing"}}
# The core's rooms below its domain, each with the rooms it may use.
ROOMS = {
    "tickler.core.wire": frozenset[str](),
    "tickler.core.timing": frozenset({"tickler.core.wire"}),
}
# The domain's words every room may use: they import nothing of the core.
VOCABULARY = frozenset({"tickler.core._errors", "tickler.core._profile"})


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Each module's dotted name and its file: ``core/_state.py`` is ``tickler.core._state``."""
    files = [*root.glob("*.py")]
    for folder in FOLDERS:
        files.extend((root / folder).rglob("*.py"))
    modules: dict[str, Path] = {}
    for path in files:
        parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_package(name: str, modules: Mapping[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _imports_of(name: str, tree: ast.AST, modules: Mapping[str, Path]) -> Iterator[Import]:
    package = name if _is_package(name, modules) else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                child = f"{base}.{alias.name}"
                yield Import(name, child if child in modules else base, node.lineno)


def _internal(target: str, modules: Mapping[str, Path]) -> str | None:
    """The module of the package that ``target`` names (its nearest enclosing one), if any."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


def import_graph(modules: Mapping[str, Path]) -> list[Import]:
    """Every import from one module of the package to another."""
    edges: list[Import] = []
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for found in _imports_of(name, tree, modules):
            target = _internal(found.target, modules)
            if target is not None and target != name:
                edges.append(Import(name, target, found.line))
    return sorted(set(edges), key=lambda edge: (edge.source, edge.line, edge.target))


def _layer(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FOLDERS else None


def _private_in(name: str) -> bool:
    """True when a part of ``name`` below its layer's package starts with an underscore."""
    below = name.split(".")[2:]
    return any(part.startswith("_") and not part.startswith("__") for part in below)


def layer_breaches(edges: Iterable[Import]) -> list[str]:
    """A layer importing one above it, or a private module of another layer."""
    found = []
    for edge in edges:
        source, target = _layer(edge.source), _layer(edge.target)
        if target is None or source == target:
            continue
        where = f"{edge.source}:{edge.line} imports {edge.target}"
        if source is not None and target in FORBIDDEN_LAYERS.get(source, ()):
            found.append(f"{where}: {source} may not import {target}")
        elif _private_in(edge.target):
            found.append(f"{where}: a private module of {target}, use tickler.{target}")
    return found


def _room(name: str) -> str | None:
    return next((room for room in ROOMS if name == room or name.startswith(room + ".")), None)


def _room_breach(edge: Import) -> str | None:
    source, target = _room(edge.source), _room(edge.target)
    if edge.source in VOCABULARY:
        return "the vocabulary imports nothing of the core"
    if source == target:
        return None
    if source is not None and target is None and edge.target not in VOCABULARY:
        return f"{source} may not import the domain (only {', '.join(sorted(VOCABULARY))})"
    if source is not None and target is not None and target not in ROOMS[source]:
        return f"{source} may not import {target}"
    if target is not None and edge.target != target:
        return f"a private module of {target}, use {target}"
    return None


def room_breaches(edges: Iterable[Import]) -> list[str]:
    """A breach of the core's rooms (the module docstring says them)."""
    found = []
    for edge in edges:
        if _layer(edge.source) == _layer(edge.target) == "core":
            breach = _room_breach(edge)
            if breach is not None:
                found.append(f"{edge.source}:{edge.line} imports {edge.target}: {breach}")
    return found


def _reachable(graph: Mapping[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def cycles(edges: Iterable[Import]) -> list[list[str]]:
    """The groups of more than one module that each reach one another (the
    graph has a few hundred modules: a search from each is quick enough)."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
    reach = {node: _reachable(graph, node) for node in graph}
    groups = {
        frozenset({node} | {other for other in reached if node in reach.get(other, ())})
        for node, reached in reach.items()
        if node in reached
    }
    return sorted(sorted(group) for group in groups)


def problems(root: Path = ROOT) -> list[str]:
    """Every breach of the rules, one line each; empty when the package keeps them."""
    edges = import_graph(module_files(root))
    found = layer_breaches(edges)
    found.extend(room_breaches(edges))
    found.extend("import cycle: " + " <-> ".join(group) for group in cycles(edges))
    return found


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} import rule breach(es)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
