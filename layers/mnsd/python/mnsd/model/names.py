"""Resource names: 1-256 characters, first a letter or digit, then letters, digits or '-'.

A queue's receiver is addressed as `{queue}.{receiver}` (`receiver_address`): a name no queue can take, so the
queue routes reach it unchanged (an SDK's `get_queue("orders.audit")`).
"""

from __future__ import annotations

import re

from mnsd.ground import errors

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*\Z")
MAX_NAME_LENGTH = 256
MAX_RECEIVER_NAME_LENGTH = 64
RECEIVER_SEPARATOR = "."


def check_queue_name(name: str) -> str:
    return _check(name, errors.QueueNameLengthError, errors.InvalidQueueName)


def _check(name: str, length_error: type[errors.MnsError], invalid: type[errors.MnsError], most: int = 0) -> str:
    if not 1 <= len(name) <= (most or MAX_NAME_LENGTH):
        raise length_error()
    if not _NAME.match(name):
        raise invalid()
    return name


def check_topic_name(name: str) -> str:
    return _check(name, errors.TopicNameLengthError, errors.TopicNameInvalid)


def check_subscription_name(name: str) -> str:
    return _check(name, errors.SubscriptionNameLengthError, errors.SubscriptionNameInvalid)


def check_receiver_name(name: str) -> str:
    return _check(name, errors.InvalidReceiverName, errors.InvalidReceiverName, MAX_RECEIVER_NAME_LENGTH)


def receiver_address(queue: str, receiver: str) -> str:
    """The name a queue's receiver is reached by in the queue routes."""
    return f"{queue}{RECEIVER_SEPARATOR}{receiver}"


def split_address(name: str) -> tuple[str, str | None]:
    """(queue, receiver) a name addresses: (name, None) for a queue's own name."""
    queue, separator, receiver = name.partition(RECEIVER_SEPARATOR)
    return (queue, receiver) if separator else (name, None)


def check_receiver_address(name: str) -> tuple[str, str]:
    """(queue, receiver) of a receiver's address. A name whose queue part is no queue name (`..`, `.r`, `q!.r`) is
    an invalid queue name, as it was before queues had receivers; then the receiver's name is checked."""
    queue, receiver = split_address(name)
    if not _NAME.match(queue) or len(queue) > MAX_NAME_LENGTH:
        raise errors.InvalidQueueName()
    return queue, check_receiver_name(receiver or "")


def is_receiver_address(name: str) -> bool:
    return RECEIVER_SEPARATOR in name
