"""Stream records of the message table: the message events of logging queues go to the operation log."""

from typing import Any

from mnsd.entry.push import make_oplog_handler
from mnsd.log.changes import MessageChange


def message_changes(records: list[dict[str, Any]]) -> list[MessageChange]:
    """The engine's reading of the records, imported at the first event (its item models load botocore's client,
    which a function's import leaves to its first call)."""
    from mnsd.storage.dynamodb.tables.changes import message_changes as read

    return read(records)


handler = make_oplog_handler(message_changes)
