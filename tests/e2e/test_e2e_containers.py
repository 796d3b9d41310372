"""Each function a container of its own, its records cached as deployed (`meta_cache_seconds`, 5 s): what a client
sets or deletes through one function is what GetQueueAttributes answers at once through another. Alibaba's Java, PHP
and Go SDK checks read a queue back right after SetQueueAttributes and DeleteQueue (`tests/clients/`); with each
function's cache its own, the old record was answered for up to 5 s."""

from __future__ import annotations

import uuid

import pytest
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import QueueMeta

from mnsd.ground.settings import META_CACHE_SECONDS
from tests.support.servers import ACCOUNT_A, local_server


@pytest.fixture(scope="module")
def cached_endpoint(tmp_path_factory):
    # moto: the roles enforced, each function with services (and a record cache) of its own (`tests/support/servers.py`)
    with local_server(tmp_path_factory, "moto", "containers", **{META_CACHE_SECONDS: "5"}) as url:
        yield url


def test_attributes_set_or_deleted_through_one_function_are_read_at_once_through_another(cached_endpoint) -> None:
    account = Account(cached_endpoint, ACCOUNT_A[1], ACCOUNT_A[2])
    queue = account.get_queue(f"containers-{uuid.uuid4().hex[:12]}")
    meta = QueueMeta()
    meta.set_visibilitytimeout(30)
    queue.create(meta)
    assert queue.get_attributes().visibility_timeout == 30  # the reading function now holds the record

    changed = QueueMeta()
    changed.set_visibilitytimeout(45)
    queue.set_attributes(changed)
    assert queue.get_attributes().visibility_timeout == 45

    queue.delete()
    with pytest.raises(MNSServerException) as refused:
        queue.get_attributes()
    assert refused.value.type == "QueueNotExist"
