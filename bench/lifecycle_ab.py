"""The local lifecycle (bench.local_engine's: 4 producers and 4 consumers on `python -m local_runtime`, SQLite
engine, or `--engine moto`) of two checkouts, in alternating rounds on the same machine: messages/s of each round and the medians.

    python -m bench.lifecycle_ab BEFORE_DIR AFTER_DIR [--messages 20000] [--rounds 3] [--engine sqlite|moto]

Each round runs in a fresh process with the checkout's own code (`PYTHONPATH`), against a fresh server and
data directory; the order alternates (A B, B A, ...) so that a drift of the machine falls on both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROUND = """
import sys, tempfile
from bench.local_engine import Ours, ours_lifecycle
with tempfile.TemporaryDirectory() as data:
    server = Ours(data, sys.argv[2])
    try:
        rate = ours_lifecycle(server, "ab", int(sys.argv[1]))
    finally:
        server.stop()
print(rate.per_second)
"""


def one_round(checkout: Path, messages: int, engine: str = "sqlite") -> float:
    checkout = checkout.resolve()
    env = dict(os.environ, PYTHONPATH=f"{checkout / 'layers/mnsd/python'}{os.pathsep}{checkout}")
    done = subprocess.run(
        [sys.executable, "-c", ROUND, str(messages), engine],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--engine", default="sqlite", choices=("sqlite", "moto"))
    args = parser.parse_args(argv)
    rates: dict[str, list[float]] = {"before": [], "after": []}
    for i in range(args.rounds):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")
        for name in order:
            rates[name].append(one_round(getattr(args, name), args.messages, args.engine))
            print(f"round {i + 1} {name}: {rates[name][-1]:,.0f} msg/s", flush=True)
    before, after = statistics.median(rates["before"]), statistics.median(rates["after"])
    print(f"median before: {before:,.0f} msg/s, after: {after:,.0f} msg/s, after/before: {after / before:.3f}")


if __name__ == "__main__":
    main()
