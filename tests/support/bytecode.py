"""The suites' bytecode written once, before the parallel workers start.

On a fresh clone no module has its bytecode yet: each worker of `make test` would compile every module of ours it
imports and rewrite the asserts of every test file (pytest keeps a test file's rewritten code beside it, checked
against the source's hash), all four at once, none finding what another is still writing: about 7 s of CPU each
(docs/testing.md). The controller writes both once (`write`); the workers read them. What a worker runs is unchanged:
pytest's own rewrite, read back only if the source is the one it was made from, else made again.
"""

from __future__ import annotations

import compileall
import sys
from pathlib import Path
from types import CodeType

import pytest
from _pytest.assertion.rewrite import (
    PYC_TAIL,
    _read_pyc,
    _rewrite_test,
    _write_pyc,
    assertstate_key,
    get_cache_dir,
    try_makedirs,
)
from _pytest.pathlib import fnmatch_ex

ROOT = Path(__file__).resolve().parents[2]
# Our code, as the tests import it (the layer's package from its own folder).
SOURCES = ("layers/mnsd/python", "functions", "local_runtime", "wait_tier", "infra", "console", "glue_jobs", "admin")
SOURCES += ("migrate", "mnsclient", "bench", "tests")


def rewritten_files(config: pytest.Config) -> list[Path]:
    """The files pytest rewrites the asserts of: the test files (`python_files`) and the conftests."""
    patterns = config.getini("python_files")
    return [
        path
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path.name == "conftest.py" or any(fnmatch_ex(pattern, path) for pattern in patterns)
    ]


def write(config: pytest.Config) -> int:
    """Compiles our modules and rewrites the test files as pytest would, where their cached forms are missing or stale;
    the number of test files rewritten."""
    if sys.dont_write_bytecode:
        return 0
    for source in SOURCES:
        compileall.compile_dir(ROOT / source, quiet=1)
    return rewrite(config, rewritten_files(config))


def rewrite(config: pytest.Config, paths: list[Path]) -> int:
    """Writes each file's rewritten code where pytest reads it, unless what is there was made from the same source;
    the number written."""
    state = config.stash.get(assertstate_key, None)
    if state is None:  # asserts not rewritten (`--assert=plain`)
        return 0
    written = 0
    for path in paths:
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc, state.trace) is None and try_makedirs(cache):
            source_hash, code = _rewrite_test(path, config)
            _write_pyc(state, code, source_hash, pyc)
            written += 1
    return written


def cached(config: pytest.Config, path: Path) -> CodeType | None:
    """The rewritten code pytest would read for `path`, if it is there and made from its source."""
    pyc = get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)
    return _read_pyc(path, pyc, config.stash[assertstate_key].trace)
