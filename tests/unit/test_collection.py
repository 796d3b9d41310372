"""Any two test files of different folders collect together, in either order.

Each folder is a package (`tests.<folder>`) and every helper is imported by that name, so no folder's
`conftest.py` or helper shadows another's and no file depends on what an earlier one put on the path: the
static checks below hold that for every file, hence for any combination. The collections show it: the pair
that once failed (an e2e file, then an integration one), in both orders, and one file of every folder at once,
forward and backward. Each collection runs in a child forked from an interpreter that has imported pytest and
what the files import from outside `tests` (the CDK takes seconds to import), so it starts with none of the
tests' own modules, as a fresh `pytest a b` would.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"

# Forks one child per run (files joined by commas); a child prints nothing and exits with pytest's status (0: collected).
COLLECT = """
import os, sys
import importlib, pytest
preload, runs = sys.argv[1].split(","), sys.argv[2:]
for name in preload:
    importlib.import_module(name)
failed = []
for files in runs:
    pid = os.fork()
    if pid == 0:
        out = os.open(os.devnull, os.O_WRONLY)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os._exit(int(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *files.split(",")])))
    if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0:
        failed.append(files)
print("\\n".join(failed))
"""


def folders() -> list[Path]:
    return sorted(p for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py")))


def one_file_of_each_folder() -> list[str]:
    """Of each folder, its first test file that imports a helper of the tests (`tests.*`), else its first."""
    chosen = []
    for folder in folders():
        files = sorted(folder.glob("test_*.py"))
        helped = [f for f in files if "from tests." in f.read_text()]
        chosen.append(str((helped or files)[0].relative_to(ROOT)))
    return chosen


def imported(path: Path) -> list[tuple[str, int]]:
    """The modules `path` imports at its top level or below (`from a.b import c` names `a.b`), with their lines."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return found


def outside_imports(path: Path) -> set[str]:
    return {name for name, _ in imported(path) if name.split(".")[0] not in ("tests", "__future__")}


def test_every_folder_of_tests_is_a_package():
    assert (TESTS / "__init__.py").exists()
    assert [f.name for f in folders() if not (f / "__init__.py").exists()] == []


def test_test_files_of_different_folders_collect_together_in_either_order():
    files = one_file_of_each_folder()
    assert len(files) >= 9
    pair = ["tests/e2e/test_e2e_fifo.py", "tests/integration/test_queues.py"]
    runs = [",".join(pair), ",".join(pair[::-1]), ",".join(files), ",".join(files[::-1])]
    preload = ",".join(sorted(set().union(*(outside_imports(ROOT / f) for f in files + pair))))
    run = subprocess.run(
        [sys.executable, "-c", COLLECT, preload, *runs], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [], "these files do not collect together"


def local_modules() -> set[str]:
    """The names of the tests' own modules (`signers`, `conftest`, `test_push`, ...)."""
    return {p.stem for p in TESTS.rglob("*.py")} - {"__init__"}


def test_the_tests_import_their_helpers_by_package_name_and_no_conftest():
    """A bare `from signers import ...` works only when some earlier file put `tests/` on the path; a conftest is
    pytest's to load (its fixtures), not a module to import helpers from."""
    own = local_modules()
    bare, from_conftest = [], []
    for path in TESTS.rglob("*.py"):
        for name, line in imported(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if name.split(".")[0] in own:
                bare.append(where)
            if name.split(".")[-1] == "conftest":
                from_conftest.append(where)
    assert bare == [] and from_conftest == []
