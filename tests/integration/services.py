"""The services over a DynamoDB client (moto's, or the simulator's) on a given clock, queues addressed by name."""

from __future__ import annotations

from local_runtime.tables import create_tables
from mnsd.ground.settings import Settings
from mnsd.services import build_services
from tests.by_name import QueuesByName

ACCOUNT = "1000000000000001"


def make_service(dynamodb, clock, **overrides):
    overrides.setdefault("poll_interval_ms", 200)
    overrides.setdefault("credentials", f"{ACCOUNT}:KEYID:SECRET")
    settings = Settings(**overrides)
    create_tables(dynamodb, settings)
    return QueuesByName(build_services(settings, dynamodb=dynamodb, clock=clock))
