"""Stream records of the topic message table: each published message is fanned out to its subscriptions."""

from typing import Any

from mnsd.entry.push import make_fanout_handler
from mnsd.model.topics import TopicMessagePublished


def published_messages(records: list[dict[str, Any]]) -> list[TopicMessagePublished]:
    """The engine's reading of the records, imported at the first event (its item models load botocore's client,
    which a function's import leaves to its first call)."""
    from mnsd.storage.dynamodb.tables.changes import published_messages as read

    return read(records)


handler = make_fanout_handler(published_messages)
