"""DynamoDB faults injected at the botocore layer of a client (handlers on its `before-call` and `after-call` events):
throttling and transaction conflicts answered instead of the call, and lost answers (a read timeout raised after
the call was applied), each at a share of the calls.

    faults = Faults(rate=0.2).install(server.clients("dynamodb"))   # a boto3 client, or the local runtime's wrapper
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.exceptions import ReadTimeoutError

THROTTLE, CONFLICT, LOST = "throttle", "conflict", "lost"
KINDS = (THROTTLE, CONFLICT, LOST)
WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"})
_URL = "https://dynamodb.local"


def _refusal(code: str, message: str, **extra: Any) -> tuple[AWSResponse, dict[str, Any]]:
    parsed = {"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": 400}, **extra}
    return AWSResponse(_URL, 400, {}, None), parsed


class Faults:
    """At `rate` of the calls of `operations` (every one when None), one of `kinds` in turn: a throttle (any call), a
    conflict with a transaction (a write only), a lost answer (the call applied, then a read timeout), `most` of them
    at most. Writes and reads take their kinds in turns of their own, so each kind a call can meet is met as often as
    the others (drawn at random, a run's few faulted writes could meet no conflict). `counts` counts those injected,
    by kind."""

    def __init__(
        self,
        rate: float = 0.2,
        kinds: tuple[str, ...] = KINDS,
        operations: frozenset[str] | None = None,
        seed: int | None = None,
        most: int | None = None,
    ) -> None:
        self.rate = rate
        self.most = most  # faults injected at most (None: no bound)
        self.kinds = kinds
        self.operations = operations
        self.counts: Counter[str] = Counter()
        self.calls = 0
        self._random = random.Random(seed)
        self._turns = {True: 0, False: 0}  # (the next turn of writes, of reads)
        self._lock = threading.Lock()
        self._lost = threading.local()

    def install(self, client: Any) -> Faults:
        inner = getattr(client, "_client", client)  # (under the local runtime's SerializedClient)
        inner.meta.events.register("before-call.dynamodb", self._before)
        inner.meta.events.register("after-call.dynamodb", self._after)
        return self

    def _pick(self, operation: str) -> str | None:
        if self.operations is not None and operation not in self.operations:
            return None
        with self._lock:
            self.calls += 1
            if self._random.random() >= self.rate or (self.most is not None and sum(self.counts.values()) >= self.most):
                return None
            write = operation in WRITES
            kinds = [kind for kind in self.kinds if write or kind != CONFLICT] or [THROTTLE]
            kind = kinds[self._turns[write] % len(kinds)]
            self._turns[write] += 1
            self.counts[kind] += 1
            return kind

    def _before(self, model: Any, params: dict[str, Any], **kwargs: Any) -> Any:
        """(`params`: the serialized request, its JSON in `body`.)"""
        kind = self._pick(model.name)
        if kind == LOST:
            self._lost.pending = True
            return None
        if kind == THROTTLE:
            return _refusal("ThrottlingException", "Rate of requests exceeds the allowed throughput.")
        if kind == CONFLICT and model.name == "TransactWriteItems":
            reasons = [{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}]
            return _refusal(
                "TransactionCanceledException",
                "Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]",
                CancellationReasons=reasons * len(json.loads(params["body"])["TransactItems"]),
            )
        if kind == CONFLICT:
            return _refusal("TransactionConflictException", "Transaction is ongoing for the item")
        return None

    def _after(self, http_response: Any, **kwargs: Any) -> None:
        if getattr(self._lost, "pending", False):
            self._lost.pending = False
            if http_response.status_code < 300:
                raise ReadTimeoutError(endpoint_url=_URL)
