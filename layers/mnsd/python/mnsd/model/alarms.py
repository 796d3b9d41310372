"""What a queue asks to be alarmed on (its `Alarms` attribute): the age of its oldest message, its depth, any message
reaching its dead-letter queue, and where the alarms notify.

The attribute is a small JSON object, given and answered as text (as `Policy` and `DlqPolicy` are), e.g.
`{"OldestMessageAge": 600, "VisibleMessages": 1000, "DeadLetters": true, "Minutes": 5, "TopicArn": "arn:{partition}:sns:..."}`:
- `OldestMessageAge`: seconds; alarms when ApproximateAgeOfOldestMessage reaches it for `Minutes` minutes running;
- `VisibleMessages`: messages; alarms when ApproximateNumberOfMessagesVisible reaches it for `Minutes` minutes;
- `DeadLetters`: true alarms in the minute a message is moved to the queue's dead-letter queue;
- `Minutes`: 1-60, default 5; `TopicArn`: the SNS topic notified (default: the stack's alarm topic).
`{}` or "" removes them. The alarms themselves are CloudWatch's, made and removed by the sampler
(`mnsd.monitoring.alarms`); a queue with alarms is monitored (they read its metrics).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from mnsd.ground import errors, jsontext

ELEMENT = "Alarms"
OLDEST_MESSAGE_AGE_RANGE = (1, 1_209_600)  # s (twice the longest retention: any age a queue can reach)
VISIBLE_MESSAGES_RANGE = (1, 1_000_000_000)
MINUTES_RANGE = (1, 60)
DEFAULT_MINUTES = 5
_TOPIC_ARN = re.compile(r"arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}\Z")
_KEYS = ("OldestMessageAge", "VisibleMessages", "DeadLetters", "Minutes", "TopicArn")


def _refuse(detail: str) -> errors.MnsError:
    return errors.InvalidArgument(f"The value of {ELEMENT} is invalid: {detail}.")


def _count(given: dict[str, object], key: str, low: int, high: int) -> int | None:
    value = given.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _refuse(f"{key} should be a whole number from {low} to {high}")
    return value


@dataclass(frozen=True)
class QueueAlarms:
    oldest_message_age: int | None = None  # s
    visible_messages: int | None = None
    dead_letters: bool = False
    minutes: int = DEFAULT_MINUTES
    topic_arn: str = ""  # "": the stack's alarm topic

    @property
    def any(self) -> bool:
        return self.oldest_message_age is not None or self.visible_messages is not None or self.dead_letters

    @classmethod
    def parse(cls, text: str) -> QueueAlarms:
        """The alarms a JSON document asks for, checked ("" or `{}`: none)."""
        if not text.strip():
            return cls()
        try:
            given = jsontext.loads(text)
        except ValueError:
            given = None
        if not isinstance(given, dict):
            raise _refuse("it should be a JSON object")
        unknown = sorted(set(given) - set(_KEYS))
        if unknown:
            raise _refuse(f"unknown {', '.join(unknown)} (known: {', '.join(_KEYS)})")
        dead_letters = given.get("DeadLetters", False)
        if not isinstance(dead_letters, bool):
            raise _refuse("DeadLetters should be true or false")
        topic_arn = given.get("TopicArn", "")
        if not isinstance(topic_arn, str) or (topic_arn and not _TOPIC_ARN.match(topic_arn)):
            raise _refuse("TopicArn should be an SNS topic ARN")
        return cls(
            oldest_message_age=_count(given, "OldestMessageAge", *OLDEST_MESSAGE_AGE_RANGE),
            visible_messages=_count(given, "VisibleMessages", *VISIBLE_MESSAGES_RANGE),
            dead_letters=dead_letters,
            minutes=_count(given, "Minutes", *MINUTES_RANGE) or DEFAULT_MINUTES,
            topic_arn=topic_arn,
        )

    def document(self) -> str:
        """The canonical JSON text, as stored and answered ("" when no alarm is asked for)."""
        if not self.any:
            return ""
        fields: dict[str, object] = {}
        if self.oldest_message_age is not None:
            fields["OldestMessageAge"] = self.oldest_message_age
        if self.visible_messages is not None:
            fields["VisibleMessages"] = self.visible_messages
        if self.dead_letters:
            fields["DeadLetters"] = True
        fields["Minutes"] = self.minutes
        if self.topic_arn:
            fields["TopicArn"] = self.topic_arn
        return json.dumps(fields, separators=(",", ":"))


def alarms_document(text: str) -> str:
    """A given `Alarms` value, checked and in canonical form ("" removes the alarms)."""
    return QueueAlarms.parse(text).document()
