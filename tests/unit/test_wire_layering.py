"""The domain never sees the wire format: models, services and storage import neither the codec nor `mnsd.wire`."""

import ast
from pathlib import Path

import pytest

import mnsd

LAYER = Path(mnsd.__file__).parent
DOMAIN = ["queue_model.py", "topic_model.py", "queue_service.py", "topic_service.py", "accounts.py"]
DOMAIN += [str(p.relative_to(LAYER)) for p in sorted((LAYER / "storage").glob("*.py"))]
WIRE = ("mnsd.wire", "mnsd.xmlcodec")


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("module", DOMAIN)
def test_domain_module_does_not_import_the_wire_format(module):
    wire = {name for name in imported_modules(LAYER / module) if name.startswith(WIRE)}
    assert wire == set()


def test_the_check_sees_a_wire_import():
    assert "mnsd.wire.codec" in imported_modules(LAYER / "wire" / "requests.py")
