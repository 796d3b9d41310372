"""The domain never sees the wire format, in any folder of the layer: only the request path and push's delivery
import `mnsd.wire`, and the XML codec is used only inside `wire/` and by the request path's `call`."""

from __future__ import annotations

import ast

from mnsd.jsonwire import requests as json_requests
from mnsd.wire import requests as xml_requests
from tests.unit.layer_imports import LAYER, Import, import_graph, where

# Who may import the wire format, and why: a module, or a package with every module in it.
WIRE_USERS = {
    "mnsd.wire": "the format itself",
    "mnsd.operations": "each operation reads its request and writes its answer",
    "mnsd.calls.call": "parses the request body, writes the response",
    "mnsd.request.door": "writes errors as MNS answers them",
    "mnsd.calls.planes": "picks the data plane (XML or JSON) a message call is on",
    "mnsd.push.delivery": "a push carries a notification (XML, JSON or the body) encoded by wire.notifications",
    "mnsd.push.dead_letters": "a push given up goes to the dead-letter queue as the notification it would have been",
    "mnsd.push.cloud_delivery": "a Lambda function's event and an EventBridge event carry the notification (wire's)",
}
# Who may use the codec itself (XML in and out); everyone else goes through `wire.requests` / `wire.responses`.
CODEC_USERS = {
    "mnsd.wire": "the codec's home",
    "mnsd.calls.call": "parses the request body, encodes the response element",
}


# Who may import the JSON plane (`mnsd.jsonwire`, SMQProxy 2026-04-09).
JSON_USERS = {
    "mnsd.jsonwire": "the format itself",
    "mnsd.calls.planes": "picks the data plane (XML or JSON) a message call is on",
    "mnsd.request.door": "writes errors as JSON on the JSON plane",
}


def within(module: str, packages: dict[str, str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def imports_of(prefix: str) -> list[Import]:
    return [i for imports in import_graph().values() for i in imports if within(i.imported, {prefix: ""})]


def test_the_domain_does_not_import_the_wire_format():
    outside = [i for i in imports_of("mnsd.wire") if not within(i.importer, WIRE_USERS)]
    assert not outside, "\n" + "".join(f"{where(i)}\n" for i in outside)


def test_the_domain_does_not_import_the_json_plane():
    outside = [i for i in imports_of("mnsd.jsonwire") if not within(i.importer, JSON_USERS)]
    assert not outside, "\n" + "".join(f"{where(i)}\n" for i in outside)


def test_the_json_plane_does_not_import_the_xml_one():
    """What both planes read (the query's parameters, a batch's limits) stands below both (`mnsd.calls.queries`,
    `mnsd.model.inputs`), so the JSON plane reads no XML module for it."""
    crossing = [i for i in imports_of("mnsd.wire") if within(i.importer, {"mnsd.jsonwire": ""})]
    assert not crossing, "\n" + "".join(f"{where(i)}\n" for i in crossing)


# What each data plane reads alike: it lives in neither plane's package.
PLANE_NEUTRAL = ("wait_seconds", "batch_size", "visibility_change", "counted_handles")


def functions_defined(folder: str) -> dict[str, str]:
    """The top-level functions of each module of a folder of the layer, by name: the module's file."""
    found = {}
    for path in sorted((LAYER / folder).rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                found[node.name] = str(path.relative_to(LAYER))
    return found


def test_the_plane_neutral_readers_live_in_neither_plane():
    defined = {**functions_defined("wire"), **functions_defined("jsonwire")}
    inside = sorted(f"{name} in {defined[name]}" for name in PLANE_NEUTRAL if name in defined)
    assert not inside, inside


def test_the_json_plane_names_its_bodies_as_the_xml_roots():
    assert json_requests.BATCH_VISIBILITY == xml_requests.BATCH_VISIBILITY


def test_only_wire_and_the_request_path_use_the_xml_codec():
    outside = [i for i in imports_of("mnsd.wire.codec") if not within(i.importer, CODEC_USERS)]
    assert not outside, "\n" + "".join(f"{where(i)}\n" for i in outside)


def test_the_check_sees_wire_imports_from_outside_wire_and_modules_in_subfolders():
    assert any(not within(i.importer, {"mnsd.wire": ""}) for i in imports_of("mnsd.wire"))
    assert any(i.importer.count(".") >= 2 for i in imports_of("mnsd.wire"))  # mnsd.operations.send_message, ...
    assert any(m.count(".") >= 3 for m in import_graph())  # mnsd.storage.sqlite.messages, ...


def test_the_allowed_users_exist():
    users = {**WIRE_USERS, **CODEC_USERS, **JSON_USERS}
    assert all(any(within(m, {user: ""}) for m in import_graph()) for user in users)
