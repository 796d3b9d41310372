"""The layout of the code, held: no class of the layer grows past `MAX_CLASS_LINES`, the storage Protocols speak
no engine's words, the tree repeats itself in few places, and test support lives in its own room (`tests/support/`):
no file imports a test module, no helper lies loose at `tests/`'s root, `bench/` borrows only support.

The first two rules have an allow-list of today's known exceptions, with the reason; a test fails as soon as an entry
is no longer needed, so that the lists only shrink. The third counts the whole tree's pairs against a limit. Import loops among the layer's modules are `test_layer_imports`'
(stricter than an import graph without the imports under `if TYPE_CHECKING:`: a type-only loop is a loop there).
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.duplication import pairs
from tests.unit.layer_imports import LAYER, Import, import_graph, where
from tests.unit.layer_rooms import arrows_up

ROOT = Path(__file__).resolve().parents[2]
STORAGE_PROTOCOLS = LAYER / "model" / "ports.py"

MAX_CLASS_LINES = 300

# Words of a storage engine or of a queue type, which a storage Protocol's parameters must not use: the layer above
# speaks of queues, messages and records; each engine maps them onto its own stripes, partitions, tables or SQL.
ENGINE_WORDS = ("ordered", "fifo", "stripe", "partition", "table", "sql")

# Pairs of places `duplicates` lists over the whole repository (its default of 6 shared lines), at the most (what it
# lists today: most of them known answers, error tables and field lists that only look alike, such as the settings'
# packed_batches flag after two integers, like QueueAttributes').
MAX_DUPLICATE_PAIRS = 15
# Where it is not installed: pairs `tests/support/duplication.py` finds over the whole repository, at the most (what it finds
# today: identical runs only, so not the same pairs; most of them import blocks and CDK constructors' keyword
# signatures, which `duplicates` marks boilerplate). It was 16 while the tree already held 20: machines with
# `duplicates` never ran this branch.
MAX_CHECKER_PAIRS = 19


# --- class sizes -----------------------------------------------------------------------------------------------


def class_sizes(layer: Path = LAYER) -> dict[tuple[str, str], int]:
    """Lines of each class of the layer (nested ones too), by file relative to the layer and class name."""
    sizes = {}
    for path in sorted(layer.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                sizes[(str(path.relative_to(layer)), node.name)] = node.end_lineno - node.lineno + 1
    return sizes


def test_no_class_of_the_layer_is_over_the_limit():
    over = sorted(
        f"{path}: {name}, {lines} lines" for (path, name), lines in class_sizes().items() if lines > MAX_CLASS_LINES
    )
    assert not over, f"classes over {MAX_CLASS_LINES} lines (split them): {over}"


def test_the_class_sizes_are_read_from_each_class():
    sizes = class_sizes()
    assert sizes[("model/messages.py", "Message")] > 20  # a large dataclass: read whole
    assert 0 < sizes[("ground/clock.py", "SystemClock")] < 20


# --- storage Protocols -----------------------------------------------------------------------------------------


def is_protocol(node: ast.ClassDef) -> bool:
    """`class X(Protocol)`, `class X(typing.Protocol)`, `class X(Protocol[T])`."""
    for base in node.bases:
        target = base.value if isinstance(base, ast.Subscript) else base
        if (isinstance(target, ast.Name) and target.id == "Protocol") or (
            isinstance(target, ast.Attribute) and target.attr == "Protocol"
        ):
            return True
    return False


def protocol_parameters(source: str) -> list[tuple[str, str, str]]:
    """(Protocol, method, parameter) for every parameter of every method of the Protocols in `source`."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and is_protocol(node):
            for method in node.body:
                if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
                    a = method.args
                    named = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
                    found += [(node.name, method.name, arg.arg) for arg in named]
    return found


def speaks_of_an_engine(parameter: str) -> bool:
    """A word of the name (between underscores) starts with an engine word: `ordered`, `stripes`, `table_name`,
    `sqlite_path`; not `stable` nor `reordered`."""
    return any(word.startswith(engine) for word in parameter.lower().split("_") for engine in ENGINE_WORDS)


def engine_parameters() -> set[tuple[str, str, str]]:
    return {p for p in protocol_parameters(STORAGE_PROTOCOLS.read_text()) if speaks_of_an_engine(p[2])}


def test_no_storage_protocol_method_takes_an_engine_word():
    found = sorted(engine_parameters())
    assert not found, f"storage Protocol parameters named for an engine or a queue type: {found}"


def test_the_protocol_reading_sees_every_kind_of_parameter():
    source = (
        "from typing import Protocol\nimport typing\n"
        "class A(Protocol):\n    def f(self, stripe: int, /, ordered: bool, *rows, fifo: bool, **sql_args): ...\n"
        "class B(typing.Protocol[T]):\n    async def g(self, stable: int, table_name: str) -> None: ...\n"
        "class C:\n    def h(self, partition: str) -> None: ...\n"  # not a Protocol
    )
    flagged = [p for p in protocol_parameters(source) if speaks_of_an_engine(p[2])]
    assert flagged == [
        ("A", "f", "stripe"),
        ("A", "f", "ordered"),
        ("A", "f", "fifo"),
        ("A", "f", "sql_args"),
        ("B", "g", "table_name"),
    ]


# --- duplication -----------------------------------------------------------------------------------------------


def duplicates_pairs(tool: str) -> list[tuple[str, str]]:
    """The two files of each pair `duplicates` lists over the repository (rows `D1 a.py:10-24 ~ b.py:40-54 ...`)."""
    run = subprocess.run(
        [tool, "--repo", str(ROOT), "--most", "200", "--seconds", "120"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = run.stdout.splitlines()
    cut = [line for line in lines if line.startswith("incomplete:") or re.match(r"\(\+\d+ more pairs\)", line)]
    assert not cut, f"duplicates did not list every pair of the tree: {cut}"
    rows = [re.match(r"D\d+ (\S+):\d+-\d+ ~ (\S+):\d+-\d+", line) for line in lines]
    found = [(row.group(1), row.group(2)) for row in rows if row]
    first = lines[0] if lines else ""
    counted = re.match(r"(\d+) pairs? of places", first)
    assert first.startswith("no duplicates") or (counted and int(counted.group(1)) == len(found)), run.stdout[:500]
    return found


def test_the_tree_repeats_itself_in_few_places():
    """The whole tree, with the `duplicates` command where it is installed; else (CI) with the small checker of this
    repository, held to its own count: never skipped."""
    tool = shutil.which("duplicates")
    if tool is not None:
        found = duplicates_pairs(tool)
        limit, how = MAX_DUPLICATE_PAIRS, "`duplicates --most 200`"
    else:
        found = [(pair.a.path, pair.b.path) for pair in pairs(ROOT)]
        limit, how = MAX_CHECKER_PAIRS, "tests/support/duplication.py"
    listed = "".join(f"\n  {a} ~ {b}" for a, b in found)
    assert len(found) <= limit, f"{how}: {len(found)} pairs (at most {limit}); make one piece of code serve:{listed}"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    run = ["one = 1", "two = 2", "three = 3", "four = 4", "five = 5", "six = 6"]
    (tmp_path / "bench").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "bench" / "a.py").write_text("\n".join(["x = 0", *run, "y = 0"]) + "\n")
    # The same run indented, with blank and comment lines between its lines: still the same run.
    spaced = [f"    {line}\n\n    # note" for line in run]
    (tmp_path / "tests" / "b.py").write_text("def f():\n" + "\n".join(spaced) + "\n")
    (tmp_path / "tests" / "c.py").write_text("\n".join(run[:5]) + "\n")  # five lines: too few
    (tmp_path / "docs" / "d.py").write_text("\n".join(run) + "\n")  # not a folder read
    (tmp_path / "bench" / "e.py").write_text("\n".join([*run, *run]) + "\n")  # twice in one file
    (tmp_path / "bench" / "f.txt").write_text("\n".join(run) + "\n")  # not Python
    return tmp_path


def test_the_checker_pairs_files_sharing_six_lines_in_the_folders_read(tree: Path):
    # Not a git checkout: every file on disk is read.
    found = [(str(pair.a), str(pair.b)) for pair in pairs(tree)]
    assert found == [
        ("bench/a.py:2-7", "bench/e.py:1-6"),
        ("bench/a.py:2-7", "tests/b.py:2-17"),
        ("bench/e.py:1-6", "bench/e.py:7-12"),
        ("bench/e.py:1-6", "tests/b.py:2-17"),
    ]


def test_the_checker_reads_only_the_files_git_tracks(tree: Path):
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "add", "bench/a.py", "tests/b.py", "docs/d.py"], check=True)
    assert [(str(pair.a), str(pair.b)) for pair in pairs(tree)] == [("bench/a.py:2-7", "tests/b.py:2-17")]


def test_a_run_found_in_more_than_eight_places_is_too_common_to_pair(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    run = "\n".join(f"line_{n} = {n}" for n in range(6)) + "\n"
    for n in range(9):
        (tmp_path / "tests" / f"t{n}.py").write_text(run)
    assert pairs(tmp_path) == []
    (tmp_path / "tests" / "t8.py").unlink()
    assert len(pairs(tmp_path)) == 28  # eight places: every two of them


# --- the DynamoDB engine's rooms -------------------------------------------------------------------------------

ENGINE = "mnsd.storage.dynamodb"
ENGINE_FOLDER = LAYER / "storage" / "dynamodb"
# The engine's rooms, grouped by what they store, the ground floor first: each imports only rooms before it in this
# list, and none imports a module loose at the engine's root (the engine's assembly, `__init__`, and `retries`, the
# client every call goes through). docs/layout.md draws them.
ENGINE_ROOMS = (
    "items",  # the items: PynamoDB models, the message table's layout, packs, bodies, dead letters, conditions
    "placement",  # where a queue's messages lie: placement, stripes' growth, queue records, the placer
    "tables",  # the meta table's records, the operation log, topic messages, stream records as changes
    "standard",  # a standard queue's messages: striped reads and spans, counts, the ready index
    "fifo",  # a FIFO queue's messages: groups, their directory, writes, reads, rewinds, packs
)
MAX_ENGINE_ROOT_MODULES = 8  # modules loose at the engine's root, `__init__.py` counted


def test_the_dynamodb_engine_keeps_few_modules_loose_at_its_root():
    loose = sorted(path.name for path in ENGINE_FOLDER.glob("*.py"))
    assert len(loose) <= MAX_ENGINE_ROOT_MODULES, f"{len(loose)} modules loose at the engine's root: {loose}"


def test_the_dynamodb_engine_stands_in_the_declared_rooms():
    folders = {path.name for path in ENGINE_FOLDER.iterdir() if (path / "__init__.py").is_file()}
    assert folders == set(ENGINE_ROOMS), "declare each room of the engine in ENGINE_ROOMS, in its floor's place"


def test_each_room_of_the_dynamodb_engine_imports_only_the_rooms_below_it():
    up = arrows_up(import_graph(), ENGINE, ENGINE_ROOMS)
    assert not up, "arrows back up (a room imports only the rooms before it in ENGINE_ROOMS):\n" + "".join(
        f"{where(i)}\n" for i in up
    )


def test_an_arrow_up_is_an_import_of_a_higher_room_or_of_the_root():
    graph = {
        "p": [Import("p", "p.low.a", 1)],  # the root assembles the rooms: down
        "p.low": [],
        "p.low.a": [Import("p.low.a", "p.high.b", 3), Import("p.low.a", "p.low", 4)],  # up; its own room
        "p.high.b": [Import("p.high.b", "p.low.a", 2), Import("p.high.b", "p.tool", 5)],  # down; up to the root
        "p.tool": [Import("p.tool", "p.low", 1)],
        "q": [Import("q", "p.high.b", 1)],  # outside the package: not its arrow
    }
    assert arrows_up(graph, "p", ("low", "high")) == [Import("p.high.b", "p.tool", 5), Import("p.low.a", "p.high.b", 3)]


# --- test support ----------------------------------------------------------------------------------------------

# Test modules (`test_*.py`) that import others on purpose, to run their tests again, with the reason. Nothing else
# imports a test module: what tests share is in `tests/support/` (or beside the tests of one folder, in a module
# not named `test_*`).
RERUNS = {
    # The integration cases run again with the services over the in-memory DynamoDB double instead of moto.
    "tests/integration/test_simulated_dynamodb.py": {
        "tests.integration.test_messages",
        "tests.integration.test_queues",
    },
}
# What may lie at `tests/`'s root: the package and its fixtures, and the folders.
TESTS_ROOT_FILES = {"__init__.py", "conftest.py"}


def python_files(root: Path) -> list[Path]:
    """The Python files of the repository (git's, else every one on disk outside the environments)."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "*.py"], capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        return [root / line for line in listed.stdout.splitlines() if (root / line).exists()]
    skipped = {".venv", "node_modules", "cdk.out", ".git"}
    return sorted(path for path in root.rglob("*.py") if not skipped & set(path.relative_to(root).parts))


def imported_modules(source: str) -> set[str]:
    """Every module an import names: `import a.b`, `from a.b import c` (a.b, and a.b.c, which may be a module)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def owning_test_module(module: str) -> str | None:
    """The test module a module name is or lies in (`tests.unit.test_a.helper` -> `tests.unit.test_a`), else None."""
    parts = module.split(".")
    if parts[0] != "tests":
        return None
    for n, part in enumerate(parts):
        if part.startswith("test_"):
            return ".".join(parts[: n + 1])
    return None


def imports_of_test_modules(root: Path = ROOT) -> dict[str, set[str]]:
    """File (relative to `root`) -> the test modules it imports."""
    imports = {}
    for path in python_files(root):
        found = {owner for module in imported_modules(path.read_text()) if (owner := owning_test_module(module))}
        if found:
            imports[str(path.relative_to(root))] = found
    return imports


def loose_helpers(root: Path = ROOT) -> list[str]:
    return sorted(path.name for path in (root / "tests").glob("*.py") if path.name not in TESTS_ROOT_FILES)


def bench_borrowings(root: Path = ROOT) -> dict[str, set[str]]:
    """bench file -> the modules of `tests` it imports from outside `tests.support`."""
    borrowed = {}
    for path in sorted((root / "bench").rglob("*.py")):
        found = {
            module
            for module in imported_modules(path.read_text())
            if module.split(".")[0] == "tests" and not module.startswith("tests.support")
        }
        found = {module for module in found if not any(module.startswith(f"{other}.") for other in found)}
        if found:
            borrowed[str(path.relative_to(root))] = found
    return borrowed


def test_no_file_imports_a_test_module_save_the_reruns():
    imports = imports_of_test_modules()
    unexpected = {path: modules for path, modules in imports.items() if modules != RERUNS.get(path)}
    assert not unexpected, f"test modules imported (move what they share to tests/support/): {unexpected}"
    stale = sorted(set(RERUNS) - set(imports))
    assert not stale, f"RERUNS lists files that no longer import test modules (remove them): {stale}"


def test_no_helper_lies_loose_at_the_root_of_tests():
    assert loose_helpers() == [], "helpers belong in tests/support/ (or beside the tests of one folder)"


def test_bench_borrows_only_test_support():
    assert bench_borrowings() == {}, "bench/ imports what tests share from tests/support/, never a test's module"


def test_the_import_reading_finds_each_way_of_importing_a_test_module(tmp_path: Path):
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "bench").mkdir()
    (tmp_path / "tests" / "support.py").write_text("x = 1\n")
    (tmp_path / "tests" / "conftest.py").write_text("import pytest\n")
    (tmp_path / "tests" / "unit" / "test_a.py").write_text("from tests.unit.test_b import helper\n")
    (tmp_path / "tests" / "unit" / "test_c.py").write_text("from tests.unit import test_b\nimport tests.unit.test_d\n")
    (tmp_path / "tests" / "unit" / "helpers.py").write_text("from tests.support import x\nfrom .test_b import y\n")
    (tmp_path / "bench" / "run.py").write_text("from tests.support.clocks import C\nfrom tests.unit.helpers import h\n")
    assert imports_of_test_modules(tmp_path) == {
        "tests/unit/test_a.py": {"tests.unit.test_b"},
        "tests/unit/test_c.py": {"tests.unit.test_b", "tests.unit.test_d"},
    }
    assert loose_helpers(tmp_path) == ["support.py"]
    assert bench_borrowings(tmp_path) == {"bench/run.py": {"tests.unit.helpers"}}
