"""DlqPolicy and RewindPeriod on the wire: both request forms, the JSON answer, the checks of the domain."""

import json

import pytest

from mnsd.ground import errors
from mnsd.model.queues import DlqPolicy, QueueAttributes
from mnsd.wire import codec, requests, responses


def changes(inner: str):
    return requests.queue_attribute_changes(codec.parse(f"<Queue>{inner}</Queue>".encode()))


NESTED = (
    "<DlqPolicy><Enabled>True</Enabled><DeadLetterTargetQueue>dead</DeadLetterTargetQueue>"
    "<MaxReceiveCount>5</MaxReceiveCount></DlqPolicy>"
)
JSON_FORM = '<DlqPolicy>{"Enabled":true,"DeadLetterTargetQueue":"dead","MaxReceiveCount":5}</DlqPolicy>'


@pytest.mark.parametrize("inner", [NESTED, JSON_FORM])
def test_both_forms_set_the_same_policy(inner):
    attributes = QueueAttributes().updated_from(changes(inner))
    assert attributes.dlq_policy == DlqPolicy("dead", 5)


def test_enabled_false_turns_it_off_and_absence_keeps_it():
    on = QueueAttributes().updated_from(changes(NESTED))
    assert on.updated_from(changes("<DelaySeconds>3</DelaySeconds>")).dlq_policy == DlqPolicy("dead", 5)
    assert on.updated_from(changes("<DlqPolicy><Enabled>False</Enabled></DlqPolicy>")).dlq_policy is None


@pytest.mark.parametrize(
    "inner",
    [
        "<DlqPolicy>not json</DlqPolicy>",
        "<DlqPolicy>[1]</DlqPolicy>",
        '<DlqPolicy>{"DeadLetterTargetQueue":"dead","MaxReceiveCount":0}</DlqPolicy>',
        '<DlqPolicy>{"DeadLetterTargetQueue":"dead","MaxReceiveCount":1.5}</DlqPolicy>',
        "<DlqPolicy><Enabled>yes</Enabled></DlqPolicy>",
        "<DlqPolicy><MaxReceiveCount>3</MaxReceiveCount></DlqPolicy>",
        "<RewindPeriod>-1</RewindPeriod>",
        "<RewindPeriod>259201</RewindPeriod>",  # above the default retention
    ],
)
def test_bad_values_are_invalid_arguments(inner):
    with pytest.raises(errors.InvalidArgument):
        QueueAttributes().updated_from(changes(inner))


def test_get_queue_attributes_answers_the_policy_as_json_text_and_rewind_when_on():
    from mnsd.model.queues import Queue

    attributes = QueueAttributes().updated_from(changes(NESTED + "<RewindPeriod>600</RewindPeriod>"))
    root = codec.parse(
        codec.encode(responses.queue_node(Queue("a", "q", "id", attributes, 1, 1), None, metrics_default=True))
    )
    assert json.loads(root.value("DlqPolicy")) == {
        "Enabled": True,
        "DeadLetterTargetQueue": "dead",
        "MaxReceiveCount": 5,
    }
    assert root.value("RewindPeriod") == "600"
    plain_queue = Queue("a", "q", "id", QueueAttributes(), 1, 1)
    plain = codec.parse(codec.encode(responses.queue_node(plain_queue, None, metrics_default=True)))
    assert plain.child("DlqPolicy") is None and plain.child("RewindPeriod") is None
