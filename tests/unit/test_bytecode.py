"""The test files' rewritten code written before the workers start (`tests.support.bytecode`) is pytest's own: read
back for the source it was made from, its asserts explained, and made again when the source changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bytecode import ROOT, cached, rewrite, rewritten_files


def test_a_test_file_is_rewritten_once_and_again_when_it_changes(pytestconfig: pytest.Config, tmp_path: Path) -> None:
    path = tmp_path / "test_sample.py"
    path.write_text("def test_sample():\n    found = [1, 2]\n    assert found == [1, 3]\n")
    assert cached(pytestconfig, path) is None

    assert rewrite(pytestconfig, [path]) == 1
    assert rewrite(pytestconfig, [path]) == 0  # already there, made from this source
    code = cached(pytestconfig, path)
    assert code is not None
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(AssertionError) as raised:
        namespace["test_sample"]()
    assert "[1, 2] == [1, 3]" in str(raised.value)  # pytest's explanation: the asserts were rewritten

    path.write_text("def test_sample():\n    assert True\n")
    assert cached(pytestconfig, path) is None  # stale: never read for another source
    assert rewrite(pytestconfig, [path]) == 1
    assert cached(pytestconfig, path) is not None


def test_the_files_rewritten_are_the_test_files_and_conftests(pytestconfig: pytest.Config) -> None:
    files = {str(path.relative_to(ROOT)) for path in rewritten_files(pytestconfig)}
    assert {"tests/conftest.py", "tests/unit/test_bytecode.py", "tests/infra/test_stack.py"} <= files
    assert not any(name.startswith("tests/support/") for name in files)
    assert all(name.rsplit("/", 1)[-1].startswith("test_") or name.endswith("/conftest.py") for name in files)
