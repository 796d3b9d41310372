"""Fixtures shared by every test layer."""

import pytest
from push_receiver import PushEndpoint


@pytest.fixture
def push_endpoint():
    endpoint = PushEndpoint()
    yield endpoint
    endpoint.close()
