"""A DynamoDB simulator: in memory, shaped as a low-level boto3 client, fast, with DynamoDB's billing per partition.

It implements what the service's DynamoDB engine calls: create_table (key schema, global secondary
indexes with their projection; streams, TTL and backups accepted), describe_table, put_item,
batch_write_item, get_item, batch_get_item, update_item, delete_item, query (table or index, Limit,
ExclusiveStartKey, ScanIndexForward, Select COUNT, ProjectionExpression, FilterExpression) and
transact_write_items, with ConditionExpression / UpdateExpression evaluated as DynamoDB does
(`tests/support/simulator/expressions.py`) and errors raised as botocore `ClientError`s with DynamoDB's codes.

Each partition keeps its sort keys in a sorted list, so a query costs O(log n + page), not O(partition).
Every call is billed by DynamoDB's size rules (`mnsd.storage.capacity`, the rules `tests/support/recording.py`
applies over moto) and charged to the partitions it touched, base table and index partitions alike:
  writes     1 WCU per KB of the larger of the item before and after, per item; a failed condition
             bills the item present (1 if absent); each index entry written is one more write of its
             projected size, an index sort-key change a delete plus a put; transactions bill double;
  reads      4 KB units of what was read (a query: the evaluated items' total, rounded once; an index
             query: their projected size), eventually consistent reads half.
With `throttle=True`, a partition that already consumed 1,000 WCU (or 3,000 RCU) in the current
second of `now()` refuses further requests with ProvisionedThroughputExceededException (BatchWriteItem
returns the refused items as UnprocessedItems) — DynamoDB's per-partition ceiling, without its
burst and adaptive capacity.

A query that stops at its Limit returns a LastEvaluatedKey, as DynamoDB does (moto only returns one
when more items follow); a page also stops at 1 MB of evaluated items.
"""

from __future__ import annotations

import bisect
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from mnsd.storage.capacity import item_size, read_units, value_size, write_units
from tests.support.recording import Call
from tests.support.simulator import expressions as ex

Item = ex.Item
Partition = tuple[str, str, Any]  # (table, index name or "", partition key value)

WCU_PER_PARTITION = 1000
RCU_PER_PARTITION = 3000
PAGE_BYTES = 1024 * 1024
_ERRORS = (
    "ConditionalCheckFailedException",
    "TransactionCanceledException",
    "ProvisionedThroughputExceededException",
    "ResourceNotFoundException",
    "ResourceInUseException",
    "ValidationException",
)


class _Stored(dict[str, ex.Value]):
    """An item (or index entry) as the simulator stores it, with its size computed once: stored items are never
    changed in place (an update makes a new one), and callers only ever get copies."""

    __slots__ = ("size", "entries")

    def __init__(self, item: Item, base: _Stored | None = None) -> None:
        """`base`: the item `item` was made from by an update, sharing the values it left alone."""
        super().__init__(item)
        self.size = item_size(item) if base is None else _size_from(item, base)
        self.entries: dict[str, tuple[Any, Any, Item] | None] = {}  # its entry in each index, once computed


def _size_from(item: Item, base: _Stored) -> int:
    """`item_size(item)`, from the size of `base` and the attributes that differ from it."""
    size = base.size
    for name, value in item.items():
        old = base.get(name)
        if old is None:
            size += len(name.encode()) + value_size(value)
        elif old is not value:
            size += value_size(value) - value_size(old)
    for name, old in base.items():
        if name not in item:
            size -= len(name.encode()) + value_size(old)
    return size


def _size(item: Item) -> int:
    return item.size if isinstance(item, _Stored) else item_size(item)


def _stored(item: Item) -> _Stored:
    return item if isinstance(item, _Stored) else _Stored(item)


class _Exceptions:
    """`client.exceptions.<Code>`: ClientError subclasses, as boto3's modeled exceptions are."""

    def __init__(self) -> None:
        for code in _ERRORS:
            setattr(self, code, type(code, (ClientError,), {}))
        self.ClientError = ClientError


@dataclass
class SimulatedCall(Call):
    """A recorded call: `Call`'s fields (base-table units in wcu/rcu) plus index writes and partitions."""

    index_wcu: float = 0.0
    throttled: bool = False
    partitions: tuple[Partition, ...] = ()


@dataclass
class Usage:
    """What the calls consumed: totals per operation and per (second, partition)."""

    requests: Counter[str] = field(default_factory=Counter)
    wcu: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    rcu: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    failed_conditions: Counter[str] = field(default_factory=Counter)
    throttled: Counter[str] = field(default_factory=Counter)
    throttled_per_second: Counter[int] = field(default_factory=Counter)
    per_second: dict[int, dict[Partition, list[float]]] = field(default_factory=lambda: defaultdict(dict))
    calls: list[SimulatedCall] | None = None

    def reset(self) -> None:
        for counter in (
            self.requests,
            self.wcu,
            self.rcu,
            self.failed_conditions,
            self.throttled,
            self.throttled_per_second,
        ):
            counter.clear()
        self.per_second.clear()
        if self.calls is not None:
            self.calls.clear()

    def charge(self, second: int, partition: Partition, wcu: float, rcu: float) -> None:
        loads = self.per_second[second].get(partition)
        if loads is None:
            self.per_second[second][partition] = [wcu, rcu]
        else:
            loads[0] += wcu
            loads[1] += rcu

    def load(self, second: int, partition: Partition) -> list[float]:
        return self.per_second.get(second, {}).get(partition, [0.0, 0.0])

    def hottest(self, second: int) -> tuple[float, float, Partition | None, Partition | None]:
        """The largest WCU and RCU one partition consumed in `second`, and which partitions."""
        loads = self.per_second.get(second, {})
        if not loads:
            return 0.0, 0.0, None, None
        w = max(loads, key=lambda p: loads[p][0])
        r = max(loads, key=lambda p: loads[p][1])
        return loads[w][0], loads[r][1], w, r


@dataclass
class _Index:
    name: str  # "" for the table itself
    hash: str
    range: str | None
    projection: str = "ALL"  # ALL, KEYS_ONLY, INCLUDE
    include: frozenset[str] = frozenset()
    projected: frozenset[str] = frozenset()  # the attributes an entry keeps (INCLUDE, KEYS_ONLY), set by the table
    keys: dict[Any, list[Any]] = field(default_factory=dict)  # partition value -> sorted entry keys
    entries: dict[tuple[Any, Any], Item] = field(default_factory=dict)  # (partition, entry key) -> item


class _Table:
    def __init__(self, name: str, key_schema: list[dict[str, str]], definitions: list[dict[str, str]]) -> None:
        self.name = name
        self.types = {d["AttributeName"]: d["AttributeType"] for d in definitions}
        hash_key, range_key = _schema(key_schema)
        self.base = _Index("", hash_key, range_key)
        self.indexes: dict[str, _Index] = {}
        self.items: dict[tuple[Any, Any], _Stored] = {}
        self.description: dict[str, Any] = {}

    def key_of(self, item: Item) -> tuple[Any, Any]:
        """(partition value, sort value) of a full item or a key; ValidationException if malformed."""
        names = (self.base.hash,) + ((self.base.range,) if self.base.range else ())
        for name in names:
            value = item.get(name)
            if value is None or next(iter(value)) != self.types.get(name):
                raise _validation("One or more parameter values were invalid: Missing the key " + name)
        hash_value = ex.scalar(item[self.base.hash])[1]
        range_value = ex.scalar(item[self.base.range])[1] if self.base.range else None
        return hash_value, range_value

    def check_key(self, key: Item) -> tuple[Any, Any]:
        if len(key) != (2 if self.base.range else 1):
            raise _validation("The provided key element does not match the schema")
        return self.key_of(key)

    def key_item(self, item: Item) -> Item:
        return {n: item[n] for n in (self.base.hash, self.base.range) if n}


def _schema(key_schema: list[dict[str, str]]) -> tuple[str, str | None]:
    hash_key = next(k["AttributeName"] for k in key_schema if k["KeyType"] == "HASH")
    range_key = next((k["AttributeName"] for k in key_schema if k["KeyType"] == "RANGE"), None)
    return hash_key, range_key


def _validation(message: str) -> Exception:
    return _client_error("ValidationException", message, "")


def _client_error(code: str, message: str, operation: str, **extra: Any) -> ClientError:
    response = {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": 400, "RequestId": "simulated"},
        **extra,
    }
    error_class = getattr(_EXCEPTIONS, code, ClientError)
    return error_class(response, operation)


_EXCEPTIONS = _Exceptions()


class _Refused(Exception):
    """A write refused: its condition failed (`item` the item present) or its partition throttled."""

    def __init__(self, code: str, item: Item | None) -> None:
        self.code = code
        self.item = item


@dataclass
class _Write:
    """One item's planned write: the items before and after, and its units per partition."""

    table: _Table
    key: tuple[Any, Any]
    before: _Stored | None
    after: _Stored | None
    wcu: float
    index_loads: list[tuple[Partition, float]]
    index_changes: list[tuple[_Index, Any, Any, Item | None]]  # (index, old entry, new entry, projected)


class SimulatedDynamoDB:
    """The simulated DynamoDB client. `now()` gives the time calls are charged to (a simulated clock's, or the wall clock's)."""

    def __init__(
        self, now: Callable[[], float] = time.time, throttle: bool = False, record_calls: bool = False
    ) -> None:
        self.now = now
        self.throttle = throttle
        self.tables: dict[str, _Table] = {}
        self.usage = Usage(calls=[] if record_calls else None)
        self.exceptions = _EXCEPTIONS

    # --- control plane ---------------------------------------------------------------------------

    def create_table(self, **kwargs: Any) -> dict[str, Any]:
        name = kwargs["TableName"]
        if name in self.tables:
            raise _client_error("ResourceInUseException", f"Table already exists: {name}", "CreateTable")
        table = _Table(name, kwargs["KeySchema"], kwargs["AttributeDefinitions"])
        for spec in kwargs.get("GlobalSecondaryIndexes", []):
            self._add_index(table, spec)
        table.description = {
            "TableName": name,
            "TableStatus": "ACTIVE",
            "KeySchema": kwargs["KeySchema"],
            "AttributeDefinitions": kwargs["AttributeDefinitions"],
            "BillingModeSummary": {"BillingMode": kwargs.get("BillingMode", "PROVISIONED")},
            "TableArn": f"arn:aws:dynamodb:us-east-1:123456789012:table/{name}",
        }
        if "GlobalSecondaryIndexes" in kwargs:
            table.description["GlobalSecondaryIndexes"] = [
                {**spec, "IndexStatus": "ACTIVE"} for spec in kwargs["GlobalSecondaryIndexes"]
            ]
        if "StreamSpecification" in kwargs:
            table.description["StreamSpecification"] = kwargs["StreamSpecification"]
        self.tables[name] = table
        return {"TableDescription": table.description}

    def _add_index(self, table: _Table, spec: dict[str, Any]) -> None:
        hash_key, range_key = _schema(spec["KeySchema"])
        projection = spec.get("Projection", {})
        index = _Index(
            spec["IndexName"],
            hash_key,
            range_key,
            projection.get("ProjectionType", "ALL"),
            frozenset(projection.get("NonKeyAttributes", [])),
        )
        keys = {table.base.hash, index.hash} | {n for n in (table.base.range, index.range) if n}
        index.projected = frozenset(keys | (index.include if index.projection == "INCLUDE" else set()))
        table.indexes[index.name] = index
        for item in table.items.values():
            entry = self._index_entry(table, index, item)
            if entry is not None:
                self._index_put(index, entry[0], entry[1], entry[2])

    def update_table(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "UpdateTable")
        for definition in kwargs.get("AttributeDefinitions", []):
            table.types[definition["AttributeName"]] = definition["AttributeType"]
        for change in kwargs.get("GlobalSecondaryIndexUpdates", []):
            if "Create" in change:
                self._add_index(table, change["Create"])
            elif "Delete" in change:
                table.indexes.pop(change["Delete"]["IndexName"], None)
        return {"TableDescription": table.description}

    def describe_table(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "DescribeTable")
        return {"Table": {**table.description, "ItemCount": len(table.items)}}

    def list_tables(self, **kwargs: Any) -> dict[str, Any]:
        return {"TableNames": sorted(self.tables)}

    def delete_table(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "DeleteTable")
        del self.tables[table.name]
        return {"TableDescription": table.description}

    def update_time_to_live(self, **kwargs: Any) -> dict[str, Any]:
        self._table(kwargs["TableName"], "UpdateTimeToLive")
        return {"TimeToLiveSpecification": kwargs["TimeToLiveSpecification"]}

    def update_continuous_backups(self, **kwargs: Any) -> dict[str, Any]:
        self._table(kwargs["TableName"], "UpdateContinuousBackups")
        return {"ContinuousBackupsDescription": {"ContinuousBackupsStatus": "ENABLED"}}

    def _table(self, name: str, operation: str) -> _Table:
        table = self.tables.get(name)
        if table is None:
            raise _client_error("ResourceNotFoundException", "Requested resource not found", operation)
        return table

    # --- indexes ---------------------------------------------------------------------------------

    def _index_entry(self, table: _Table, index: _Index, item: Item) -> tuple[Any, Any, Item] | None:
        """(partition value, entry key, projected item) of `item` in `index`, None if the index skips it."""
        if not isinstance(item, _Stored):
            return self._new_index_entry(table, index, item)
        if index.name not in item.entries:
            item.entries[index.name] = self._new_index_entry(table, index, item)
        return item.entries[index.name]

    def _new_index_entry(self, table: _Table, index: _Index, item: Item) -> tuple[Any, Any, Item] | None:
        hash_value = item.get(index.hash)
        range_value = item.get(index.range) if index.range else None
        if hash_value is None or (index.range and range_value is None):
            return None
        base_hash, base_range = table.key_of(item)
        if index.projection == "ALL":
            projected: Item = item
        else:
            names = index.projected
            projected = _Stored({n: v for n, v in item.items() if n in names})
        sort = ex.scalar(range_value)[1] if range_value is not None else None
        return ex.scalar(hash_value)[1], (sort, base_hash, base_range), projected

    @staticmethod
    def _index_put(index: _Index, partition: Any, entry: Any, item: Item) -> None:
        if (partition, entry) not in index.entries:
            keys = index.keys.setdefault(partition, [])
            if not keys or keys[-1] < entry:
                keys.append(entry)
            else:
                bisect.insort(keys, entry)
        index.entries[(partition, entry)] = item

    @staticmethod
    def _index_remove(index: _Index, partition: Any, entry: Any) -> None:
        if index.entries.pop((partition, entry), None) is None:
            return
        keys = index.keys[partition]
        position = bisect.bisect_left(keys, entry)
        del keys[position]
        if not keys:
            del index.keys[partition]

    # --- writes ----------------------------------------------------------------------------------

    def _plan(self, table: _Table, key: tuple[Any, Any], after: Item | None) -> _Write:
        before = table.items.get(key)
        if after is not None:
            after = _stored(after)
        size = max(before.size if before else 0, after.size if after else 0)
        loads: list[tuple[Partition, float]] = []
        changes: list[tuple[_Index, Any, Any, Item | None]] = []
        for index in table.indexes.values():
            old = self._index_entry(table, index, before) if before else None
            new = self._index_entry(table, index, after) if after else None
            if old is None and new is None:
                continue
            moved = old is not None and new is not None and (old[0], old[1]) != (new[0], new[1])
            if old is not None and (new is None or moved):
                loads.append(((table.name, index.name, old[0]), write_units(_size(old[2]))))
            if new is not None and (old is None or moved or old[2] != new[2]):
                loads.append(((table.name, index.name, new[0]), write_units(_size(new[2]))))
            changes.append((index, old, new, None))
        return _Write(table, key, before, after, write_units(size), loads, changes)

    def _commit(self, write: _Write) -> None:
        table = write.table
        if write.after is None:
            if table.items.pop(write.key, None) is not None and table.base.range is not None:
                self._index_remove(table.base, write.key[0], write.key[1])
        else:
            if write.before is None and table.base.range is not None:
                self._index_put(table.base, write.key[0], write.key[1], {})
            table.items[write.key] = write.after
        for index, old, new, _ in write.index_changes:
            if old is not None and (new is None or (old[0], old[1]) != (new[0], new[1])):
                self._index_remove(index, old[0], old[1])
            if new is not None:
                self._index_put(index, new[0], new[1], new[2])

    def _over(self, partition: Partition, wcu: float, rcu: float) -> bool:
        if not self.throttle:
            return False
        used = self.usage.load(int(self.now()), partition)
        return (wcu > 0 and used[0] >= WCU_PER_PARTITION) or (rcu > 0 and used[1] >= RCU_PER_PARTITION)

    def _write_throttled(self, write: _Write) -> bool:
        base = (write.table.name, "", write.key[0])
        return self._over(base, write.wcu, 0) or any(self._over(p, w, 0) for p, w in write.index_loads)

    def _record(
        self,
        op: str,
        table: str,
        charges: list[tuple[Partition, float, float]],
        *,
        written: int = 0,
        read: int = 0,
        failed: bool = False,
        throttled: bool = False,
        detail: str = "",
    ) -> None:
        usage = self.usage
        second = int(self.now())
        base_w = sum(w for p, w, _ in charges if not p[1])
        index_w = sum(w for p, w, _ in charges if p[1])
        r = sum(r for _, _, r in charges)
        usage.requests[op] += 1
        usage.wcu[op] += base_w + index_w
        usage.rcu[op] += r
        if failed:
            usage.failed_conditions[op] += 1
        if throttled:
            usage.throttled[op] += 1
            usage.throttled_per_second[second] += 1
        for partition, w, rr in charges:
            usage.charge(second, partition, w, rr)
        if usage.calls is not None:
            usage.calls.append(
                SimulatedCall(
                    op,
                    table,
                    written,
                    read,
                    base_w,
                    r,
                    failed,
                    detail,
                    index_wcu=index_w,
                    throttled=throttled,
                    partitions=tuple(p for p, _, _ in charges),
                )
            )

    def _charges(self, write: _Write, failed: bool = False, factor: int = 1) -> list[tuple[Partition, float, float]]:
        base: list[tuple[Partition, float, float]] = [((write.table.name, "", write.key[0]), factor * write.wcu, 0.0)]
        if failed:
            return base
        return base + [(p, factor * w, 0.0) for p, w in write.index_loads]

    def _throttled(self, op: str, table: str) -> ClientError:
        self._record(op, table, [], throttled=True)
        return _client_error(
            "ProvisionedThroughputExceededException",
            "The level of configured provisioned throughput for the table was exceeded.",
            op,
        )

    def _conditional_write(
        self,
        op: str,
        kwargs: dict[str, Any],
        table: _Table,
        key: tuple[Any, Any],
        make_after: Callable[[Item | None], Item | None],
    ) -> dict[str, Any]:
        context = _context(kwargs)
        compiled_condition = _compile_condition(kwargs)
        _check_placeholders(kwargs, [compiled_condition, kwargs.get("_update")])
        if self._over((table.name, "", key[0]), 1, 0):  # (the base partition is checked first in any case)
            raise self._throttled(op, table.name)
        before = table.items.get(key)
        planned_failure = compiled_condition is not None and not compiled_condition.run(before or {}, context)
        after = None if planned_failure else make_after(before)
        write = self._plan(table, key, after if not planned_failure else before)
        if self._write_throttled(write):
            raise self._throttled(op, table.name)
        if planned_failure:
            failure = self._plan(table, key, before)
            self._record(op, table.name, self._charges(failure, failed=True), written=1, failed=True)
            extra = {}
            if kwargs.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and before is not None:
                extra["Item"] = ex.copy_item(before)
            raise _client_error("ConditionalCheckFailedException", "The conditional request failed", op, **extra)
        self._commit(write)
        self._record(op, table.name, self._charges(write), written=1)
        return _returned(kwargs.get("ReturnValues", "NONE"), before, after)

    def put_item(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "PutItem")
        item = ex.copy_item(kwargs["Item"])
        key = table.key_of(item)
        return self._conditional_write("PutItem", kwargs, table, key, lambda before: item)

    def update_item(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "UpdateItem")
        key = table.check_key(kwargs["Key"])
        compiled = _guard(ex.update, kwargs["UpdateExpression"]) if "UpdateExpression" in kwargs else None
        context = _context(kwargs)
        if compiled is not None:
            keys = {table.base.hash, table.base.range}
            if any(path[0] in keys for path in compiled.paths(context)):
                raise _validation("Cannot update attribute: this attribute is part of the key")

        def make_after(before: Item | None) -> Item:
            start = before if before is not None else ex.copy_item(kwargs["Key"])
            if compiled is None:
                return ex.copy_item(start)
            after = _guard(ex.apply_update, compiled, start, context)
            return _Stored(after, before) if isinstance(before, _Stored) else after

        return self._conditional_write("UpdateItem", {**kwargs, "_update": compiled}, table, key, make_after)

    def delete_item(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "DeleteItem")
        key = table.check_key(kwargs["Key"])
        return self._conditional_write("DeleteItem", kwargs, table, key, lambda before: None)

    def batch_write_item(self, **kwargs: Any) -> dict[str, Any]:
        writes: list[tuple[str, dict[str, Any], _Table, tuple[Any, Any], Item | None]] = []
        count = sum(len(requests) for requests in kwargs["RequestItems"].values())
        if count > 25:
            raise _validation("Too many items requested for the BatchWriteItem call")
        seen: set[tuple[str, Any]] = set()
        for name, requests in kwargs["RequestItems"].items():
            table = self._table(name, "BatchWriteItem")
            for request in requests:
                if "PutRequest" in request:
                    item = request["PutRequest"]["Item"]
                    key, after = table.key_of(item), item
                else:
                    key, after = table.check_key(request["DeleteRequest"]["Key"]), None
                if (name, key) in seen:
                    raise _validation("Provided list of item keys contains duplicates")
                seen.add((name, key))
                writes.append((name, request, table, key, after))
        unprocessed: dict[str, list[dict[str, Any]]] = {}
        charges: list[tuple[Partition, float, float]] = []
        done = 0
        for name, request, table, key, after in writes:
            if self._over((table.name, "", key[0]), 1, 0):
                unprocessed.setdefault(name, []).append(request)
                continue
            write = self._plan(table, key, None if after is None else ex.copy_item(after))
            if self._write_throttled(write):
                unprocessed.setdefault(name, []).append(request)
                continue
            self._commit(write)
            charges += self._charges(write)
            done += 1
        table_name = next(iter(kwargs["RequestItems"]), "")
        if not done and writes:
            raise self._throttled("BatchWriteItem", table_name)
        self._record(
            "BatchWriteItem", table_name, charges, written=done, throttled=bool(unprocessed), detail=f"{done} items"
        )
        return {"UnprocessedItems": unprocessed}

    def transact_write_items(self, **kwargs: Any) -> dict[str, Any]:
        actions = kwargs["TransactItems"]
        if len(actions) > 100:
            raise _validation("Member must have length less than or equal to 100")
        planned: list[_Write] = []
        reasons: list[dict[str, Any]] = []
        seen: set[tuple[str, Any]] = set()
        for action in actions:
            write, reason = self._transact_plan(action)
            if (write.table.name, write.key) in seen:
                raise _validation("Transaction request cannot include multiple operations on one item")
            seen.add((write.table.name, write.key))
            planned.append(write)
            reasons.append(reason)
        failed = any(r["Code"] != "None" for r in reasons)
        table_name = planned[0].table.name if planned else ""
        if any(self._write_throttled(w) for w in planned):
            raise self._throttled("TransactWriteItems", table_name)
        charges = [c for w in planned for c in self._charges(w, failed=failed, factor=2)]
        if failed:
            self._record("TransactWriteItems", table_name, charges, written=len(planned), failed=True)
            codes = ", ".join(r["Code"] for r in reasons)
            raise _client_error(
                "TransactionCanceledException",
                f"Transaction cancelled, please refer cancellation reasons for specific reasons [{codes}]",
                "TransactWriteItems",
                CancellationReasons=reasons,
            )
        for write in planned:
            self._commit(write)
        self._record("TransactWriteItems", table_name, charges, written=len(planned))
        return {}

    def _transact_plan(self, action: dict[str, Any]) -> tuple[_Write, dict[str, Any]]:
        """One action of a transaction: its planned write (the item unchanged if it fails) and its reason."""
        ((kind, spec),) = action.items()
        table = self._table(spec["TableName"], "TransactWriteItems")
        context = _context(spec)
        compiled_condition = _compile_condition(spec)
        compiled_update = _guard(ex.update, spec["UpdateExpression"]) if kind == "Update" else None
        _check_placeholders(spec, [compiled_condition, compiled_update])
        key = table.key_of(spec["Item"]) if kind == "Put" else table.check_key(spec["Key"])
        before = table.items.get(key)
        if compiled_condition is not None and not compiled_condition.run(before or {}, context):
            reason: dict[str, Any] = {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
            if spec.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and before is not None:
                reason["Item"] = ex.copy_item(before)
            return self._plan(table, key, before), reason
        after: Item | None = before
        if kind == "Put":
            after = ex.copy_item(spec["Item"])
        elif kind == "Update":
            start = before if before is not None else ex.copy_item(spec["Key"])
            after = _guard(ex.apply_update, compiled_update, start, context)
        elif kind == "Delete":
            after = None
        return self._plan(table, key, after), {"Code": "None"}

    # --- reads -----------------------------------------------------------------------------------

    def get_item(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "GetItem")
        key = table.check_key(kwargs["Key"])
        consistent = bool(kwargs.get("ConsistentRead"))
        item = table.items.get(key)
        size = item.size if item else 0
        partition = (table.name, "", key[0])
        units = read_units(size, consistent)
        if self._over(partition, 0, units):
            raise self._throttled("GetItem", table.name)
        self._record("GetItem", table.name, [(partition, 0.0, units)], read=1 if item else 0)
        if item is None:
            return {}
        return {"Item": _projected(item, kwargs)}

    def batch_get_item(self, **kwargs: Any) -> dict[str, Any]:
        responses: dict[str, list[Item]] = {}
        charges: list[tuple[Partition, float, float]] = []
        for name, spec in kwargs["RequestItems"].items():
            table = self._table(name, "BatchGetItem")
            consistent = bool(spec.get("ConsistentRead"))
            found = responses.setdefault(name, [])
            for key_item in spec["Keys"]:
                key = table.check_key(key_item)
                item = table.items.get(key)
                if item is not None:
                    charges.append(((name, "", key[0]), 0.0, read_units(item.size, consistent)))
                    found.append(_projected(item, spec))
        table_name = next(iter(kwargs["RequestItems"]), "")
        self._record("BatchGetItem", table_name, charges, read=len(charges))
        return {"Responses": responses, "UnprocessedKeys": {}}

    def query(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "Query")
        index_name = kwargs.get("IndexName", "")
        index = table.base if not index_name else table.indexes.get(index_name)
        if index is None:
            raise _validation(f"The table does not have the specified index: {index_name}")
        context = _context(kwargs)
        parts = _guard(ex.key_condition, kwargs["KeyConditionExpression"])
        hash_value, low, high, prefix, used = self._key_range(table, index, parts, context)
        filter_compiled = _guard(ex.condition, kwargs["FilterExpression"]) if "FilterExpression" in kwargs else None
        projection_names: frozenset[str] = frozenset()
        paths: tuple[ex.Path, ...] | None = None
        if "ProjectionExpression" in kwargs:
            paths, projection_names = _guard(ex.projection, kwargs["ProjectionExpression"])
        _check_placeholders(kwargs, [filter_compiled], extra_names=projection_names | used[0], extra_values=used[1])
        forward = kwargs.get("ScanIndexForward", True)
        limit = kwargs.get("Limit")
        consistent = bool(kwargs.get("ConsistentRead"))
        if consistent and index_name:
            raise _validation("Consistent reads are not supported on global secondary indexes")
        partition = (table.name, index_name, hash_value)
        if self._over(partition, 0, 0.5):
            raise self._throttled("Query", table.name)
        start = self._start_key(table, index, kwargs.get("ExclusiveStartKey"))
        evaluated: list[Item] = []
        total = 0
        last: Any = None
        stopped = False
        for entry in self._range(index, hash_value, low, high, prefix, forward, start):
            item = index.entries[(hash_value, entry)] if index_name else table.items[(hash_value, entry)]
            size = _size(item)
            if evaluated and total + size > PAGE_BYTES:
                stopped = True
                break
            evaluated.append(item)
            total += size
            last = entry
            if limit is not None and len(evaluated) >= limit:
                stopped = True
                break
        matched = evaluated if filter_compiled is None else [i for i in evaluated if filter_compiled.run(i, context)]
        units = read_units(total, consistent)
        self._record(
            "Query",
            table.name,
            [(partition, 0.0, units)],
            read=len(evaluated),
            detail=f"{len(evaluated)} items evaluated, {total} B",
        )
        response: dict[str, Any] = {"Count": len(matched), "ScannedCount": len(evaluated)}
        if kwargs.get("Select") != "COUNT":
            response["Items"] = [
                ex.copy_item(ex.project(i, paths, context) if paths is not None else i) for i in matched
            ]
        if stopped and last is not None:
            response["LastEvaluatedKey"] = self._last_key(table, index, hash_value, last, evaluated[-1])
        return response

    def _key_range(
        self, table: _Table, index: _Index, parts: tuple[tuple[str, str, tuple[str, ...]], ...], context: ex.Context
    ) -> tuple[Any, Any, Any, Any, tuple[frozenset[str], frozenset[str]]]:
        names, values = set(), set()

        def name_of(token: str) -> str:
            if token.startswith("#"):
                names.add(token)
                return ex.resolve((token,), context)[0]  # type: ignore[return-value]
            return token

        def value_of(token: str) -> Any:
            values.add(token)
            if token not in context.values:
                raise _validation(
                    f"An expression attribute value used in expression is not defined; attribute value: {token}"
                )
            return ex.scalar(context.values[token])[1]

        hash_value = low = high = prefix = None
        found_hash = False
        for attribute, op, operands in parts:
            attribute = name_of(attribute)
            if attribute == index.hash and op == "=":
                hash_value, found_hash = value_of(operands[0]), True
            elif attribute == index.range:
                low, high, prefix = _bounds(op, [value_of(o) for o in operands])
            else:
                raise _validation("Query condition missed key schema element")
        if not found_hash:
            raise _validation("Query condition missed key schema element: " + index.hash)
        return hash_value, low, high, prefix, (frozenset(names), frozenset(values))

    def _start_key(self, table: _Table, index: _Index, start: Item | None) -> Any:
        if not start:
            return None
        base_hash, base_range = table.key_of(start)
        if not index.name:
            return base_range
        sort = ex.scalar(start[index.range])[1] if index.range else None
        return (sort, base_hash, base_range)

    @staticmethod
    def _range(
        index: _Index, hash_value: Any, low: Any, high: Any, prefix: Any, forward: bool, start: Any
    ) -> Iterator[Any]:
        keys = index.keys.get(hash_value, [])
        lo, hi = _span(keys, index.name, low, high, prefix)
        if start is not None:
            if forward:
                lo = max(lo, bisect.bisect_right(keys, start))
            else:
                hi = min(hi, bisect.bisect_left(keys, start))
        positions = range(lo, hi) if forward else range(hi - 1, lo - 1, -1)
        for position in positions:
            entry = keys[position]
            if prefix is not None and not _starts(entry[0] if index.name else entry, prefix):
                continue  # only past the last code point, where no successor exists
            yield entry

    def _last_key(self, table: _Table, index: _Index, hash_value: Any, entry: Any, item: Item) -> Item:
        key = {n: item[n] for n in (table.base.hash, table.base.range) if n}
        if index.name:
            key[index.hash] = item[index.hash]
            if index.range:
                key[index.range] = item[index.range]
        return ex.copy_item(key)

    # --- scans (tests only) ---------------------------------------------------------------------------

    def scan(self, **kwargs: Any) -> dict[str, Any]:
        table = self._table(kwargs["TableName"], "Scan")
        items = [ex.copy_item(i) for i in table.items.values()]
        total = sum(item_size(i) for i in items)
        self._record("Scan", table.name, [((table.name, "", "*"), 0.0, read_units(total, False))], read=len(items))
        return {"Items": items, "Count": len(items), "ScannedCount": len(items)}


def _bounds(op: str, values: list[Any]) -> tuple[Any, Any, Any]:
    """(low, high, prefix) of a sort-key condition; low and high as (value, inclusive)."""
    if op == "=":
        return (values[0], True), (values[0], True), None
    if op in ("<", "<="):
        return None, (values[0], op == "<="), None
    if op in (">", ">="):
        return (values[0], op == ">="), None, None
    if op == "BETWEEN":
        return (values[0], True), (values[1], True), None
    return None, None, values[0]


def _span(keys: list[Any], indexed: str, low: Any, high: Any, prefix: Any) -> tuple[int, int]:
    """The positions [lo, hi) of the entries within the sort-key condition."""

    def boundary(value: Any) -> Any:
        return (value,) if indexed else value

    lo, hi = 0, len(keys)
    if prefix is not None:
        lo = bisect.bisect_left(keys, boundary(prefix))
        successor = _successor(prefix)
        if successor is not None:
            hi = bisect.bisect_left(keys, boundary(successor))
    if low is not None:
        lo = bisect.bisect_left(keys, boundary(low[0])) if low[1] else _after(keys, low[0], indexed)
    if high is not None:
        hi = _after(keys, high[0], indexed) if high[1] else bisect.bisect_left(keys, boundary(high[0]))
    return lo, hi


def _after(keys: list[Any], value: Any, indexed: str) -> int:
    """The position after every entry whose sort value is <= value."""
    if not indexed:
        return bisect.bisect_right(keys, value)
    return bisect.bisect_right(keys, (value, _ABOVE))


class _Above:
    """Sorts above every key value: (v, _ABOVE) follows every index entry (v, partition, sort) of v."""

    def __lt__(self, other: object) -> bool:
        return False

    def __gt__(self, other: object) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return other is self

    __hash__ = object.__hash__


_ABOVE = _Above()


def _successor(prefix: Any) -> Any:
    """The smallest value above every value starting with `prefix` (None if there is none)."""
    if isinstance(prefix, str):
        trimmed = prefix.rstrip("\U0010ffff")
        return trimmed[:-1] + chr(ord(trimmed[-1]) + 1) if trimmed else None
    trimmed_bytes = bytes(prefix).rstrip(b"\xff")
    return trimmed_bytes[:-1] + bytes([trimmed_bytes[-1] + 1]) if trimmed_bytes else None


def _starts(value: Any, prefix: Any) -> bool:
    return isinstance(value, (str, bytes)) and value.startswith(prefix)


def _context(kwargs: dict[str, Any]) -> ex.Context:
    return ex.Context(kwargs.get("ExpressionAttributeNames") or {}, kwargs.get("ExpressionAttributeValues") or {})


def _guard(function: Callable[..., Any], *args: Any) -> Any:
    try:
        return function(*args)
    except ex.ExpressionError as exc:
        raise _validation(str(exc)) from None


def _compile_condition(kwargs: dict[str, Any]) -> ex.Compiled | None:
    text = kwargs.get("ConditionExpression")
    return None if text is None else _guard(ex.condition, text)


def _check_placeholders(
    kwargs: dict[str, Any],
    compiled: list[Any],
    extra_names: frozenset[str] = frozenset(),
    extra_values: frozenset[str] = frozenset(),
) -> None:
    names = set(extra_names)
    values = set(extra_values)
    for c in compiled:
        if c is not None:
            names |= c.names
            values |= c.values
    given_names = set(kwargs.get("ExpressionAttributeNames") or {})
    given_values = set(kwargs.get("ExpressionAttributeValues") or {})
    if names - given_names:
        raise _validation(
            "An expression attribute name used in the document path is not defined; attribute name: "
            + sorted(names - given_names)[0]
        )
    if values - given_values:
        raise _validation(
            "An expression attribute value used in expression is not defined; attribute value: "
            + sorted(values - given_values)[0]
        )
    if given_names - names:
        raise _validation(
            f"Value provided in ExpressionAttributeNames unused in expressions: keys: {{{', '.join(sorted(given_names - names))}}}"
        )
    if given_values - values:
        raise _validation(
            f"Value provided in ExpressionAttributeValues unused in expressions: keys: {{{', '.join(sorted(given_values - values))}}}"
        )


def _projected(item: Item, spec: dict[str, Any]) -> Item:
    if "ProjectionExpression" not in spec:
        return ex.copy_item(item)
    paths, _ = _guard(ex.projection, spec["ProjectionExpression"])
    return ex.copy_item(ex.project(item, paths, _context(spec)))


def _returned(kind: str, before: Item | None, after: Item | None) -> dict[str, Any]:
    if kind == "ALL_OLD" and before is not None:
        return {"Attributes": ex.copy_item(before)}
    if kind == "ALL_NEW" and after is not None:
        return {"Attributes": ex.copy_item(after)}
    if kind in ("UPDATED_NEW", "UPDATED_OLD"):
        source = after if kind == "UPDATED_NEW" else before
        if source is None:
            return {}
        other = before if kind == "UPDATED_NEW" else after
        changed = {n: v for n, v in source.items() if (other or {}).get(n) != v}
        return {"Attributes": ex.copy_item(changed)} if changed else {}
    return {}
