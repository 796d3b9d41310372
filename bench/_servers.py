"""Both local servers in this process: ours (LocalServer over moto DynamoDB) and moto's SQS server."""

from __future__ import annotations

import logging
import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_ours():
    import os

    # The handlers log one JSON line and one EMF metric line per request: keep the console quiet.
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    from mns.account import Account

    from local_runtime.server import LocalServer
    from mnsd.accounts import StaticKeyStore
    from mnsd.settings import Settings

    settings = Settings.from_env({"MNS_PUSH_ALLOWED_NETWORKS": "127.0.0.0/8"})  # receivers on this machine
    server = LocalServer(settings, port=0, quiet=True).start_background()
    key = StaticKeyStore(settings.credentials).default
    return server, Account(server.endpoint, key.key_id, key.secret)


def start_sqs():
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = free_port()
    server = ThreadedMotoServer(port=port, verbose=False)
    server.start()
    client = boto3.client("sqs", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1")
    return server, client
