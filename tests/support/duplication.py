"""A small duplicate-code checker for the structure tests, where the `duplicates` command is not installed (CI).

It pairs the places that share a run of `MIN_LINES` or more consecutive identical lines, read after stripping
white space and passing over blank and comment lines, in the Python files git tracks under `FOLDERS`. A run
standing in more than `TOO_COMMON` places is left out, as `duplicates` leaves it out. Simpler than that
command (no lines of the same shape with other names, no boilerplate filter): its count is its own, and the
test that uses it holds it to its own threshold.
"""

from __future__ import annotations

import subprocess
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

FOLDERS = ("layers", "bench", "tests", "local_runtime", "infra", "functions", "glue_jobs")
MIN_LINES = 6
TOO_COMMON = 8  # places one run may stand in before it is too common to list


@dataclass(frozen=True, order=True)
class Place:
    path: str  # relative to the repository
    first: int  # line numbers, 1-based, both included
    last: int

    def __str__(self) -> str:
        return f"{self.path}:{self.first}-{self.last}"


@dataclass(frozen=True)
class Pair:
    """Two files (or one with itself) sharing at least one run; `a` and `b` are the first run found."""

    a: Place
    b: Place

    def __str__(self) -> str:
        return f"{self.a} ~ {self.b}"


def python_files(root: Path) -> list[str]:
    """The tracked `*.py` files under `FOLDERS`, relative to `root` (every one on disk outside a git checkout)."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--", *(f"{folder}/*.py" for folder in FOLDERS)],
            capture_output=True,
            check=True,
            text=True,
        ).stdout
        return sorted(name for name in listed.split("\0") if name and (root / name).is_file())
    except (OSError, subprocess.CalledProcessError):
        return sorted(str(p.relative_to(root)) for folder in FOLDERS for p in (root / folder).rglob("*.py"))


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, the line stripped) of each line that is neither blank nor a comment."""
    stripped = ((number, line.strip()) for number, line in enumerate(text.splitlines(), start=1))
    return [(number, line) for number, line in stripped if line and not line.startswith("#")]


def pairs(root: Path, min_lines: int = MIN_LINES) -> list[Pair]:
    """Each pair of files (a file with itself for a run it repeats) sharing a run of `min_lines` or more."""
    lines = {name: code_lines((root / name).read_text(errors="replace")) for name in python_files(root)}
    runs: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    for name, numbered in lines.items():
        texts = [text for _, text in numbered]
        for start in range(len(texts) - min_lines + 1):
            runs[tuple(texts[start : start + min_lines])].append((name, start))
    found: dict[tuple[str, str], Pair] = {}
    for places in runs.values():
        if not 2 <= len(places) <= TOO_COMMON:
            continue
        for (name_a, a), (name_b, b) in combinations(places, 2):
            if name_a == name_b and b - a < min_lines:
                continue  # overlapping windows of one repeated line, not two places
            key = (name_a, name_b)
            if key not in found:
                found[key] = Pair(
                    _place(name_a, lines[name_a], a, min_lines), _place(name_b, lines[name_b], b, min_lines)
                )
    return sorted(found.values(), key=lambda pair: (pair.a, pair.b))


def _place(name: str, numbered: list[tuple[int, str]], start: int, size: int) -> Place:
    return Place(name, numbered[start][0], numbered[start + size - 1][0])
