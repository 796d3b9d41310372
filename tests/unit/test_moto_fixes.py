"""Where the local runtime makes moto's Step Functions behave as AWS does for the push workflow."""

import pytest
from moto.stepfunctions.parser.asl.eval.callback.callback import (
    CallbackConsumerLeft,
    CallbackNotifyConsumerError,
    CallbackPoolManager,
)

from local_runtime import moto_fixes


def test_a_token_accepts_heartbeats_as_soon_as_it_is_issued():
    """The push worker may heartbeat a retry's token before the Task has started its heartbeat clock (it sends
    the SQS message first): a refusal would make the worker skip a live retry."""
    moto_fixes.apply()
    pool = CallbackPoolManager(activity_store={})
    endpoint = pool.add("token")
    assert pool.heartbeat("token")  # before the Task set up its heartbeat endpoint
    heartbeat = endpoint.setup_heartbeat_endpoint(heartbeat_seconds=60)
    assert pool.heartbeat("token") and heartbeat._next_heartbeat_event.is_set()
    assert not pool.heartbeat("unknown")  # never issued: InvalidToken
    endpoint.report(CallbackConsumerLeft())
    with pytest.raises(CallbackNotifyConsumerError):  # the Task ended: refused
        pool.heartbeat("token")
