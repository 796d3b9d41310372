"""The custom resource that makes the push signing key at deploy time (CloudFormation Provider framework).

Create and Update make a new RSA key and self-signed certificate, store the key in the stack's secret
and return the certificate (public) as the resource's `Certificate` attribute. Delete leaves the
secret to the stack, which deletes it.
"""

from typing import Any

import boto3

from mnsd.push_signing import generate_signing_material


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    physical_id = event.get("PhysicalResourceId") or "push-signing-key"
    if event["RequestType"] == "Delete":
        return {"PhysicalResourceId": physical_id}
    key, certificate = generate_signing_material()
    secret_arn = event["ResourceProperties"]["SecretArn"]
    boto3.client("secretsmanager").put_secret_value(SecretId=secret_arn, SecretString=key)
    return {"PhysicalResourceId": physical_id, "Data": {"Certificate": certificate}}
