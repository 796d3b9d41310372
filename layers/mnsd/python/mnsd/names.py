"""Resource names: 1-256 characters, first a letter or digit, then letters, digits or '-'."""

from __future__ import annotations

import re

from mnsd import errors

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*\Z")
MAX_NAME_LENGTH = 256


def check_queue_name(name: str) -> str:
    return _check(name, errors.QueueNameLengthError, errors.InvalidQueueName)


def _check(name: str, length_error: type[errors.MnsError], invalid: type[errors.MnsError]) -> str:
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise length_error()
    if not _NAME.match(name):
        raise invalid()
    return name


def check_topic_name(name: str) -> str:
    return _check(name, errors.TopicNameLengthError, errors.TopicNameInvalid)


def check_subscription_name(name: str) -> str:
    return _check(name, errors.SubscriptionNameLengthError, errors.SubscriptionNameInvalid)
