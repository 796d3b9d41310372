"""The stream reader's cost per image: CPU microseconds of `tables.changes` turning one stream record into its change
events (the operation log's function, `oplog`) or its published message (the fan-out function, `fanout`), in a fresh
interpreter per checkout, the reader already imported.

    .venv/bin/python -m bench.stream_reader [--runs 3] [--loops 2000] [--baseline DIR]

The records are made of items the engine wrote (`tests/storage/data/items_written_before.json`): a logging queue's
lease sent, received, re-timed, deleted and moved away; a lease of a queue that does not log (no event); a logging
queue's pack of three entries sent, and the same pack with an entry moved away (`t{n}`); a topic message published.
`--baseline DIR` measures another checkout too (e.g. `git archive` of the code before), interleaved run by run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench._common import ROOT, md_table, write_result

ITEMS = ROOT / "tests" / "storage" / "data" / "items_written_before.json"

# Run inside the checkout measured: prints {case: CPU microseconds per record}.
PROBE = r"""
import json, sys, time
from mnsd.storage.dynamodb.tables.changes import message_changes, published_messages

written = json.load(open(sys.argv[1]))
loops = int(sys.argv[2])
moved = written["message"][9]  # a logging queue's lease moved away (`t`), with its actor (`a`)
lease = {k: v for k, v in moved.items() if k != "t"}
received = {**lease, "d": {"N": str(int(lease["d"]["N"]) + 1)}, "r": {"N": str(int(lease["r"]["N"]) + 1)}}
retimed = {**lease, "r": {"N": str(int(lease["r"]["N"]) + 1)}, "v": {"N": str(int(lease["v"]["N"]) + 30000)}}
quiet = written["message"][2]  # a lease of a queue that does not log
marked = written["message"][10]  # a logging queue's pack: entries 1-3, entry 0 moved away (`t0`)
pack = {k: v for k, v in marked.items() if k != "t0"}
before_move = {**pack, "v0": pack["v1"], "r0": pack["r1"], "d0": pack["d1"]}


def record(name, new=None, old=None):
    change = {"ApproximateCreationDateTime": 1700000001, "SequenceNumber": "1"}
    if new is not None:
        change["NewImage"] = new
    if old is not None:
        change["OldImage"] = old
    return {"eventID": "e1", "eventName": name, "dynamodb": change}


cases = {
    "lease sent (INSERT)": (message_changes, record("INSERT", new=lease)),
    "lease received (MODIFY)": (message_changes, record("MODIFY", new=received, old=lease)),
    "lease re-timed (MODIFY)": (message_changes, record("MODIFY", new=retimed, old=lease)),
    "lease deleted (REMOVE)": (message_changes, record("REMOVE", old=lease)),
    "lease moved away (MODIFY)": (message_changes, record("MODIFY", new=moved, old=lease)),
    "quiet queue's lease (no event)": (message_changes, record("INSERT", new=quiet)),
    "pack of 3 sent (INSERT)": (message_changes, record("INSERT", new=pack)),
    "pack, entry moved away (MODIFY)": (message_changes, record("MODIFY", new=marked, old=before_move)),
    "topic message published (INSERT)": (published_messages, record("INSERT", new=written["topic"][0])),
}
found = {}
for name, (read, given) in cases.items():
    events = read([given])
    for _ in range(loops // 10):
        read([given])  # (warm)
    start = time.process_time()
    for _ in range(loops):
        read([given])
    found[name] = [(time.process_time() - start) / loops * 1e6, len(events)]
print(json.dumps(found))
"""


def reader_us(source: Path, loops: int) -> dict[str, list[float]]:
    """CPU microseconds per record of each case (and its events), in a fresh interpreter on `source`'s code."""
    command = [sys.executable, "-c", PROBE, str(ITEMS), str(loops)]
    env = {**os.environ, "PYTHONPATH": f"{source}{os.pathsep}{source / 'layers' / 'mnsd' / 'python'}"}
    printed = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True, check=True, timeout=600)
    found: dict[str, list[float]] = json.loads(printed.stdout.strip().splitlines()[-1])
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--loops", type=int, default=2000)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args(argv)
    sources = [("now", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    runs: dict[str, list[dict[str, list[float]]]] = {label: [] for label, _ in sources}
    for _ in range(args.runs):
        for label, source in sources:
            runs[label].append(reader_us(source, args.loops))
    cases = list(runs["now"][0])
    headers = ["record", "events"] + [f"{label}: median (min-max) CPU µs" for label, _ in sources]
    rows = []
    for case in cases:
        row: list[object] = [case, int(runs["now"][0][case][1])]
        for label, _ in sources:
            us = [run[case][0] for run in runs[label]]
            row.append(f"{statistics.median(us):.1f} ({min(us):.1f}-{max(us):.1f})")
        rows.append(row)
    table = md_table(headers, rows)
    print(table)
    body = f"""
{args.runs} fresh interpreters per checkout, interleaved; in each, {args.loops} calls per record after a warm-up:
CPU time (`time.process_time()`) per record of `message_changes` (or `published_messages`) on one stream record.
{"Baseline: `--baseline`, the code before." if args.baseline else ""}

{table}
"""
    write_result("stream_reader", "The stream reader's cost per image", body)


if __name__ == "__main__":
    main()
