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
import urllib.request
from email.utils import formatdate
from pathlib import Path

from mnsd.access.authentication import sign, string_to_sign
from mnsd.access.keys import AccessKey, StaticKeyStore
from mnsd.ground.http import HttpRequest
from mnsd.ground.settings import credentials_from_env

EXPORT_PATH = "/-/exports"


def operator_key(env: dict[str, str] | None = None) -> AccessKey:
    """The operator's access key: the first of the server's configured keys."""
    return StaticKeyStore(credentials_from_env(dict(os.environ if env is None else env))).default


def signed_headers(key: AccessKey, method: str, path: str) -> dict[str, str]:
    headers = {"date": formatdate(usegmt=True), "content-type": "text/xml", "x-mns-version": "2015-06-06"}
    text = string_to_sign(HttpRequest(method, path, "", headers), headers["date"])
    return {**headers, "authorization": f"MNS {key.key_id}:{sign(key.secret, text)}"}


def request_export(endpoint: str, key: AccessKey | None = None) -> Path:
    headers = signed_headers(key or operator_key(), "POST", EXPORT_PATH)
    request = urllib.request.Request(endpoint.rstrip("/") + EXPORT_PATH, data=b"", method="POST", headers=headers)
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
