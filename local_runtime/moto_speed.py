"""Where moto's DynamoDB spends time for nothing, made cheaper with the same answers.

A Query read the whole table through `Table.all_items`, which sorts every item of the table (by its key, comparing
moto's `DynamoType`s, a `Decimal` built per comparison) before the query keeps the few of its partition and sorts
those again: the sort decided nothing, since a query's results are ordered by a key that includes the table's
primary key. `apply()` gives a query the items of its partition only (a query of the table) or the table's items
unsorted (a query of an index, which still compares them all), and the query sorts what it keeps as before.

An answer's attribute values went through the generic serializer member by member: each `AttributeValue` looked up
its ten possible members (`S`, `N`, ... `BOOL`) under every alias the serializer knows, to find the one present.
`apply()` serializes the members a value holds, which are the only ones the serializer would have found (a value
that holds anything else goes the generic way).

Together they halve the time a call spends in moto (profiled under 8 consumers of 800 messages, the calls made one
at a time: 42 ms a call before, 21 ms after); `tests/unit/test_moto_speed.py` holds them to the same answers.

Four more things a call redid each time, done once for each distinct input: an UpdateItem parsed its update
expression twice (its checks, then its update), each time from the text; a condition expression was cut into tokens
(a dozen regular expressions tried at each position) before its names and values were put in; each request listed
the methods of its service's response class (`inspect.getmembers`) to find the one to call; and each of an update's
ten passes over its tree rebuilt, at every node, the list of kinds of node it processes. The parsed update
expression is read, never changed: moto's update works on a deep copy of it (`Validator.__init__`); the tokens are
immutable tuples, handed out in a fresh deque each time; a class's methods and a pass's kinds do not change while
serving. A conditional UpdateItem (`Storage.rates.take`) costs 3.7 ms of CPU instead of 4.6 ms, and `test_concurrent_consumers_receive_each_message_once` (`tests/integration/test_concurrency.py`)
27.4 s instead of 33.7 s (before the fourth); `tests/unit/test_moto_speed.py` holds the answers, that an expression is parsed once, and that the kept tree stays as parsed.
"""

from __future__ import annotations

import threading
from typing import Any

_applied = False


def apply() -> None:
    global _applied
    if _applied:
        return
    _query_one_partition_unsorted()
    _serialize_the_members_present()
    _update_expressions_parsed_once()
    _condition_expressions_tokenized_once()
    _response_methods_listed_once()
    _node_kinds_listed_once()
    _service_models_loaded_once()
    _applied = True


def _query_one_partition_unsorted() -> None:
    from moto.dynamodb.models.table import Table

    query, all_items = Table.query, Table.all_items
    querying = threading.local()  # (the table, its partition's key or None: an index) while this thread queries

    def query_a_partition(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        querying.scope = (self, None if index_name else hash_key)
        try:
            return query(self, hash_key, *args, **kwargs)
        finally:
            querying.scope = None

    def items_to_query(self: Any) -> Any:
        scope: tuple[Any, Any] | None = getattr(querying, "scope", None)
        if scope is None or scope[0] is not self:
            return all_items(self)
        hash_key = scope[1]
        if hash_key is None:
            partitions = list(self.items.values())
        else:
            partition = self.items.get(hash_key)
            partitions = [] if partition is None else [partition]
        if not self.range_key_attr:
            return partitions
        return [item for partition in partitions for item in partition.values()]

    Table.query = query_a_partition  # type: ignore[method-assign]
    Table.all_items = items_to_query  # type: ignore[method-assign]


def _serialize_the_members_present() -> None:
    from moto.core.serialize import BaseJSONSerializer

    original = BaseJSONSerializer._serialize_type_structure

    def serialize_structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        members = shape.members
        if shape.name != "AttributeValue" or type(value) is not dict or not value.keys() <= members.keys():
            original(self, serialized, value, shape, key)
            return
        wrapper = self.MAP_TYPE() if key else serialized
        for member_key, member_shape in members.items():
            if member_key in value:
                member_shape.parent = shape
                self._serialize_structure_member(wrapper, value, member_shape, member_key)
        if key:
            self._default_serialize(serialized, wrapper, shape, key)

    BaseJSONSerializer._serialize_type_structure = serialize_structure  # type: ignore[method-assign]


# Distinct expressions are few (the engine's own, a few dozen): the caches are bounded all the same.
EXPRESSIONS_KEPT = 4096


def _update_expressions_parsed_once() -> None:
    import functools

    from moto.dynamodb import models, responses
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]

    class ParsedOnce(UpdateExpressionParser):
        """The parser as the backend and the responses call it (`make`), its trees kept by expression."""

        make = staticmethod(functools.lru_cache(maxsize=EXPRESSIONS_KEPT)(UpdateExpressionParser.make))

    models.UpdateExpressionParser = ParsedOnce
    responses.UpdateExpressionParser = ParsedOnce


def _condition_expressions_tokenized_once() -> None:
    import functools
    from collections import deque

    from moto.dynamodb.comparisons import ConditionExpressionParser

    lex = ConditionExpressionParser._lex_condition_expression

    @functools.lru_cache(maxsize=EXPRESSIONS_KEPT)
    def tokens(expression: str) -> tuple[Any, ...]:
        parser = ConditionExpressionParser.__new__(ConditionExpressionParser)
        parser.condition_expression = expression
        return tuple(lex(parser))

    def lex_once(self: Any) -> Any:
        return deque(tokens(self.condition_expression))

    ConditionExpressionParser._lex_condition_expression = lex_once  # type: ignore[method-assign]


def _response_methods_listed_once() -> None:
    import functools

    from moto.core import responses, utils

    responses.method_names_from_class = functools.lru_cache(maxsize=None)(utils.method_names_from_class)


def _node_kinds_listed_once() -> None:
    """Each of an update's ten passes over its tree asked, at every node, which kinds of node it processes: a
    dictionary of the pass's methods built and turned into a tuple each time. The kinds are the pass's class's
    (each `_processing_map` names classes), listed once for each class."""
    from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser  # type: ignore[attr-defined]

    listed = DepthFirstTraverser.nodes_to_be_processed
    kinds: dict[type, tuple[type, ...]] = {}

    def nodes_to_be_processed(self: Any) -> tuple[type, ...]:
        found = kinds.get(type(self))
        if found is None:
            found = kinds[type(self)] = listed(self)
        return found

    DepthFirstTraverser.nodes_to_be_processed = nodes_to_be_processed


def _service_models_loaded_once() -> None:
    """moto starts each mock (`mock_aws()`, once a test in the suites on moto) on a new default boto3 session, and
    botocore's loader, which keeps the service models, the endpoints and the rule sets it read, is a session's own:
    the first client of each session read and decompressed them again (about a third of a second of CPU for a
    DynamoDB client). Sessions that look in the same data paths share one loader here, as a session's clients share
    its loader already (what it hands out is read by the clients, never changed)."""
    from botocore import loaders, session

    shared: dict[Any, Any] = {}
    lock = threading.Lock()

    def loader_for(data_path: Any) -> Any:
        key = tuple(data_path) if isinstance(data_path, list) else data_path
        with lock:
            found = shared.get(key)
            if found is None:
                found = shared[key] = loaders.create_loader(data_path)
            return found

    def register_data_loader(self: Any) -> None:
        self._components.lazy_register_component(
            "data_loader", lambda: loader_for(self.get_config_variable("data_path"))
        )

    session.Session._register_data_loader = register_data_loader
