"""Stream records of the topic message table: each published message is fanned out to its subscriptions."""

from mnsd.entry.push import make_fanout_handler
from mnsd.storage.dynamodb.tables.changes import published_messages

handler = make_fanout_handler(published_messages)
