"""The layer's rooms and the imports between them, drawn as a Mermaid graph: `python -m tests.unit.layer_rooms`.

A room is a folder directly under the layer (`model/`, `storage/`, ...) or a module at its root (`services.py`).
The floors put each room above every room it imports; a pair of rooms that import each other (directly or through
others) has no such order: `room_loops` lists them, and the structure test holds the list empty.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from tests.unit.layer_imports import LAYER, Import, import_graph


def room_of(module: str) -> str:
    """`model` for `mnsd.model.ports`, `services` for `mnsd.services`, `mnsd` for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def room_graph(graph: dict[str, list[Import]] | None = None) -> dict[str, set[str]]:
    """Each room with the rooms its modules import (itself left out)."""
    graph = import_graph() if graph is None else graph
    rooms: dict[str, set[str]] = {}
    for module, imports in graph.items():
        room = room_of(module)
        rooms.setdefault(room, set()).update(room_of(i.imported) for i in imports if room_of(i.imported) != room)
    return rooms


def _reach(rooms: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(rooms[start])
    while todo:
        room = todo.pop()
        if room not in seen:
            seen.add(room)
            todo.extend(rooms.get(room, ()))
    return seen


def room_loops(rooms: dict[str, set[str]]) -> list[list[str]]:
    """Rooms that import each other, through any number of others: each loop sorted, the list sorted."""
    reach = {room: _reach(rooms, room) for room in rooms}
    loops = {tuple(sorted({r} | {o for o in reach[r] if r in reach.get(o, ())})) for r in rooms if r in reach[r]}
    return sorted(list(loop) for loop in loops)


def floors(rooms: dict[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 1 for a room that imports no other, else one above the highest it imports (rooms in a
    loop share the floor the loop's first member is given)."""
    floor: dict[str, int] = {}

    def of(room: str, path: tuple[str, ...]) -> int:
        if room not in floor:
            below = [of(other, (*path, room)) for other in rooms.get(room, ()) if other not in path]
            floor[room] = 1 + max(below, default=0)
        return floor[room]

    for room in sorted(rooms):
        of(room, ())
    return floor


def arrows_up(graph: dict[str, list[Import]], package: str, order: tuple[str, ...]) -> list[Import]:
    """The imports inside `package` that run back up: from a module of one of its rooms (`order`: its subpackages,
    the ground floor first) to a module of a room declared above it, or to a module loose at `package`'s root (those
    stand above every room: the package's assembly)."""

    def inside(module: str) -> bool:
        return module == package or module.startswith(package + ".")

    def floor(module: str) -> int:
        room = module.removeprefix(package).lstrip(".").split(".")[0]
        return order.index(room) if room in order else len(order)

    return [
        i
        for module, imports in sorted(graph.items())
        if inside(module)
        for i in imports
        if inside(i.imported) and floor(i.imported) > floor(module)
    ]


def mermaid(rooms: dict[str, set[str]]) -> Iterable[str]:
    """The rooms as a Mermaid flowchart, top floor first, an arrow per import between rooms."""
    floor = floors(rooms)
    yield "flowchart TB"
    for level in sorted(set(floor.values()), reverse=True):
        names = sorted(room for room in rooms if floor[room] == level)
        yield f"  subgraph floor{level}[floor {level}]"
        yield from (f"    {name}" for name in names)
        yield "  end"
    for room in sorted(rooms):
        yield from (f"  {room} --> {other}" for other in sorted(rooms[room]))


if __name__ == "__main__":
    graph = room_graph()
    print(f"%% {len(graph)} rooms, {sum(map(len, graph.values()))} arrows, loops: {room_loops(graph)} ({LAYER.name})")
    sys.stdout.writelines(line + "\n" for line in mermaid(graph))
