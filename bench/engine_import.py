"""The DynamoDB engine's import on a function's first request: what `dynamodb_storage` loads once the function has
its boto3 client (the item models, `mnsd.storage.dynamodb.items`, load PynamoDB there), in fresh interpreters.

    .venv/bin/python -m bench.engine_import [--runs 9] [--baseline DIR]

`--baseline DIR` measures another checkout too (e.g. `git archive main`), interleaved run by run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench._common import ROOT, md_table, write_result

ENGINE = (
    "mnsd.storage.dynamodb.tables.meta mnsd.storage.dynamodb.tables.nonces mnsd.storage.dynamodb.tables.rates mnsd.storage.dynamodb.tables.oplog "
    "mnsd.storage.dynamodb.tables.topic_messages mnsd.storage.dynamodb.placement.queue_records"
).split()
SNIPPET = (
    "import boto3; boto3.client('dynamodb', region_name='us-east-1'); import time; t = time.process_time(); "
    "import {modules}; print((time.process_time() - t) * 1000)"
)


def engine_ms(source: Path) -> float:
    """CPU ms of importing the engine's table modules, boto3 and its client already made."""
    command = [sys.executable, "-c", SNIPPET.format(modules=", ".join(ENGINE))]
    env = {**os.environ, "PYTHONPATH": str(source / "layers" / "mnsd" / "python")}
    printed = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True, check=True, timeout=60)
    return float(printed.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args(argv)
    sources = [("now", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    times: dict[str, list[float]] = {label: [] for label, _ in sources}
    for _ in range(args.runs):
        for label, source in sources:
            times[label].append(engine_ms(source))
    rows = [[label, f"{min(ms):.1f}", f"{statistics.median(ms):.1f}", f"{max(ms):.1f}"] for label, ms in times.items()]
    table = md_table(["checkout", "min CPU ms", "median CPU ms", "max CPU ms"], rows)
    print(table)
    body = f"""
{args.runs} fresh interpreters per checkout, interleaved: CPU time (`time.process_time()`) of importing
{", ".join(f"`{m}`" for m in ENGINE)} after `boto3.client("dynamodb")` (what a function has by its first request's
storage), interpreter start-up and boto3 excluded.{" Baseline: `--baseline`, the code before." if args.baseline else ""}

{table}
"""
    write_result("engine_import", "The DynamoDB engine's import at a function's first request", body)


if __name__ == "__main__":
    main()
