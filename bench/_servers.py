"""Both local servers in this process: ours (LocalServer over moto DynamoDB) and moto's SQS server."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnsd.services import Services


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
    from mnsd.access.keys import StaticKeyStore
    from mnsd.ground.settings import Settings

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


@dataclass(frozen=True)
class PushStack:
    """The push path on moto: the services, the (serialized) AWS clients, and the retry state machine's ARN."""

    services: Services
    clients: Callable[[str], Any]
    state_machine_arn: str


@contextlib.contextmanager
def push_on_moto(signing_key: str, certificate: str, account: str = "1000000000000001") -> Iterator[PushStack]:
    """The push path as the CDK app deploys it, in moto (Step Functions executing its states): the retry
    workflow, the tables, services whose pushes may reach receivers on this machine, and the local push
    worker, stopped at the end."""
    import boto3
    from moto import mock_aws

    from local_runtime.moto_client import SerializedClient
    from local_runtime.push import LocalPushWorker, create_push_workflow
    from local_runtime.tables import create_tables
    from mnsd.ground.settings import Settings
    from mnsd.services import build_services

    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        lock = threading.Lock()
        clients = lru_cache(maxsize=None)(
            lambda name: SerializedClient(boto3.client(name, region_name="us-east-1"), lock)
        )
        arn, queue_url = create_push_workflow(clients)
        settings = Settings(
            credentials=f"{account}:K:S",
            push_state_machine_arn=arn,
            push_queue_url=queue_url,
            signing_key=signing_key,
            signing_certificate=certificate,
            signing_cert_url="http://127.0.0.1:1/cert.pem",
            push_allowed_networks="127.0.0.0/8",  # the receivers are on this machine
        )
        create_tables(clients("dynamodb"), settings)
        services = build_services(settings, dynamodb=clients("dynamodb"), clients=clients)
        worker = LocalPushWorker(lambda: services, clients("sqs"), queue_url).start()
        try:
            yield PushStack(services, clients, arn)
        finally:
            worker.stop()
