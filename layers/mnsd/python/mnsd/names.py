"""Resource names: 1-256 characters, first a letter or digit, then letters, digits or '-'."""

from __future__ import annotations

import re

from mnsd import errors

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*\Z")
MAX_NAME_LENGTH = 256


def check_queue_name(name: str) -> str:
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise errors.QueueNameLengthError()
    if not _NAME.match(name):
        raise errors.InvalidQueueName()
    return name
