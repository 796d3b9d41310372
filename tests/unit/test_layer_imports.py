"""The layer's imports, in every folder: no import loop, and each storage engine imported only from inside it.

Read from the source with `ast` (`layer_imports`): an import counts wherever it stands, inside a function or
under `if TYPE_CHECKING:` too. A type-only loop is still a loop: its modules cannot be read, moved or tested
one without the others.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.layer_imports import Import, edges_within, foreign_imports, import_graph, loops, where
from tests.unit.layer_rooms import floors, room_graph, room_loops

ENGINES = ("mnsd.storage.dynamodb", "mnsd.storage.sqlite")
# The modules outside an engine that may import it, each with its reason. Nothing else: the rest of the layer
# works with the storage Protocols (`mnsd.model.ports`) and engine-neutral records.
ENGINE_IMPORTERS = {
    "mnsd.services": "builds the services' storage: the one place that picks an engine",
}


def test_the_layer_has_no_import_loop():
    graph = import_graph()
    found = [
        f"loop of {len(loop)} modules: {', '.join(loop)}\n"
        + "".join(f"  {where(i)}\n" for i in edges_within(graph, loop))
        for loop in loops(graph)
    ]
    assert not found, "\n" + "".join(found)


def test_an_engine_is_imported_only_from_inside_it_and_by_the_services_that_build_storage():
    graph = import_graph()
    foreign = [i for engine in ENGINES for i in foreign_imports(graph, engine) if i.importer not in ENGINE_IMPORTERS]
    assert not foreign, "\n" + "".join(f"{where(i)}\n" for i in foreign)


def test_no_two_rooms_of_the_layer_import_each_other():
    """A room (a folder under the layer, or a module at its root) stands above every room it imports: two rooms that
    reach each other through imports would put an arrow running back up (`python -m tests.unit.layer_rooms` draws
    the rooms, docs/layout.md)."""
    assert room_loops(room_graph()) == []


def test_the_allowed_engine_importers_exist():
    assert set(ENGINE_IMPORTERS) <= set(import_graph())


# The checks themselves, on a small layer written for them.
LAYER = {
    "__init__.py": "",
    "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mnsd.pkg.b import B\n",
    "pkg/__init__.py": "",
    "pkg/b.py": "class B:\n    def f(self):\n        from ..a import x\n",  # relative, in a function
    "pkg/c.py": "from . import b\nfrom mnsd.pkg import d\n",  # submodules named by `from package import`
    "pkg/d.py": "import os\nimport mnsd.engine.store\n",
    "engine/__init__.py": "def build():\n    from .store import Store\n",
    "engine/store.py": "from mnsd.engine import build\n",  # the engine's own package and its module: a loop
    "top.py": "import mnsd.pkg.c\nfrom mnsd.engine import build\n",
}


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    root = tmp_path / "mnsd"
    for name, text in LAYER.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_every_import_is_seen_in_every_folder(layer):
    graph = import_graph(layer)
    assert {m: sorted(i.imported for i in imports) for m, imports in graph.items() if imports} == {
        "mnsd.a": ["mnsd.pkg.b"],
        "mnsd.pkg.b": ["mnsd.a"],
        "mnsd.pkg.c": ["mnsd.pkg.b", "mnsd.pkg.d"],
        "mnsd.pkg.d": ["mnsd.engine.store"],
        "mnsd.engine": ["mnsd.engine.store"],
        "mnsd.engine.store": ["mnsd.engine"],
        "mnsd.top": ["mnsd.engine", "mnsd.pkg.c"],
    }


def test_rooms_that_reach_each_other_are_a_loop_and_the_others_stand_in_floors(layer):
    rooms = room_graph(import_graph(layer))
    assert rooms == {"mnsd": set(), "a": {"pkg"}, "pkg": {"a", "engine"}, "engine": set(), "top": {"pkg", "engine"}}
    assert room_loops(rooms) == [["a", "pkg"]]
    assert room_loops({"top": {"pkg"}, "pkg": {"engine"}, "engine": set()}) == []
    assert floors({"top": {"pkg"}, "pkg": {"engine"}, "engine": set()}) == {"engine": 1, "pkg": 2, "top": 3}


def test_a_loop_through_a_type_only_or_a_function_import_is_found(layer):
    assert loops(import_graph(layer)) == [["mnsd.a", "mnsd.pkg.b"], ["mnsd.engine", "mnsd.engine.store"]]


def test_imports_of_a_package_from_outside_it_are_found_with_their_lines(layer):
    assert foreign_imports(import_graph(layer), "mnsd.engine") == [
        Import("mnsd.pkg.d", "mnsd.engine.store", 2),
        Import("mnsd.top", "mnsd.engine", 2),
    ]
