"""The services over a DynamoDB client (moto's, or the simulator's) on a given clock, queues addressed by name; or over
the embedded SQLite."""

from __future__ import annotations

from collections.abc import Iterator

from local_runtime.moto_client import SerializedClient
from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.services import build_services
from mnsd.storage.sqlite import sqlite_storage
from tests.support.by_name import QueuesByName
from tests.support.simulator.dynamodb import SimulatedDynamoDB

ENGINES = ["dynamodb", "dynamodb-fake", "sqlite"]  # what `service_on` serves from

ACCOUNT = "1000000000000001"


def make_service(dynamodb, clock, **overrides):
    overrides.setdefault("poll_interval_ms", 200)
    overrides.setdefault("credentials", f"{ACCOUNT}:KEYID:SECRET")
    settings = Settings(**overrides)
    create_tables(dynamodb, settings)
    return QueuesByName(build_services(settings, dynamodb=dynamodb, clock=clock))


def service_on(request, clock) -> Iterator[QueuesByName]:
    """For a fixture: the queue service on the engine `request.param` names (`ENGINES`): DynamoDB on moto (the `make`
    fixture's), on the benchmarks' in-memory DynamoDB (moto takes minutes for thousands of calls), or the embedded
    SQLite."""
    if request.param == "dynamodb":
        yield request.getfixturevalue("make")()
        return
    if request.param == "dynamodb-fake":
        yield make_service(SerializedClient(SimulatedDynamoDB()), clock)
        return
    storage = sqlite_storage(":memory:")
    settings = Settings(poll_interval_ms=200, credentials=f"{ACCOUNT}:KEYID:SECRET")
    yield QueuesByName(build_services(settings, storage=storage, clock=clock))
    storage.database.close()
