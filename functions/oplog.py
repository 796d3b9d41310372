"""Stream records of the message table: the message events of logging queues go to the operation log."""

from mnsd.entry.push import make_oplog_handler
from mnsd.storage.dynamodb.tables.changes import message_changes

handler = make_oplog_handler(message_changes)
