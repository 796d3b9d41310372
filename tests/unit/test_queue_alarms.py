"""A queue's `Alarms` attribute: the JSON it takes, checked, and the canonical text it is kept and answered as."""

import pytest

from mnsd.ground import errors
from mnsd.model.alarms import QueueAlarms, alarms_document

TOPIC = "arn:aws:sns:us-east-1:123456789012:oncall"


def test_every_alarm_with_its_minutes_and_topic():
    alarms = QueueAlarms.parse(
        f'{{"TopicArn": "{TOPIC}", "DeadLetters": true, "VisibleMessages": 1000, "OldestMessageAge": 600, "Minutes": 3}}'
    )
    assert alarms == QueueAlarms(600, 1000, True, 3, TOPIC)
    assert alarms.document() == (
        f'{{"OldestMessageAge":600,"VisibleMessages":1000,"DeadLetters":true,"Minutes":3,"TopicArn":"{TOPIC}"}}'
    )
    assert QueueAlarms.parse(alarms.document()) == alarms


@pytest.mark.parametrize("text", ["", "  ", "{}", '{"DeadLetters": false}', '{"Minutes": 3}'])
def test_nothing_asked_is_no_alarm_and_no_text(text):
    assert not QueueAlarms.parse(text).any
    assert alarms_document(text) == ""


def test_minutes_default_to_five():
    assert alarms_document('{"OldestMessageAge": 60}') == '{"OldestMessageAge":60,"Minutes":5}'


@pytest.mark.parametrize(
    "text, detail",
    [
        ("[1]", "JSON object"),
        ("not json", "JSON object"),
        ('{"Depth": 3}', "unknown Depth"),
        ('{"OldestMessageAge": 0}', "OldestMessageAge should be a whole number from 1 to 1209600"),
        ('{"OldestMessageAge": 1.5}', "OldestMessageAge"),
        ('{"VisibleMessages": true}', "VisibleMessages"),
        ('{"VisibleMessages": 10, "Minutes": 61}', "Minutes should be a whole number from 1 to 60"),
        ('{"DeadLetters": "yes"}', "DeadLetters should be true or false"),
        ('{"DeadLetters": true, "TopicArn": "arn:aws:sqs:us-east-1:123456789012:q"}', "TopicArn"),
    ],
)
def test_what_is_refused_and_why(text, detail):
    with pytest.raises(errors.InvalidArgument) as refused:
        QueueAlarms.parse(text)
    assert refused.value.message.startswith("The value of Alarms is invalid")
    assert detail in refused.value.message
