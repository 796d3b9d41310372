"""Helpers shared by the benchmarks: import paths, percentiles, markdown result files."""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
LAYER = ROOT / "layers" / "mnsd" / "python"
if str(LAYER) not in sys.path:
    sys.path.insert(0, str(LAYER))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
for _name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    os.environ.setdefault(_name, "local")


def pct(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-p * len(ordered) // 100))))
    return ordered[rank - 1]


def median(values: list[float]) -> float:
    return statistics.median(values)


def machine_note() -> str:
    return (
        f"{os.cpu_count()} cores (shared VM), {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}"
    )


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_result(name: str, title: str, body: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.md"
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = (
        f"# {title}\n\n"
        f"- Command: `.venv/bin/python -m bench.{name}` (from the repository root)\n"
        f"- Date: {now}\n"
        f"- Machine: {machine_note()}\n\n"
        f"{body.strip()}\n"
    )
    path.write_text(text)
    print(f"\nwrote {path.relative_to(ROOT)}")
    return path
