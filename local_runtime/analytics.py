"""The analytics pipeline on the local runtime's data: export the tables of a running `make run`,
then run every Glue job with local pyspark and print a summary.

    python -m local_runtime.analytics [--endpoint http://127.0.0.1:8080] [--out .mns-local/analytics]
"""

from __future__ import annotations

import argparse
import json
import os
import urllib.request
from pathlib import Path

EXPORT_PATH = "/-/exports"


def request_export(endpoint: str) -> Path:
    request = urllib.request.Request(endpoint.rstrip("/") + EXPORT_PATH, data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
        return Path(json.loads(response.read())["exports"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_endpoint = f"http://127.0.0.1:{os.environ.get('MNS_PORT', '8080')}"
    parser.add_argument("--endpoint", default=default_endpoint, help="the running local server")
    parser.add_argument("--out", type=Path, default=Path(".mns-local/analytics"), help="folder for the Parquet tables")
    args = parser.parse_args(argv)
    exports = request_export(args.endpoint)
    print(f"exported tables to {exports}", flush=True)
    from glue_jobs import local_pipeline

    local_pipeline.main(["--exports", str(exports), "--out", str(args.out / exports.name)])


if __name__ == "__main__":
    main()
