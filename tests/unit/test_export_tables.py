import time

import boto3
from moto import mock_aws

from functions.export_tables import handler


def test_every_table_is_exported_under_its_label(aws_credentials, monkeypatch):
    with mock_aws():
        dynamodb, s3 = boto3.client("dynamodb"), boto3.client("s3")
        s3.create_bucket(Bucket="mns-analytics")
        arns = []
        for label in ("log", "meta"):
            arn = dynamodb.create_table(
                TableName=f"t-{label}",
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )["TableDescription"]["TableArn"]
            dynamodb.update_continuous_backups(
                TableName=f"t-{label}", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}
            )
            dynamodb.put_item(TableName=f"t-{label}", Item={"pk": {"S": label}})
            arns.append(f"{label}={arn}")
        monkeypatch.setenv("MNS_EXPORT_BUCKET", "mns-analytics")
        monkeypatch.setenv("MNS_EXPORT_TABLES", ",".join(arns))
        started = handler({}, None)
        assert sorted(started) == ["log", "meta"]
        for arn in started.values():
            deadline = time.monotonic() + 10
            while dynamodb.describe_export(ExportArn=arn)["ExportDescription"]["ExportStatus"] == "IN_PROGRESS":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert dynamodb.describe_export(ExportArn=arn)["ExportDescription"]["S3Bucket"] == "mns-analytics"
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket="mns-analytics")["Contents"]]
        assert {key.split("/")[1] for key in keys} == {"log", "meta"}
        assert all(key.startswith("exports/") and "/AWSDynamoDB/" in key for key in keys)
