"""What each function may do on AWS's tables (and the metrics it reads), stated once: `Functions.add` grants a
function exactly its row, and nothing else reads or writes these lists.

Every suite proves the rows (docs/deploying.md): the e2e server on moto runs each function with its role as
synthesized from this table enforced on its AWS calls (`local_runtime.roles`), and `tests/handlers` invokes every
function's handler cold under its role; a call its row does not allow fails there with AccessDenied, as on AWS.

How to add a grant: add `{table}.{access}` (or a service grant) to the function's row, with the code that needs it in
a comment when it is not obvious; a new function gets a row (an empty one if it touches no table). A new kind of
access goes into `ACCESS` below (as narrow as the call allows: actions spelled out, a `dynamodb:LeadingKeys` condition
where the keys have a shape), and `local_runtime.roles.calls` maps any new AWS call to what IAM authorizes.

Resources the stack's constructs own (the push queues, the retry state machine, the alarms, secrets, the wake route)
are granted by those constructs, next to the resource (`infra/push.py`, `infra/metrics.py`, ...).
"""

from __future__ import annotations

# Tables: meta, messages, topic_messages, log (`infra.tables.Tables.by_name`). Access:
ACCESS = {
    "read": "GetItem, Query, Scan, BatchGetItem, ConditionCheckItem, DescribeTable (and the stream's reads)",
    "write": "PutItem, UpdateItem, DeleteItem, BatchWriteItem, DescribeTable",
    "read_write": "read and write",
    "update": "UpdateItem alone (queue records as the engine places messages: `storage.dynamodb.placement.queue_records`)",
    "count": "UpdateItem on the request counters' keys `rate#*` (`storage.dynamodb.tables.rates`)",
    "account": "GetItem on account records' keys `{account}#account` (`storage.dynamodb.tables.meta`)",
    "locate": "consistent BatchGetItem on FIFO groups' and directories' keys `*#G*`, `*#D*` "
    "(`storage.dynamodb.fifo.directory.Directory.locate`, whenever a container does not know a group's home)",
}
# Service grants: cloudwatch:GetMetricData ("*": no resource-level permission), one queue's series.
SERVICE_ACCESS = {"metrics.read": "cloudwatch:GetMetricData"}

# Every authenticated route counts its calls against the account's and the queue's limits.
_COUNTED = ("meta.count",)
# A delivery reads subscriptions and queues (meta), writes to queue endpoints and dead-letter queues (messages; a FIFO
# one locates its group), and logs topic events.
_DELIVERY = ("meta.read", "meta.update", "messages.write", "messages.locate", "log.write")

GRANTS: dict[str, tuple[str, ...]] = {
    # --- the API's routes (`mnsd.request.routes.ROUTES`), each its own function ---
    # ListAccessKeys reads the credentials secret, which every route's function reads (to authenticate).
    "get_account": ("meta.read", *_COUNTED),
    # SetAccountAttributes reads the account record before it writes it.
    "put_account": ("meta.write", "meta.account", *_COUNTED),
    # IssueSecurityToken and the Mns-open OpenAPI (`mnsd.rpc`): queues, topics, subscriptions, tags, the account.
    "post_account": ("meta.read_write", "messages.read", "topic_messages.read", *_COUNTED),
    "list_queues": ("meta.read", *_COUNTED),
    # messages: rewind and redrive, and dropping what rewind kept when it is turned off
    "put_queue": ("meta.read_write", "messages.read_write", *_COUNTED),
    "get_queue": ("meta.read", "messages.read", "log.read", "metrics.read", *_COUNTED),
    "delete_queue": ("meta.read_write", *_COUNTED),
    # A send to a FIFO queue locates its group's home.
    "post_messages": ("meta.read", "meta.update", "messages.write", "messages.locate", *_COUNTED),
    # A FIFO receive locates a group's home when its scan saw nothing of the group. (With the wait tier each message
    # route's function serves the coalesced calls of its own route only, `mnsd.request.coalesced`: sends and deletes
    # keep to theirs.)
    "get_messages": ("meta.read", "meta.update", "messages.read_write", "messages.locate", *_COUNTED),
    # Deleting or hiding a FIFO message again locates its group's home when this container has not met the group.
    "delete_messages": ("meta.read", "messages.write", "messages.locate", *_COUNTED),
    "put_messages": ("meta.read", "messages.write", "messages.locate", *_COUNTED),
    # A message's history (`mnsd.log.history`): its queue or topic record, then one query of the log's `message` index.
    "get_queue_message_history": ("meta.read", "log.read", *_COUNTED),
    "get_topic_message_history": ("meta.read", "log.read", *_COUNTED),
    # A queue's receivers (`mnsd.queues.receivers`); creating one may copy the queue's earlier messages to it.
    "list_receivers": ("meta.read", "messages.read", *_COUNTED),
    "put_receiver": ("meta.read_write", "messages.read_write", *_COUNTED),
    "get_receiver": ("meta.read", "messages.read", *_COUNTED),
    "delete_receiver": ("meta.read_write", *_COUNTED),
    "list_topics": ("meta.read", *_COUNTED),
    "put_topic": ("meta.read_write", *_COUNTED),
    "get_topic": ("meta.read", "topic_messages.read", *_COUNTED),
    "delete_topic": ("meta.read_write", *_COUNTED),
    "post_topic_messages": ("meta.read", "topic_messages.write", *_COUNTED),
    "list_subscriptions": ("meta.read", *_COUNTED),
    "put_subscription": ("meta.read_write", *_COUNTED),
    "get_subscription": ("meta.read", "log.read", *_COUNTED),
    # The endpoint ACL step reads the account record whenever the container's meta cache is cold.
    "delete_subscription": ("meta.write", "meta.account", *_COUNTED),
    "get_signing_certificate": (),  # public: no table, not counted
    "not_found": (),  # the catch-all: an MNS error, nothing read
    # --- beside the API ---
    "fanout": _DELIVERY,
    "first_attempt": _DELIVERY,
    "push_worker": (*_DELIVERY, "topic_messages.read"),  # re-reads the message it retries or gives up
    "oplog": ("meta.read", "log.write"),  # a queue's account and name by its id; the records
    "sample_metrics": ("meta.read", "messages.read"),  # the queue records and the account map; each queue's counts
    "export_tables": (),  # exports (`infra.analytics.Exports`), no item access
    "snapshot_backlog": ("meta.read", "messages.read"),  # every queue's record and counts (`infra.analytics`)
    "signing_setup": (),  # the signing key's secret (`infra.push.SigningKey`)
    "console": (),  # its own files only
}
