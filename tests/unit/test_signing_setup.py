"""The signing-key custom resource: the key goes to the secret, the certificate (public) to CloudFormation,
whose pre-signed ResponseURL is played by a local HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from moto import mock_aws

from functions.signing_setup import handler


class CloudFormation:
    """Records the answers PUT to the ResponseURL."""

    def __init__(self) -> None:
        self.answers: list[dict] = []
        answers = self.answers

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:  # noqa: N802
                answers.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/response?signature=x"

    def event(self, request_type: str, secret_arn: str, **extra: object) -> dict:
        return {
            "RequestType": request_type,
            "ResponseURL": self.url,
            "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/Mns/1",
            "RequestId": f"request-{len(self.answers)}",
            "LogicalResourceId": "SigningKeyMaterial",
            "ResourceProperties": {"SecretArn": secret_arn},
            **extra,
        }


@pytest.fixture
def cloudformation() -> Iterator[CloudFormation]:
    recorder = CloudFormation()
    yield recorder
    recorder.server.shutdown()


@pytest.fixture
def secrets(aws_credentials) -> Iterator:
    with mock_aws():
        yield boto3.client("secretsmanager")


def certificate_key(answer: dict) -> tuple:
    return x509.load_pem_x509_certificate(answer["Data"]["Certificate"].encode()).public_key().public_numbers()


def test_create_stores_the_key_in_the_secret_and_answers_its_certificate(cloudformation, secrets) -> None:
    arn = secrets.create_secret(Name="signing")["ARN"]
    handler(cloudformation.event("Create", arn), None)

    (answer,) = cloudformation.answers
    assert answer["Status"] == "SUCCESS" and answer["RequestId"] == "request-0"
    assert answer["LogicalResourceId"] == "SigningKeyMaterial" and answer["PhysicalResourceId"]
    key = serialization.load_pem_private_key(secrets.get_secret_value(SecretId=arn)["SecretString"].encode(), None)
    assert certificate_key(answer) == key.public_key().public_numbers()
    assert "PRIVATE" not in answer["Data"]["Certificate"]


def test_an_update_keeps_the_key_of_the_same_secret(cloudformation, secrets) -> None:
    arn = secrets.create_secret(Name="signing")["ARN"]
    handler(cloudformation.event("Create", arn), None)
    key = secrets.get_secret_value(SecretId=arn)["SecretString"]
    physical = cloudformation.answers[0]["PhysicalResourceId"]

    update = cloudformation.event(
        "Update", arn, PhysicalResourceId=physical, OldResourceProperties={"SecretArn": arn, "Other": "changed"}
    )
    handler(update, None)

    assert secrets.get_secret_value(SecretId=arn)["SecretString"] == key
    assert cloudformation.answers[1]["Status"] == "SUCCESS"
    assert certificate_key(cloudformation.answers[1]) == certificate_key(cloudformation.answers[0])
    assert cloudformation.answers[1]["PhysicalResourceId"] == physical


def test_delete_answers_without_touching_the_secret(cloudformation, secrets) -> None:
    arn = secrets.create_secret(Name="signing", SecretString="kept")["ARN"]
    handler(cloudformation.event("Delete", arn, PhysicalResourceId="push-signing-key"), None)
    assert cloudformation.answers == [
        {
            "Status": "SUCCESS",
            "Reason": "SUCCESS",
            "PhysicalResourceId": "push-signing-key",
            "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/Mns/1",
            "RequestId": "request-0",
            "LogicalResourceId": "SigningKeyMaterial",
            "Data": {},
        }
    ]
    assert secrets.get_secret_value(SecretId=arn)["SecretString"] == "kept"


def test_a_failure_is_answered_as_failed_not_left_hanging(cloudformation, secrets) -> None:
    missing = "arn:aws:secretsmanager:us-east-1:123456789012:secret:missing-AbCdEf"
    handler(cloudformation.event("Create", missing), None)
    (answer,) = cloudformation.answers
    assert answer["Status"] == "FAILED"
    assert "ResourceNotFoundException" in answer["Reason"]
