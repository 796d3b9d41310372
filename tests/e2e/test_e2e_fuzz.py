"""Each plane's request parser fed seeded random input, signed so that it gets past authentication, on each engine:
the XML plane's bodies (mutated documents, deep nesting, entities, other encodings, stray bytes), the JSON plane's
bodies (random values of any depth, mutated documents) and the OpenAPI's form parameters (random actions' parameters
and values). No answer is a 5xx; every refusal is in its plane's error shape."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import pytest

from tests.e2e.mns_open_clients import v1_call
from tests.support.hostile import JSON_VERSION, made
from tests.support.raw_http import RawClient, assert_mns_error
from tests.support.servers import ACCOUNT_A
from tests.support.strict_xml import parse_error

JSON_TYPE = "application/json;charset=utf-8"
CASES = 60  # per plane and engine: a few seconds in all
PIECES = ["<", ">", "</", "/>", "&", "&amp;", "&#0;", "&#x110000;", "<![CDATA[", "]]>", "<!--", "-->", '"', "'"]
PIECES += ["\x00", "\udcff", "é", "\u202e", "0", "-1", "99999999999999999999", "True", "{", "[", "]", "}", ":", ","]
PIECES += ["<!DOCTYPE a [<!ENTITY e 'x'>]>", "&e;", "<?xml version='1.0' encoding='UTF-16'?>", "\r\n", " " * 3]
XML_BODIES = [
    "<Message><MessageBody>hi</MessageBody><DelaySeconds>0</DelaySeconds><Priority>8</Priority></Message>",
    "<Messages><Message><MessageBody>a</MessageBody></Message><Message><MessageBody>b</MessageBody></Message>"
    "</Messages>",
    "<ReceiptHandles><ReceiptHandle>1-abc</ReceiptHandle></ReceiptHandles>",
    "<Message><MessageBody>p</MessageBody><MessageTag>t</MessageTag><MessageAttributes><DirectMail>{}</DirectMail>"
    "</MessageAttributes><UserProperties><PropertyValue><Name>k</Name><Value>v</Value></PropertyValue>"
    "</UserProperties></Message>",
]
JSON_BODIES = [
    {"MessageBody": "hi", "DelaySeconds": 0, "Priority": 8, "UserProperties": {"k": "v"}},
    {"Messages": [{"MessageBody": "a"}, {"MessageBody": "b", "MessageGroupId": "g"}]},
    {"ReceiptHandles": ["1-abc", "2-def"]},
    {"MessageBody": "p", "MessageTag": "t", "MessageAttributes": {"DirectMail": {"Subject": "s"}, "DYSMS": "{}"}},
]


def mutated(rng: random.Random, text: str) -> str:
    """The text with a few pieces inserted, cut out or nested around a part of it."""
    for _ in range(rng.randrange(1, 6)):
        at = rng.randrange(len(text) + 1)
        choice = rng.random()
        if choice < 0.5:
            text = text[:at] + rng.choice(PIECES) + text[at:]
        elif choice < 0.8:
            text = text[:at] + text[at + rng.randrange(1, 12) :]
        else:
            depth = rng.choice([2, 40, 3000])
            opening, closing = rng.choice([("<a>", "</a>"), ("[", "]"), ('{"a":', "}")])
            text = text[:at] + opening * depth + text[at:] + closing * depth
    return text


def encoded(rng: random.Random, text: str) -> bytes:
    """The text as bytes: mostly UTF-8, sometimes another encoding or with stray bytes."""
    choice = rng.random()
    if choice < 0.1:
        return text.encode("utf-16", "surrogatepass")
    if choice < 0.2:
        raw = bytearray(text.encode("utf-8", "surrogatepass"))
        raw.insert(rng.randrange(len(raw) + 1), rng.choice([0xFF, 0xC3, 0x80, 0xFE]))
        return bytes(raw)
    return text.encode("utf-8", "surrogatepass")


def value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value."""
    kind = rng.randrange(7 if depth < 4 else 4)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 2**70, 1.5e308, 8, 30])
    if kind in (2, 3):
        return "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 6)))
    if kind in (4, 5):
        keys = ["MessageBody", "Messages", "ReceiptHandles", "DelaySeconds", "Priority", "UserProperties"]
        keys += ["MessageAttributes", "DirectMail", "DM", "DirectSMS", "DYSMS", "MessageTag", "MessageGroupId", "x"]
        return {rng.choice(keys): value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}
    return [value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]


def nested(rng: random.Random, text: str) -> str:
    """The JSON text nested in arrays or objects, a few levels deep or far deeper than any document MNS defines."""
    opening, closing = rng.choice([("[", "]"), ('{"MessageBody":', "}"), ('{"Messages":[', "]}"), ('{"a":', "}")])
    depth = min(rng.choice([1, 10, 40, 1500, 20000]), 60_000 // len(opening))  # (well within a request's size)
    return opening * depth + text + closing * depth


def test_the_xml_planes_parser_never_answers_a_5xx(raw_a):
    rng = random.Random(3801)
    with made(raw_a, "queue") as queue, made(raw_a, "topic") as topic:
        targets = [("POST", f"/queues/{queue}/messages"), ("DELETE", f"/queues/{queue}/messages")]
        targets += [("POST", f"/topics/{topic}/messages"), ("PUT", f"/queues/{queue}?metaoverride=true")]
        for _ in range(CASES):
            method, path = rng.choice(targets)
            body = encoded(rng, mutated(rng, rng.choice(XML_BODIES)))
            answer = raw_a.request(method, path, body)
            assert answer.status < 500, (method, path, body[:300], answer.body[:300])
            if answer.status >= 400:
                assert_mns_error(answer, answer.status, parse_error(answer.body).code)


@pytest.fixture(scope="module")
def json_plane(endpoint) -> RawClient:
    return RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], region="cn-hangzhou")


def test_the_json_planes_parser_never_answers_a_5xx(raw_a, json_plane):
    rng = random.Random(3802)
    with made(raw_a, "queue") as queue, made(raw_a, "topic") as topic:
        targets = [("POST", f"/queues/{queue}/messages"), ("DELETE", f"/queues/{queue}/messages")]
        targets += [("POST", f"/topics/{topic}/messages")]
        for n in range(CASES):
            method, path = rng.choice(targets)
            if n % 3 == 0:
                body = json.dumps(value(rng))
            elif n % 3 == 1:
                body = mutated(rng, json.dumps(rng.choice(JSON_BODIES)))
            else:
                body = nested(rng, json.dumps(value(rng)))
            headers = {"x-mns-version": JSON_VERSION}
            answer = json_plane.request(method, path, encoded(rng, body), headers=headers, content_type=JSON_TYPE)
            assert answer.status < 500, (answer.status, answer.body[:300], method, path, body[:300])
            if answer.status >= 400:  # (a batch's failures carry their request id in the header alone)
                assert json.loads(answer.body)["Code"] and answer.headers["x-mns-request-id"], answer.body[:300]


# The OpenAPI actions fuzzed (not the account's endpoint and settings: the other tests of the session use them),
# and the parameters they read.
ACTIONS = ["CreateQueue", "SetQueueAttributes", "GetQueueAttributes", "ListQueue", "DeleteQueue", "CreateTopic"]
ACTIONS += ["SetTopicAttributes", "GetTopicAttributes", "ListTopic", "DeleteTopic", "Subscribe", "Unsubscribe"]
ACTIONS += ["SetSubscriptionAttributes", "GetSubscriptionAttributes", "ListSubscriptionByTopic", "TagResources"]
ACTIONS += ["UntagResources", "NoSuchAction"]
PARAMETERS = ["DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod", "VisibilityTimeout", "EnableLogging"]
PARAMETERS += ["PollingWaitSeconds", "DlqPolicy", "TenantRateLimitPolicy", "QueueType", "MaxMessageSize", "TopicType"]
PARAMETERS += ["PushType", "Endpoint", "NotifyStrategy", "NotifyContentFormat", "MessageTag", "PageNum", "PageSize"]
PARAMETERS += ["ResourceType", "ResourceId.1", "ResourceId.2", "Tag.1.Key", "Tag.1.Value", "TagKey.1", "All"]
PARAMETERS += ["Tag.1", "EnableSSE", "StsRoleArn", "EndpointValue"]


def openapi_text(rng: random.Random) -> str:
    """A parameter's value: a plausible one, JSON of any depth, or pieces (no lone surrogates: a form is UTF-8)."""
    choice = rng.random()
    if choice < 0.3:
        return nested(rng, json.dumps(value(rng)))
    if choice < 0.5:
        return rng.choice(["queue", "http", "fc", "true", "False", "60", "-5", "1e3", "normal", "fifo", "", " "])
    return "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 8))).replace("\udcff", "\ufffd")


def test_the_openapis_parser_never_answers_a_5xx(endpoint):
    rng = random.Random(3803)
    names = [f"fz-{uuid.uuid4().hex[:8]}" for _ in range(3)] + ["", "é", "a" * 300, "-bad"]
    for _ in range(CASES):
        action = rng.choice(ACTIONS)
        params = {"QueueName": rng.choice(names), "TopicName": rng.choice(names), "SubscriptionName": "s"}
        params.update({rng.choice(PARAMETERS): openapi_text(rng) for _ in range(rng.randrange(0, 6))})
        status, answer = v1_call(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], action, params)
        assert status < 500, (status, answer, action, params)
        if status >= 400:
            assert answer["Code"] and answer["RequestId"] and answer["Success"] is False, (status, answer, params)
    for name in names:  # what the fuzzing made
        v1_call(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], "DeleteTopic", {"TopicName": name})
        v1_call(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], "DeleteQueue", {"QueueName": name})
