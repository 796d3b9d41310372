"""Who is acting (`mnsd.ground.actor`): a request's key reaches the storage engines only while it works on a queue
that logs, so a queue that does not log stores no key (no byte more on its leases, `layout.acted`)."""

from __future__ import annotations

import dataclasses

from mnsd.ground import actor
from mnsd.storage.dynamodb.items import layout
from tests.support.stored import message


def _written(actions):
    """What an update of `actions` sets: attribute name -> value."""
    update = layout.request("t", {}, None, *actions)
    names, values = update["ExpressionAttributeNames"], update["ExpressionAttributeValues"]
    assert update["UpdateExpression"] == "SET #0 = :0"
    return {names["#0"]: values[":0"]}


def test_the_key_is_told_only_while_a_call_works_on_a_logging_queue():
    assert actor.current() is None
    with actor.acting("AK1"):
        assert actor.current() is None  # (no queue yet)
        with actor.recording(False):
            assert actor.current() is None and layout.acted() == []
        with actor.recording(True):
            assert actor.current() == "AK1" and actor.is_recording()
            assert _written(layout.acted()) == {"a": {"S": "AK1"}}
        assert actor.current() is None
    with actor.recording(True):
        assert actor.current() is None  # (no call: the sweeper, a batch the wait tier coalesced)
        assert _written(layout.acted()) == {"a": {"S": ""}}  # (no earlier key stands for it)


def test_a_lease_names_its_sender_only_on_a_logging_queue():
    logging, quiet = dataclasses.replace(message(1), logging=True), message(2)
    with actor.acting("AK1"), actor.recording(True):
        (logged,) = layout.message_items(logging)
        (unlogged,) = layout.message_items(quiet)
    assert logged[layout.ACTOR_ATTRIBUTE] == {"S": "AK1"} and layout.ACTOR_ATTRIBUTE not in unlogged
