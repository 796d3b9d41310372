import boto3
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from moto import mock_aws

from functions.signing_setup import handler


def test_create_stores_the_key_in_the_secret_and_returns_its_certificate(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("secretsmanager")
        arn = client.create_secret(Name="signing")["ARN"]
        result = handler({"RequestType": "Create", "ResourceProperties": {"SecretArn": arn}}, None)
        key_pem = client.get_secret_value(SecretId=arn)["SecretString"]
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    certificate = x509.load_pem_x509_certificate(result["Data"]["Certificate"].encode())
    assert certificate.public_key().public_numbers() == key.public_key().public_numbers()
    assert "PRIVATE" not in result["Data"]["Certificate"]
    deleted = handler({"RequestType": "Delete", "PhysicalResourceId": result["PhysicalResourceId"]}, None)
    assert deleted == {"PhysicalResourceId": result["PhysicalResourceId"]}
