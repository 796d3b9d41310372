"""The analytics pipeline on the local runtime's data: export the tables of a running `make run`,
then run every Glue job with local pyspark and print a summary.

    python -m local_runtime.analytics [--endpoint http://127.0.0.1:8080] [--out .mns-local/analytics]

The export is the operator's tool: the request is signed with the server's first access key, read from the
same environment as the server's (`MNS_CREDENTIALS`, or `MNS_ACCESS_KEY_ID` / `MNS_ACCESS_KEY_SECRET`).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from mnsclient.signing import Key
from mnsclient.xml import XmlClient, refusal
from mnsd.access.keys import AccessKey, StaticKeyStore
from mnsd.ground.settings import credentials_from_env

EXPORT_PATH = "/-/exports"
EXPORT_SECONDS = 120.0


def operator_key(env: dict[str, str] | None = None) -> AccessKey:
    """The operator's access key: the first of the server's configured keys."""
    return StaticKeyStore(credentials_from_env(dict(os.environ if env is None else env))).default


def request_export(endpoint: str, key: AccessKey | None = None) -> Path:
    operator = key or operator_key()
    client = XmlClient(endpoint, Key(operator.key_id, operator.secret), timeout=EXPORT_SECONDS)
    reply = client.exchange("POST", EXPORT_PATH)
    if reply.status >= 300:
        raise refusal(reply)
    return Path(json.loads(reply.body)["exports"])


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
