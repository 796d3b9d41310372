"""Every storage engine behind the same fixture: the contract suite runs against each.

The DynamoDB engine reads a quiet queue from its table and an indexing one from its ready index
(`mnsd.storage.dynamodb.placement.Spread`): `dynamodb-fake-indexed` runs the suite on queues that keep the index.
"""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from bench.simulator.dynamodb import SimulatedDynamoDB
from local_runtime.moto_client import SerializedClient
from local_runtime.tables import create_tables
from mnsd.settings import Settings
from mnsd.storage import Storage
from mnsd.storage.dynamodb import dynamodb_storage
from mnsd.storage.sqlite import sqlite_storage
from tests.storage.engines import indexed_queues

ENGINES = ["dynamodb-moto", "dynamodb-fake", "dynamodb-fake-indexed", "sqlite-file", "sqlite-memory"]
# The DynamoDB engine storing batches packed (`Settings.packed_batches`): the suites of packed batches run on these too.
PACKED_ENGINES = ["dynamodb-moto-packed", "dynamodb-fake-packed", "dynamodb-fake-indexed-packed"]


@pytest.fixture(params=ENGINES)
def storage(request, tmp_path) -> Storage:
    yield from engine(request, tmp_path)


def engine(request, tmp_path):
    """The storage of the engine `request.param` names."""
    settings = Settings(packed_batches=request.param.endswith("-packed"))
    if request.param.startswith("dynamodb-moto"):
        request.getfixturevalue("aws_credentials")
        with mock_aws():
            # moto is not thread-safe: one call at a time gives it DynamoDB's per-call atomicity.
            client = SerializedClient(boto3.client("dynamodb", region_name="us-east-1"))
            create_tables(client, settings)
            yield dynamodb_storage(client, settings)
        return
    if request.param.startswith("dynamodb-fake"):
        # The benchmarks' in-memory DynamoDB (bench/simulator/dynamodb.py): the contract holds on it as on moto.
        client = SerializedClient(SimulatedDynamoDB())
        create_tables(client, settings)
        storage = dynamodb_storage(client, settings)
        if "-indexed" in request.param:
            storage = indexed_queues(storage)
        yield storage
        return
    path = tmp_path / "data" if request.param == "sqlite-file" else ":memory:"
    storage = sqlite_storage(path)
    yield storage
    storage.database.close()
