"""Helpers shared by the benchmarks: AWS defaults for local runs, percentiles, markdown result files.

The scripts run from the repository root (`python -m bench.<name>`), with the project venv, where `make`
installed the layer (`mnsd`): nothing here edits `sys.path` or the environment when imported.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def use_local_aws_defaults() -> None:
    """A region and placeholder keys for the boto3 clients a benchmark makes against moto or a stub (unless set):
    scripts that make such clients call this first thing in `main`."""
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "local")


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
