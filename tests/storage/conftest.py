"""Every storage engine behind the same fixture: the contract suite runs against each.

The DynamoDB engine reads a quiet queue from its table and an indexing one from its ready index
(`mnsd.storage.dynamodb.placement.placement.Spread`): `dynamodb-fake-indexed` runs the suite on queues that keep the index.
"""

from __future__ import annotations

import pytest

from mnsd.storage import Storage
from tests.storage.engines import ENGINES, engine


@pytest.fixture(params=ENGINES)
def storage(request, tmp_path) -> Storage:
    yield from engine(request, tmp_path)
