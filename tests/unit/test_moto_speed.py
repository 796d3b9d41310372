"""moto's DynamoDB made cheaper (`local_runtime.moto_speed`) gives DynamoDB's answers, for less work."""

import random
from decimal import Decimal

import boto3
import pytest
from moto import mock_aws

from local_runtime import moto_speed

PARTITIONS, PER_PARTITION = 30, 10


def _key_schema(hash_key: str, range_key: str) -> list[dict[str, str]]:
    return [{"AttributeName": hash_key, "KeyType": "HASH"}, {"AttributeName": range_key, "KeyType": "RANGE"}]


@pytest.fixture
def table(aws_credentials):
    """A table of 30 partitions of 10 items (put in a shuffled order) with an index over another key pair."""
    moto_speed.apply()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        index = {"IndexName": "by-g", "KeySchema": _key_schema("gpk", "gsk"), "Projection": {"ProjectionType": "ALL"}}
        kinds = {"pk": "S", "sk": "N", "gpk": "S", "gsk": "N"}
        client.create_table(
            TableName="t",
            KeySchema=_key_schema("pk", "sk"),
            AttributeDefinitions=[{"AttributeName": name, "AttributeType": kind} for name, kind in kinds.items()],
            GlobalSecondaryIndexes=[index],
            BillingMode="PAY_PER_REQUEST",
        )
        keys = [(p, s) for p in range(PARTITIONS) for s in range(PER_PARTITION)]
        random.Random(7).shuffle(keys)
        for p, s in keys:
            item = {"pk": {"S": f"p{p:02}"}, "sk": {"N": str(s)}, "v": {"N": str(p * 100 + s)}}
            if s % 2 == 0:  # half the items in the index, under 3 index partitions, index keys colliding
                item |= {"gpk": {"S": f"g{p % 3}"}, "gsk": {"N": str(s // 4)}}
            client.put_item(TableName="t", Item=item)
        yield client


def _values(answer) -> list[int]:
    return [int(item["v"]["N"]) for item in answer["Items"]]


def test_a_query_of_a_partition_answers_in_key_order_without_sorting_the_table(table, monkeypatch):
    from moto.dynamodb.models.dynamo_type import DynamoType

    compared = []
    less_than = DynamoType.__lt__
    monkeypatch.setattr(DynamoType, "__lt__", lambda a, b: compared.append(1) or less_than(a, b))

    query = {"TableName": "t", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p07"}}}
    assert _values(table.query(**query)) == [700 + s for s in range(PER_PARTITION)]
    # The 10 items of the partition sorted, not the table's 300 (some 2,000 comparisons).
    assert len(compared) < 100
    assert _values(table.query(**query, ScanIndexForward=False)) == [709 - s for s in range(PER_PARTITION)]

    pages, start = [], {}
    while True:
        answer = table.query(**query, Limit=3, **start)
        pages.append(_values(answer))
        if "LastEvaluatedKey" not in answer:
            break
        start = {"ExclusiveStartKey": answer["LastEvaluatedKey"]}
    assert pages == [[700, 701, 702], [703, 704, 705], [706, 707, 708], [709]]

    between = table.query(
        TableName="t",
        KeyConditionExpression="pk = :p AND sk BETWEEN :a AND :b",
        FilterExpression="v <> :skip",
        ExpressionAttributeValues={":p": {"S": "p29"}, ":a": {"N": "2"}, ":b": {"N": "5"}, ":skip": {"N": "2903"}},
    )
    assert _values(between) == [2902, 2904, 2905]
    missing = {":p": {"S": "p99"}}
    assert table.query(**query | {"ExpressionAttributeValues": missing})["Items"] == []


def test_a_query_of_an_index_answers_in_the_index_keys_order_then_the_tables(table):
    answer = table.query(
        TableName="t",
        IndexName="by-g",
        KeyConditionExpression="gpk = :g AND gsk >= :k",
        ExpressionAttributeValues={":g": {"S": "g1"}, ":k": {"N": "1"}},
    )
    # gsk = s // 4 for the even s: s 4 and 6 share gsk 1, s 8 has gsk 2; ties in the table's key order (pk, sk).
    partitions = [p for p in range(PARTITIONS) if p % 3 == 1]
    expected = sorted((s // 4, f"p{p:02}", s, p * 100 + s) for p in partitions for s in (4, 6, 8))
    assert _values(answer) == [v for *_, v in expected]
    backwards = table.query(
        TableName="t",
        IndexName="by-g",
        KeyConditionExpression="gpk = :g",
        ExpressionAttributeValues={":g": {"S": "g2"}},
        ScanIndexForward=False,
        Limit=4,
    )
    everything = sorted(
        ((s // 4, f"p{p:02}", s), p * 100 + s) for p in range(PARTITIONS) if p % 3 == 2 for s in (0, 2, 4, 6, 8)
    )
    assert _values(backwards) == [v for _, v in everything[::-1][:4]]


def test_an_answer_holds_every_kind_of_value_as_written_serializing_only_the_members_present(table, monkeypatch):
    from moto.core.serialize import ResponseSerializer

    item = {
        "pk": {"S": "kinds"},
        "sk": {"N": "1"},
        "s": {"S": "é"},
        "n": {"N": "-1.5E3"},
        "b": {"B": b"\x00\xff"},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2.5"]},
        "bs": {"BS": [b"\x01", b"\x02"]},
        "m": {"M": {"inner": {"L": [{"S": "x"}, {"NULL": True}, {"BOOL": False}, {"M": {}}]}}},
        "l": {"L": []},
        "null": {"NULL": True},
        "bool": {"BOOL": True},
    }
    table.put_item(TableName="t", Item=item)
    members = []
    serialize_member = ResponseSerializer._serialize_structure_member

    def counted(self, serialized, value, shape, key):
        members.append(key)
        serialize_member(self, serialized, value, shape, key)

    monkeypatch.setattr(ResponseSerializer, "_serialize_structure_member", counted)
    answer = table.get_item(TableName="t", Key={"pk": {"S": "kinds"}, "sk": {"N": "1"}})["Item"]
    got = {**answer, "ss": {"SS": sorted(answer["ss"]["SS"])}, "bs": {"BS": sorted(answer["bs"]["BS"])}}
    got["ns"] = {"NS": sorted(answer["ns"]["NS"], key=Decimal)}
    assert got == item
    # 18 attribute values, one member each, and the answer's own members (Item, ConsumedCapacity): each
    # value's ten possible members looked up would be some 180.
    assert len(members) < 40, members


def test_an_expression_used_again_is_parsed_once_and_each_update_takes_its_own_values(table, monkeypatch):
    from moto.dynamodb.comparisons import ConditionExpressionParser
    from moto.dynamodb.parsing.tokens import ExpressionTokenizer

    parsed, lexed = [], []
    make_list, lex_one = ExpressionTokenizer.make_list, ConditionExpressionParser._lex_one_node
    monkeypatch.setattr(ExpressionTokenizer, "make_list", lambda text: parsed.append(text) or make_list(text))
    monkeypatch.setattr(
        ConditionExpressionParser, "_lex_one_node", lambda self, rest: lexed.append(rest) or lex_one(self, rest)
    )
    update = {
        "TableName": "t",
        "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
        "UpdateExpression": "SET #n = if_not_exists(#n, :zero) + :one, l = list_append(if_not_exists(l, :e), :l) "
        "ADD s :s REMOVE gone",
        "ConditionExpression": "attribute_not_exists(#n) OR (#n < :cap AND size(l) <= :len)",
        "ExpressionAttributeNames": {"#n": "n"},
        "ReturnValues": "ALL_NEW",
    }

    def values(one: int, cap: int) -> dict:
        return {
            ":zero": {"N": "0"},
            ":one": {"N": str(one)},
            ":e": {"L": []},
            ":l": {"L": [{"N": str(one)}]},
            ":s": {"SS": [f"s{one}"]},
            ":cap": {"N": str(cap)},
            ":len": {"N": "5"},
        }

    answers = [
        table.update_item(**update, ExpressionAttributeValues=values(one, 10))["Attributes"] for one in (1, 2, 3)
    ]
    assert [a["n"] for a in answers] == [{"N": "1"}, {"N": "3"}, {"N": "6"}]
    assert answers[-1]["l"] == {"L": [{"N": "1"}, {"N": "2"}, {"N": "3"}]}
    assert sorted(answers[-1]["s"]["SS"]) == ["s1", "s2", "s3"] and "gone" not in answers[-1]
    with pytest.raises(table.exceptions.ConditionalCheckFailedException):  # 6 < 6 fails: the new values are read
        table.update_item(**update, ExpressionAttributeValues=values(4, 6))
    after = table.update_item(**update, ExpressionAttributeValues=values(4, 7))["Attributes"]
    assert after["n"] == {"N": "10"} and len(after["l"]["L"]) == 4
    # Five updates of one expression: its text tokenized once, its condition cut into tokens once.
    assert parsed == [update["UpdateExpression"]]
    assert lexed and lexed[0] == update["ConditionExpression"] and lexed.count(lexed[0]) == 1


def _shape(node) -> object:
    """A parsed update expression as plain data: each node's kind and its children, down to the leaves' values."""
    from moto.dynamodb.parsing.ast_nodes import Node

    if isinstance(node, Node):
        return (type(node).__name__, [_shape(child) for child in node.children or []])
    return repr(node)


def test_a_kept_update_tree_stays_as_parsed(table):
    from moto.dynamodb import models
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser
    from moto.dynamodb.parsing.tokens import ExpressionTokenizer

    expression = "SET a = :a, b = if_not_exists(b, :z) + :a REMOVE c ADD d :a"
    fresh = _shape(UpdateExpressionParser(ExpressionTokenizer.make_list(expression)).parse())
    key = {"pk": {"S": "x"}, "sk": {"N": "1"}}
    for n in range(3):
        table.update_item(
            TableName="t",
            Key=key,
            UpdateExpression=expression,
            ExpressionAttributeValues={":a": {"N": str(n + 1)}, ":z": {"N": "0"}},
        )
    assert table.get_item(TableName="t", Key=key)["Item"]["b"] == {"N": "6"}
    # The updates were made from one kept tree, and it is still the tree the text parses to.
    kept = models.UpdateExpressionParser.make(expression)
    assert kept is models.UpdateExpressionParser.make(expression)
    assert _shape(kept) == fresh


def test_each_mock_starts_a_new_session_whose_clients_read_no_model_read_before(aws_credentials, monkeypatch):
    from botocore import loaders

    moto_speed.apply()
    read: list[str] = []
    load_file = loaders.JSONFileLoader.load_file

    def reading(self, path):
        read.append(path)
        return load_file(self, path)

    monkeypatch.setattr(loaders.JSONFileLoader, "load_file", reading)
    sessions, reads, answers = [], [], []
    for n in range(3):
        with mock_aws():
            before = len(read)
            client = boto3.client("dynamodb", region_name="us-east-1")
            client.create_table(
                TableName=f"t{n}",
                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                BillingMode="PAY_PER_REQUEST",
            )
            client.put_item(TableName=f"t{n}", Item={"pk": {"S": "k"}, "v": {"N": str(n)}})
            answers.append(
                (client.list_tables()["TableNames"], client.get_item(TableName=f"t{n}", Key={"pk": {"S": "k"}}))
            )
            reads.append(len(read) - before)
            sessions.append(boto3.DEFAULT_SESSION)
    # Each mock still ran on a new session and backend of its own (a table of the first is gone in the second) ...
    assert len({id(s) for s in sessions}) == 3
    assert [names for names, _ in answers] == [["t0"], ["t1"], ["t2"]]
    assert [got["Item"] for _, got in answers] == [{"pk": {"S": "k"}, "v": {"N": str(n)}} for n in range(3)]
    # ... and the sessions share one loader: the second and third mocks' clients read no file the first had read.
    loaders_of = {id(s._session.get_component("data_loader")) for s in sessions}
    assert len(loaders_of) == 1
    assert reads[1:] == [0, 0]


def test_a_session_looking_in_other_data_paths_has_a_loader_of_its_own(tmp_path):
    from botocore.session import Session

    moto_speed.apply()
    default, again, other = Session(), Session(), Session()
    other.set_config_variable("data_path", str(tmp_path))
    assert default.get_component("data_loader") is again.get_component("data_loader")
    assert other.get_component("data_loader") is not default.get_component("data_loader")
    assert str(tmp_path) in other.get_component("data_loader").search_paths
