"""Handler cold start: import time of one route handler module in fresh interpreters."""

from __future__ import annotations

import statistics
import subprocess
import sys

from bench._common import ROOT, md_table, write_result

RUNS = 10
MODULES = ("functions.get_messages", "functions.post_messages")
SNIPPET = "import time; t=time.perf_counter(); import {m}; print((time.perf_counter()-t)*1000)"


def measure(module: str) -> list[float]:
    out = []
    for _ in range(RUNS):
        result = subprocess.run(
            [sys.executable, "-c", SNIPPET.format(m=module)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        out.append(float(result.stdout.strip().splitlines()[-1]))
    return out


def top_imports(module: str, n: int = 8) -> list[list[object]]:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
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
        depth = len(name) - len(name.lstrip())
        if depth > 7:  # the first few levels of the import tree
            continue
        rows.append((int(cum_us.strip()), name.strip()))
    top = sorted(rows, reverse=True)
    return [[name, f"{cum / 1000:.1f}"] for cum, name in top[:n]]


def main() -> None:
    rows = []
    for module in MODULES:
        values = measure(module)
        rows.append([module, f"{statistics.median(values):.1f}", f"{min(values):.1f}", f"{max(values):.1f}"])
        print(rows[-1], flush=True)
    table = md_table(["module", "median ms", "min ms", "max ms"], rows)
    top = md_table(["module (cumulative)", "ms"], top_imports(MODULES[0]))
    print(table)
    print(top)
    body = f"""
{RUNS} fresh interpreters per module (`{sys.executable.replace(str(ROOT) + "/", "")} -c "import ..."` with
`time.perf_counter()` around the import; interpreter start-up itself excluded). Warm OS file cache.

{table}

Largest cumulative imports for `{MODULES[0]}` (one `-X importtime` run):

{top}
"""
    write_result("cold_start", "Handler cold start: import time", body)


if __name__ == "__main__":
    main()
