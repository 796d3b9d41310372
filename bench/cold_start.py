"""Function cold start: import time of every function module, each in fresh interpreters.

    .venv/bin/python -m bench.cold_start [--runs 5] [--baseline DIR]

`--baseline DIR` also measures another checkout of the repository (for instance an older commit
extracted with `git archive`), interleaved with this one so that both see the same machine load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench._common import ROOT, md_table, write_result

# The API's route functions (one per route), the catch-all, and the push and logging consumers.
FUNCTIONS = (
    "get_account put_account list_queues put_queue get_queue delete_queue post_messages get_messages "
    "delete_messages put_messages list_receivers put_receiver get_receiver delete_receiver list_topics put_topic get_topic delete_topic post_topic_messages "
    "list_subscriptions put_subscription get_subscription delete_subscription get_signing_certificate "
    "not_found fanout push_worker oplog"
).split()
SNIPPET = (
    "import time; t, c = time.perf_counter(), time.process_time(); import functions.{m}; "
    "print((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000)"
)
BUDGET_MS = 300


def import_ms(function: str, source: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of one import in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": str(source / "layers" / "mnsd" / "python")}
    env.pop("AWS_LAMBDA_FUNCTION_NAME", None)
    result = subprocess.run(
        [sys.executable, "-c", SNIPPET.format(m=function)],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    wall, cpu = result.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def top_imports(function: str, n: int = 8, runs: int = 3) -> list[list[object]]:
    """The largest cumulative imports, from the least disturbed of a few `-X importtime` runs."""
    best: list[tuple[int, str]] = []
    for _ in range(runs):
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import functions.{function}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        rows = []
        for line in result.stderr.splitlines():
            if not line.startswith("import time:") or "cumulative" in line:
                continue
            _, cum_us, name = line.split("|")
            if len(name) - len(name.lstrip()) > 7:  # the first few levels of the import tree
                continue
            rows.append((int(cum_us.strip()), name.strip()))
        rows.sort(reverse=True)
        if not best or (rows and rows[0][0] < best[0][0]):
            best = rows
    return [[name, f"{cum / 1000:.1f}"] for cum, name in best[:n]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh interpreters per function")
    parser.add_argument("--baseline", type=Path, help="another checkout to measure beside this one")
    args = parser.parse_args(argv)
    sources = [("now", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    headers = ["function"]
    for label, _ in sources:
        headers += [f"{label} min ms", f"{label} median ms", f"{label} min CPU ms"]
    rows = []
    for function in FUNCTIONS:
        times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in sources}
        for _ in range(args.runs):
            for label, source in sources:  # interleaved: both see the same load
                times[label].append(import_ms(function, source))
        row: list[object] = [function]
        for label, _ in sources:
            walls = [wall for wall, _ in times[label]]
            row += [f"{min(walls):.1f}", f"{statistics.median(walls):.1f}", f"{min(c for _, c in times[label]):.1f}"]
        rows.append(row)
        print(row, flush=True)
    over = [row[0] for row in rows if float(str(row[3])) > BUDGET_MS]
    table = md_table(headers, rows)
    top = md_table(["module (cumulative)", "ms"], top_imports("get_messages"))
    print(table)
    print(top)
    baseline = (
        "\nBaseline: the same functions from a checkout of the previous code (`--baseline`), interleaved run by run.\n"
        if args.baseline
        else ""
    )
    body = f"""
{args.runs} fresh interpreters per function (`.venv/bin/python -c "import functions.<name>"`, `time.perf_counter()`
(wall) and `time.process_time()` (CPU) around the import; interpreter start-up excluded). Warm OS file cache.
Budget: {BUDGET_MS} ms, checked on the minimum CPU time (an import is CPU-bound with a warm file cache, so on
an idle machine wall time is close to it; on this shared machine wall time mostly measures the other work
running): over budget: {", ".join(map(str, over)) or "none"}.
{baseline}
{table}

Largest cumulative imports for `functions.get_messages` (the fastest of three `-X importtime` runs, wall):

{top}

Shared machine (load average {_load()}): medians move with the other work running on it; compare minima,
and CPU time.
What a function imports is asserted by `tests/handlers/test_cold_start_imports.py` (no boto3, botocore
session/client, nor X-Ray SDK at import).
"""
    write_result("cold_start", "Function cold start: import time", body)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} at the end, {five:.1f} over 5 min"


if __name__ == "__main__":
    main()
