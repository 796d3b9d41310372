"""End-to-end fixtures: a real `python -m local_runtime` server, SDK accounts and a signed raw-HTTP client.

The helpers live in named modules (`tests.support.servers`, `tests.support.raw_http`, `tests.e2e.resources`): a test
imports them from there, never from this file.
"""

from __future__ import annotations

import uuid

import pytest
from mns.account import Account
from mns.queue import QueueMeta

from tests.e2e.resources import fresh_topic
from tests.support.local_server import ServerClock
from tests.support.raw_http import RawClient, assert_mns_error
from tests.support.servers import ACCOUNT_A, ACCOUNT_B, ENGINES, local_server


@pytest.fixture(scope="session", params=ENGINES)
def engine(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def server_clock(tmp_path_factory, engine) -> ServerClock:
    """The shared server's clock: a test moves it forward instead of waiting for a visibility timeout or a delay,
    a few seconds at a time (about 15 s in a whole run): a test that compares the server's times with its own
    reads the server's with `server_clock.now()`."""
    return ServerClock(tmp_path_factory.mktemp(f"clock-{engine}") / "offset")


@pytest.fixture(scope="session")
def endpoint(tmp_path_factory, engine, server_clock):
    with local_server(
        tmp_path_factory, engine, "shared", server_clock, MNS_EXPORT_DIR=str(tmp_path_factory.mktemp("exports"))
    ) as url:
        yield url


@pytest.fixture(scope="session")
def account_a(endpoint) -> Account:
    return Account(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture(scope="session")
def new_account_a(endpoint):
    """A factory of independent Account objects (the SDK client is not thread-safe)."""
    return lambda: Account(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture(scope="session")
def account_b(endpoint) -> Account:
    return Account(endpoint, ACCOUNT_B[1], ACCOUNT_B[2])


@pytest.fixture
def qname() -> str:
    return "e2e-" + uuid.uuid4().hex[:20]


@pytest.fixture
def tname() -> str:
    return "e2e-t-" + uuid.uuid4().hex[:20]


@pytest.fixture
def topic(account_a, tname):
    """A freshly created topic (default attributes) of account A."""
    yield from fresh_topic(account_a, tname)


@pytest.fixture
def queue(account_a, qname):
    """A freshly created queue (default attributes, short visibility timeout) of account A."""
    q = account_a.get_queue(qname)
    meta = QueueMeta()
    meta.set_visibilitytimeout(30)
    q.create(meta)
    yield q
    try:
        q.delete()
    except Exception:
        pass


@pytest.fixture(scope="session")
def raw_a(endpoint) -> RawClient:
    return RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2])


@pytest.fixture(scope="session")
def mns_error():
    return assert_mns_error
