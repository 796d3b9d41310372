"""The custom resource that makes the push signing key at deploy time (a Lambda-backed custom resource).

Create makes an RSA key and its self-signed certificate, stores the key in the stack's secret and answers
with the certificate (public) as the resource's `Certificate` attribute. Update keeps the key when the
secret is unchanged (a redeploy must not void the certificate endpoints have cached) and makes a new one
for a new secret. Delete leaves the secret to the stack, which deletes it. The answer goes to the
pre-signed `ResponseURL` CloudFormation gives, whatever happens, so a failure never hangs a deployment.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import boto3

from mnsd.push.signing import certificate_of, generate_signing_material
from mnsd.services import client_config

PHYSICAL_ID = "push-signing-key"


def material(event: dict[str, Any], secretsmanager: Any) -> dict[str, str]:
    """The resource's attributes for a Create or Update."""
    secret_arn = event["ResourceProperties"]["SecretArn"]
    if event["RequestType"] == "Update" and event["OldResourceProperties"].get("SecretArn") == secret_arn:
        key = secretsmanager.get_secret_value(SecretId=secret_arn)["SecretString"]
        return {"Certificate": certificate_of(key)}
    key, certificate = generate_signing_material()
    secretsmanager.put_secret_value(SecretId=secret_arn, SecretString=key)
    return {"Certificate": certificate}


def respond(event: dict[str, Any], status: str, data: dict[str, str], reason: str = "") -> None:
    body = json.dumps(
        {
            "Status": status,
            "Reason": reason or status,
            "PhysicalResourceId": event.get("PhysicalResourceId") or PHYSICAL_ID,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "Data": data,
        }
    ).encode("utf-8")
    request = urllib.request.Request(
        event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": "", "Content-Length": str(len(body))}
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 (CloudFormation's pre-signed S3 URL)
        answer.read()


def handler(event: dict[str, Any], context: Any, secretsmanager: Any = None) -> None:
    try:
        if event["RequestType"] == "Delete":
            data = {}
        else:
            data = material(event, secretsmanager or boto3.client("secretsmanager", config=client_config()))
    except Exception as error:  # answered, or CloudFormation waits an hour for the resource
        respond(event, "FAILED", {}, f"{type(error).__name__}: {error}")
        return
    respond(event, "SUCCESS", data)
