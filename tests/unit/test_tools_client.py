"""The tools speak MNS one way: every request they send to an MNS endpoint is built, signed and sent by the client
package (`mnsclient/`); no other module of the tools opens a connection, signs, or imports another tool."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = "mnsclient"
# The tools that call an MNS endpoint, besides the client itself.
TOOLS = ("migrate", "admin", "local_runtime/analytics.py")
# What sends an HTTP request, and what signs one.
TRANSPORTS = ("urllib.request", "http.client", "requests", "urllib3", "httpx", "aiohttp")
SIGNERS = ("hmac", "mnsd.access.authentication", "mnsd.access.signature_rpc", "mnsd.access.signature_v4")


def modules(place: str) -> list[Path]:
    path = ROOT / place
    return [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))


def imported(path: Path) -> set[str]:
    """The modules a file imports (`from a.b import c` counts as `a.b` and `a.b.c`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def under(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def uses(place: str, packages: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path in modules(place)
        for name in imported(path)
        if under(name, packages)
    )


def test_no_tool_sends_or_signs_a_request_but_the_client():
    found = [use for tool in TOOLS for use in uses(tool, TRANSPORTS + SIGNERS)]
    assert not found, "requests built outside mnsclient/ (use its clients):\n" + "\n".join(found)


def test_no_tool_defines_a_signer():
    found = sorted(
        f"{path.relative_to(ROOT)}: {node.name}"
        for tool in TOOLS
        for path in modules(tool)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.lower().startswith("sign")
    )
    assert not found, found


def test_admin_and_migrate_import_neither_each_other():
    assert not uses("admin", ("migrate",))
    assert not uses("migrate", ("admin",))


def test_the_client_stands_below_the_tools():
    assert not uses(CLIENT, ("migrate", "admin", "local_runtime"))


def test_the_check_sees_the_clients_own_transport_and_signatures():
    found = uses(CLIENT, TRANSPORTS + SIGNERS)
    assert any(": http.client" in use for use in found)
    assert any("mnsd.access.authentication" in use for use in found)
    assert any("mnsd.access.signature_rpc" in use for use in found)
