"""Where moto's Step Functions differ from AWS in a way the push workflow depends on, made to match AWS.

moto issues one task token per state and keeps it across the state's Retry attempts, with the
first attempt's outcome attached: a retried `.waitForTaskToken` Task then fails at once with the
stale outcome instead of waiting for its own answer. AWS issues a new token for every attempt.
`apply()` makes moto do the same, so the definition the CDK app deploys behaves locally as on AWS.

moto also keeps accepting heartbeats and answers for a token whose Task has ended (timed out, or
answered) while the execution runs on; AWS refuses them (TaskTimedOut, TaskDoesNotExist), and the
push worker relies on that refusal to leave a stale retry unattempted. `apply()` marks ended tasks.

And moto refuses a heartbeat (InvalidToken) for a token whose Task has sent its SQS message but not yet
started its heartbeat clock: a worker quick enough (or an execution thread slow enough, on a loaded
machine) then takes a live retry for a stale one, skips it, and the Task waits out its heartbeat timeout.
AWS accepts a heartbeat as soon as the token is issued: `apply()` makes moto do the same.

And moto applies a TransactWriteItems again when it is sent again with the same `ClientRequestToken`; DynamoDB
applies it once (for 10 minutes) and answers the retry as it answered the first: the DynamoDB engine relies on that
when a transaction's answer was lost (`mnsd.storage.dynamodb.retries`). `apply()` makes moto do the same.

And moto backs up a table before a TransactWriteItems by a deep copy of the whole table once per item of the
transaction, to put it back if the transaction is refused: a FIFO batch delete's or claim's transaction copied a table
of a few thousand items 16 times (1.2 s a call with 50 queues of 16 messages waiting, 0.07 s on an empty table); once
per transaction, it still cost 130 ms a call on a table of 1,000 items, 500 ms on 4,000, each transaction dearer as
the table grew. `apply()` keeps instead, for each item the transaction writes, a copy of it as it was (the
transaction reads each item it writes before writing it: `DynamoDBBackend.get_item`) and the length of each table's
stream; a refused transaction puts those items back (or removes those it created) and forgets the stream records it
added: the table holds what the copy held, the same answers, for the cost of the items written.

`apply()` also applies `moto_speed`: moto's DynamoDB made cheaper with the same answers.
"""

from __future__ import annotations

import collections
import copy
import threading
import time
from typing import Any

from local_runtime import moto_speed

_applied = False
IDEMPOTENCY_SECONDS = 600  # how long DynamoDB remembers a transaction's ClientRequestToken


def apply() -> None:
    global _applied
    if _applied:
        return
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.resource import ResourceCondition
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_callback import (
        StateTaskServiceCallback,
    )

    original = StateTaskServiceCallback._eval_execution

    def eval_execution_with_a_token_per_attempt(self: Any, env: Any) -> None:
        retry_count = env.states.context_object.context_object_data["State"].get("RetryCount", 0)
        if (
            retry_count
            and self._is_integration_pattern()
            and ResourceCondition.WaitForTaskToken in self._supported_integration_patterns
        ):
            env.callback_pool_manager.add(env.states.context_object.update_task_token())
        original(self, env)

    StateTaskServiceCallback._eval_execution = eval_execution_with_a_token_per_attempt  # type: ignore[method-assign]
    _refuse_tokens_of_ended_tasks(StateTaskServiceCallback)
    _accept_heartbeats_once_issued()
    _apply_transactions_once()
    _undo_refused_transactions_item_by_item()
    moto_speed.apply()
    _applied = True


def _accept_heartbeats_once_issued() -> None:
    from moto.stepfunctions.parser.asl.eval.callback.callback import CallbackEndpoint

    original = CallbackEndpoint.notify_heartbeat

    def notify_heartbeat(self: Any) -> bool:
        original(self)
        return True  # issued and not ended (an ended Task's token is refused before this)

    CallbackEndpoint.notify_heartbeat = notify_heartbeat  # type: ignore[method-assign]


def _refuse_tokens_of_ended_tasks(callback_task: Any) -> None:
    from moto.stepfunctions.parser.asl.eval.callback.callback import (
        CallbackConsumerLeft,
        CallbackConsumerTimeout,
        CallbackOutcomeTimedOut,
        HeartbeatTimedOut,
    )

    original = callback_task._eval_wait_for_task_token

    def eval_wait_for_task_token(
        self: Any, env: Any, timeout_seconds: Any, callback_endpoint: Any, heartbeat_endpoint: Any
    ) -> Any:
        outcome = original(self, env, timeout_seconds, callback_endpoint, heartbeat_endpoint)
        timed_out = isinstance(outcome, CallbackOutcomeTimedOut | HeartbeatTimedOut)
        callback_endpoint.report(CallbackConsumerTimeout() if timed_out else CallbackConsumerLeft())
        return outcome

    callback_task._eval_wait_for_task_token = eval_wait_for_task_token


def _apply_transactions_once() -> None:
    from moto.dynamodb.responses import DynamoHandler

    original = DynamoHandler.transact_write_items
    # token: (when, the first answer), oldest first (each answer is kept when it is made, at the time it is kept): the
    # tokens past their time are the first few, and each call forgets them without looking at the others.
    answered: collections.OrderedDict[str, tuple[float, Any]] = collections.OrderedDict()
    lock = threading.Lock()

    def transact_write_items(self: Any) -> Any:
        token = self.body.get("ClientRequestToken")
        with lock:
            forget_before = time.monotonic() - IDEMPOTENCY_SECONDS
            while answered and next(iter(answered.values()))[0] < forget_before:
                answered.popitem(last=False)
            if token in answered:
                return answered[token][1]
        result = original(self)
        if token:
            with lock:
                answered.setdefault(token, (time.monotonic(), result))
        return result

    DynamoHandler.transact_write_items = transact_write_items  # type: ignore[method-assign]


def _undo_refused_transactions_item_by_item() -> None:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    # This thread's transaction, while it runs: each table it names (with its stream's length) and each item it reads
    # before writing (with a copy of it as it was); None outside a transaction.
    undo = threading.local()
    transact, get_item = DynamoDBBackend.transact_write_items, DynamoDBBackend.get_item

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        undo.tables, undo.items = {}, {}
        try:
            original = transact(self, transact_items)
        except BaseException:  # moto rolled the transaction back (it raises only then, or before any write)
            _put_back(undo.tables, undo.items)
            raise
        finally:
            undo.tables = undo.items = None
        return original

    def get_item_kept_as_it_was(self: Any, table_name: str, keys: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        items = getattr(undo, "items", None)
        if items is not None:
            try:
                table = self.get_table(table_name)
                hash_key, range_key = self.get_keys_value(table, keys)
            except Exception:  # moto's own get_item refuses it the same way
                return get_item(self, table_name, keys, *args, **kwargs)
            _note(items, table, hash_key, range_key)
        return get_item(self, table_name, keys, *args, **kwargs)

    def table_as_it_is(self: Any, memo: dict[int, Any]) -> Any:
        """Within a transaction (moto's backup of a table it names): the table itself, its stream's length noted; a
        table whose stream feeds a Lambda mapping (moto may empty its records as it hands them on) is copied whole,
        as moto does. Elsewhere: a deep copy, as without this method."""
        tables = getattr(undo, "tables", None)
        if tables is None or self.lambda_event_source_mappings:
            return _deep_copy(self, memo)
        if id(self) not in tables:
            tables[id(self)] = (self, None if self.stream_shard is None else len(self.stream_shard.items))
        return self

    DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
    DynamoDBBackend.get_item = get_item_kept_as_it_was  # type: ignore[method-assign]
    Table.__deepcopy__ = table_as_it_is  # type: ignore[attr-defined]


def _note(items: dict[tuple[int, Any, Any], Any], table: Any, hash_key: Any, range_key: Any) -> None:
    """An item a transaction is about to write, kept as it was (None: absent) the first time it reads it."""
    mark = (id(table), hash_key, range_key if table.has_range_key else None)
    if mark in items:
        return
    had_partition = hash_key in table.items
    before = table.items.get(hash_key) if had_partition else None
    if table.has_range_key and before is not None:
        before = before.get(range_key)
    items[mark] = (table, had_partition, copy.deepcopy(before))


def _deep_copy(table: Any, memo: dict[int, Any]) -> Any:
    """A deep copy of a table, as `copy.deepcopy` makes it without a `__deepcopy__`."""
    cls: Any = type(table)
    new = cls.__new__(cls)
    memo[id(table)] = new
    for name, value in table.__dict__.items():
        new.__dict__[name] = copy.deepcopy(value, memo)
    return new


def _put_back(tables: dict[int, tuple[Any, int | None]], items: dict[tuple[int, Any, Any], Any]) -> None:
    """A refused transaction undone: each item it read put back as it was (one it created removed, and the partition
    it opened), each table's stream cut back to its length before the transaction."""
    for (_, hash_key, range_key), (table, had_partition, before) in reversed(items.items()):
        if not table.has_range_key:
            if before is None:
                table.items.pop(hash_key, None)
            else:
                table.items[hash_key] = before
            continue
        partition = table.items.get(hash_key)
        if partition is None:
            partition = table.items[hash_key] = {}
        if before is None:
            partition.pop(range_key, None)
        else:
            partition[range_key] = before
        if not partition and not had_partition:
            del table.items[hash_key]
    for table, length in tables.values():
        if length is not None and table.stream_shard is not None:
            del table.stream_shard.items[length:]
