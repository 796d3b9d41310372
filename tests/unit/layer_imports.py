"""The layer's import graph, read from its source with `ast` (nothing is imported): for the layering tests.

Every import counts wherever it stands: at the top, inside a function, under `if TYPE_CHECKING:`.
`import a.b` and `from a import b` name the module `a.b` when `a/b.py` (or `a/b/`) is in the layer, else the
module `a` (`b` is then a name defined in `a`); relative imports are resolved against the importing module.
An edge goes to the module named, not to the packages above it: `from mnsd.storage.sqlite import x` is an
edge to `mnsd.storage.sqlite` (its `__init__.py`), not to `mnsd.storage`.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import mnsd

LAYER = Path(mnsd.__file__).parent
ROOT_PACKAGE = "mnsd"


@dataclass(frozen=True)
class Import:
    """One import of a layer module by another: `line` is where it stands in `importer`."""

    importer: str
    imported: str
    line: int


def module_name(path: Path, layer: Path = LAYER) -> str:
    """`mnsd.storage.sqlite` for `<layer>/storage/sqlite/__init__.py`, `mnsd.fanout` for `<layer>/fanout.py`."""
    parts = path.relative_to(layer).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((ROOT_PACKAGE, *parts))


def module_path(name: str, layer: Path = LAYER) -> Path:
    """The file of a layer module, relative to the layer's parent (`mnsd/model/ports.py`)."""
    parts = name.split(".")[1:]
    package = layer.joinpath(*parts)
    path = package / "__init__.py" if package.is_dir() else package.with_suffix(".py")
    return path.relative_to(layer.parent)


def layer_modules(layer: Path = LAYER) -> dict[str, Path]:
    """Every module of the layer, in every folder, by its dotted name."""
    return {module_name(path, layer): path for path in sorted(layer.rglob("*.py"))}


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    """The module a `from ... import` names, its relative dots resolved against `importer`."""
    if node.level == 0:
        return node.module or ""
    package = importer.split(".") if is_package else importer.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _targets(tree: ast.AST, importer: str, is_package: bool, modules: set[str]) -> Iterator[tuple[str, int]]:
    """(layer module, line) for every import in `tree`, at any depth."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, importer, is_package)
            for alias in node.names:
                # `from a import b`: the module a.b if there is one, else a name defined in `a`.
                submodule = f"{module}.{alias.name}"
                target = submodule if submodule in modules else module
                if target in modules:
                    yield target, node.lineno


def imports_of(path: Path, modules: set[str], layer: Path = LAYER) -> list[Import]:
    """The layer modules the file at `path` imports (each once, at its first line), itself left out."""
    importer = module_name(path, layer)
    found: dict[str, int] = {}
    for imported, line in _targets(ast.parse(path.read_text()), importer, path.name == "__init__.py", modules):
        if imported != importer:
            found[imported] = min(line, found.get(imported, line))
    return [Import(importer, imported, line) for imported, line in sorted(found.items(), key=lambda i: (i[1], i[0]))]


@functools.cache
def import_graph(layer: Path = LAYER) -> dict[str, list[Import]]:
    """Each layer module with the layer modules it imports."""
    modules = layer_modules(layer)
    return {name: imports_of(path, set(modules), layer) for name, path in modules.items()}


def reachable(graph: dict[str, list[Import]], start: str) -> set[str]:
    """The modules `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = [i.imported for i in graph[start]]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(i.imported for i in graph[module])
    return seen


def loops(graph: dict[str, list[Import]]) -> list[list[str]]:
    """The graph's import loops: its strongly connected components of more than one module (the modules that
    reach each other through imports), each sorted, the list sorted."""
    reach = {module: reachable(graph, module) for module in graph}
    components = {tuple(sorted({m} | {n for n in reach[m] if m in reach[n]})) for m in graph if m in reach[m]}
    return sorted(list(c) for c in components)


def edges_within(graph: dict[str, list[Import]], modules: list[str]) -> list[Import]:
    """The imports that tie `modules` together (those of one loop)."""
    members = set(modules)
    return [i for m in modules for i in graph[m] if i.imported in members]


def foreign_imports(graph: dict[str, list[Import]], package: str) -> list[Import]:
    """The imports of `package` (or of a module inside it) by modules outside it."""

    def inside(name: str) -> bool:
        return name == package or name.startswith(package + ".")

    return [i for m, imports in sorted(graph.items()) if not inside(m) for i in imports if inside(i.imported)]


def where(i: Import) -> str:
    """`mnsd/log/oplog.py:14 imports mnsd.storage.dynamodb.items.layout`, for failure messages."""
    return f"{module_path(i.importer)}:{i.line} imports {i.imported}"
