"""The JSON data plane (SMQProxy 2026-04-09): which requests are on it, its bodies read into the same inputs as the
XML plane's, its answers and errors as the SDK's models read them, and the calls it does not serve."""

from __future__ import annotations

import json
from email.utils import formatdate

import pytest

from mnsd.access import authentication as auth
from mnsd.calls import planes
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.jsonwire import requests, responses
from mnsd.model.inputs import PropertyInput, PublishInput
from mnsd.model.messages import Property
from mnsd.queues.messages import SendResult
from mnsd.request import api
from mnsd.topics.attributes import direct_mail, direct_sms
from mnsd.wire import codec
from mnsd.wire import requests as xml_requests
from tests.support.wire import stored
from tests.unit.access_calls import ROOT, World


def request(headers: dict[str, str], body: bytes = b"") -> HttpRequest:
    return HttpRequest("POST", "/queues/q/messages", "", headers, body)


@pytest.mark.parametrize(
    ("headers", "json_plane"),
    [
        ({"x-mns-version": "2026-04-09"}, True),  # the SDK's GETs: no body, no Content-Type
        ({"x-mns-version": "2026-04-09", "content-type": "application/json"}, True),
        ({"content-type": "application/json"}, True),  # the body says JSON whatever the version
        ({"x-mns-version": "2015-06-06"}, False),
        ({"x-mns-version": "2015-06-06", "accept": "application/json"}, False),  # the Tea gateway's XML calls
        ({"x-mns-version": "2026-04-09", "content-type": "text/xml;charset=UTF-8"}, False),  # the body says XML
        ({}, False),
    ],
)
def test_a_request_is_on_the_plane_it_says_not_the_one_it_accepts(headers, json_plane):
    made = request(headers)
    assert planes.is_json(made) is json_plane
    assert planes.codec_of(made).version == ("2026-04-09" if json_plane else "2015-06-06")


def test_a_json_send_reads_into_the_inputs_an_xml_send_does():
    sent = {
        "MessageBody": "hi",
        "DelaySeconds": 5,
        "Priority": "3",
        "MessageGroupId": "g",
        "UserProperties": {
            "a": {"DataType": "STRING", "StringValue": "x"},
            "b": {"DataType": "BINARY", "BinaryValue": "AAE="},
        },
        "Unknown": {"ignored": True},
    }
    xml = (
        '<Message xmlns="http://mns.aliyuncs.com/doc/v1"><MessageBody>hi</MessageBody><DelaySeconds>5</DelaySeconds>'
        "<Priority>3</Priority><MessageGroupId>g</MessageGroupId><UserProperties>"
        "<PropertyValue><Name>a</Name><Value>x</Value><Type>STRING</Type></PropertyValue>"
        "<PropertyValue><Name>b</Name><Value>AAE=</Value><Type>BINARY</Type></PropertyValue></UserProperties></Message>"
    )
    assert requests.sent_message(sent) == xml_requests.sent_message(codec.parse(xml.encode()))


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[1, 2]",
        b'{"MessageBody": ""}',
        b'{"MessageBody": "x", "Priority": 17}',
        b'{"MessageBody": "x", "Priority": 1.5}',
        b'{"MessageBody": "x", "DelaySeconds": true}',
        b'{"MessageBody": "x", "UserProperties": []}',
        b'{"MessageBody": "x", "UserProperties": {"a": "not an object"}}',
        b'{"MessageBody": "x", "UserProperties": {"a": {"DataType": "STRING"}}}',
        b'{"MessageBody": ["x"]}',
        b'{"MessageBody": "a\\u0000b"}',  # what XML cannot carry: the XML plane could not deliver it
        b'{"MessageBody": "a\\ud800b"}',
        b'{"MessageBody": "x", "UserProperties": {"a": {"DataType": "STRING", "StringValue": "\\u0001"}}}',
        b'{"MessageBody": "x", "UserProperties": {"\\u0002": {"DataType": "STRING", "StringValue": "v"}}}',
    ],
)
def test_a_bad_json_message_is_invalid_argument(body):
    with pytest.raises(errors.InvalidArgument):
        requests.sent_message(requests.parse(body))


@pytest.mark.parametrize(
    "body",
    [
        {"Messages": "x"},
        {"Messages": []},
        {"Messages": ["x"]},
        {"Messages": [{"MessageBody": "x"}] * 17},
    ],
)
def test_a_bad_batch_is_invalid_argument(body):
    with pytest.raises(errors.InvalidArgument):
        requests.sent_messages(body)


@pytest.mark.parametrize("handles", [[], ["h"] * 17, ["h", 3], "h"])
def test_a_bad_batch_of_handles_is_invalid_argument(handles):
    with pytest.raises(errors.InvalidArgument):
        requests.receipt_handles({"ReceiptHandles": handles})


def test_a_body_s_root_is_the_operation_s():
    assert requests.root({"Messages": []}, ("Message", "Messages")) == "Messages"
    assert requests.root({"MessageBody": "x"}, ("Message", "Messages")) == "Message"
    assert requests.root({}, ("Message",)) == "Message"  # an empty body: the domain says what is missing
    with pytest.raises(errors.InvalidArgument):
        requests.root({"ReceiptHandles": []}, ("Message", "Messages"))


def test_publish_reads_each_attribute_as_json_text_or_an_object():
    given = requests.publish_input(
        {
            "MessageBody": "b",
            "MessageTag": "t",
            "MessageAttributes": {"DirectMail": '{"AccountName": "a@b.c"}', "DM": {"MailAddress": "x@y.z"}},
        }
    )
    assert (given.direct_mail, json.loads(given.dm or ""), given.direct_sms) == (
        '{"AccountName": "a@b.c"}',
        {"MailAddress": "x@y.z"},
        None,
    )


def test_dm_and_dysms_are_kept_in_direct_mail_and_direct_sms_terms():
    dm = PublishInput(dm='{"MailAddress":"s@example.com","Subject":"Hi","IsHtml":1}')
    assert direct_mail(dm) == {"AccountName": "s@example.com", "Subject": "Hi", "IsHtml": 1}
    assert direct_mail(PublishInput(dm='{"Subject":"Hi","IsHtml":false}')) == {"Subject": "Hi", "IsHtml": 0}
    dysms = PublishInput(dysms='{"PhoneNumber":"13800000000"}')
    assert direct_sms(dysms) == {"Type": "singleContent", "Receiver": "13800000000"}
    older = PublishInput(direct_sms='{"Receiver":"1"}')
    assert direct_sms(older) == {"Receiver": "1"}


@pytest.mark.parametrize(
    "given",
    [
        PublishInput(dm="{not json"),
        PublishInput(dm="42"),
        PublishInput(dysms="[1]"),
        PublishInput(dysms='{"PhoneNumber":"abcdefg"}'),
        PublishInput(dysms='{"PhoneNumber":13800000000}'),
        PublishInput(dm="{}", direct_mail="{}"),
        PublishInput(dysms="{}", direct_sms="{}"),
    ],
)
def test_malformed_dm_and_dysms_are_invalid_argument(given):
    with pytest.raises(errors.InvalidArgument):
        direct_mail(given)
        direct_sms(given)


def test_a_received_message_reads_as_the_sdk_s_model():
    message = stored(
        message_id="ID",
        priority=3,
        visible_at=3000,
        body="hi",
        user_properties=(Property("a", "x", "STRING"), Property("b", "AAE=", "BINARY")),
    )
    assert responses.message_node(message, "HANDLE") == {
        "MessageId": "ID",
        "MessageBody": "hi",
        "MessageBodyMD5": "MD5",
        "EnqueueTime": 1000,
        "FirstDequeueTime": 2000,
        "DequeueCount": 1,
        "Priority": 3,
        "ReceiptHandle": "HANDLE",
        "NextVisibleTime": 3000,
        "UserProperties": {
            "a": {"DataType": "STRING", "StringValue": "x"},
            "b": {"DataType": "BINARY", "BinaryValue": "AAE="},
        },
    }
    assert "ReceiptHandle" not in responses.message_node(message)


def test_errors_on_the_json_plane_are_json_with_its_version():
    made = HttpRequest("GET", "/queues/q/messages", "", {"x-mns-version": "2026-04-09"}, b"", {"queue": "q"})
    answer = api.handle("get_messages", made, World().services)
    assert answer.status == 400 and answer.headers["Content-Type"].startswith("application/json")
    assert answer.headers["x-mns-version"] == "2026-04-09"
    error = json.loads(answer.body)
    assert error["Code"] == "MissingAuthorizationHeader" and error["RequestId"] == answer.headers["x-mns-request-id"]


def signed_json_call(world: World, method: str, path: str, route: str, params: dict[str, str]) -> dict:
    """A call on the JSON plane signed by the root key (V2), its answer's JSON."""
    headers = {
        "host": "127.0.0.1:8080",
        "date": formatdate(world.clock.now(), usegmt=True),
        "x-mns-version": "2026-04-09",
    }
    unsigned = HttpRequest(method, path, "", headers, b"", params)
    signature = auth.sign(ROOT.secret, auth.string_to_sign(unsigned, headers["date"]))
    headers["authorization"] = f"MNS {ROOT.key_id}:{signature}"
    answer = api.handle(route, HttpRequest(method, path, "", headers, b"", params), world.services)
    assert answer.headers["Content-Type"].startswith("application/json")
    return {"status": answer.status, **json.loads(answer.body or b"{}")}


def test_a_call_the_json_plane_does_not_serve_is_refused_saying_where_it_is_served():
    world = World()
    refused = signed_json_call(world, "GET", "/queues/q", "get_queue", {"queue": "q"})
    assert (refused["status"], refused["Code"]) == (400, "InvalidArgument")
    assert "2015-06-06" in refused["Message"]
    received = signed_json_call(world, "GET", "/queues/q/messages", "get_messages", {"queue": "q"})
    assert (received["status"], received["MessageBody"], received["DequeueCount"]) == (200, "hello", 1)


def test_a_request_refused_before_its_route_is_answered_on_its_plane():
    on_json = api.refuse(errors.InvalidArgument("too large"), "h", {"X-MNS-Version": "2026-04-09"})
    assert json.loads(on_json.body)["Code"] == "InvalidArgument" and on_json.headers["x-mns-version"] == "2026-04-09"
    on_xml = api.refuse(errors.InvalidArgument("too large"), "h", {"Content-Type": "text/xml"})
    assert on_xml.body.startswith(b"<?xml") and on_xml.headers["x-mns-version"] == "2015-06-06"


def test_property_inputs_are_the_xml_plane_s():
    assert requests.user_properties({"UserProperties": {"n": {"DataType": "NUMBER", "StringValue": "1"}}}) == (
        PropertyInput("n", "1", "NUMBER"),
    )


@pytest.mark.parametrize("codec", [planes.XML, planes.JSON], ids=["xml", "json"])
def test_a_batchs_status_is_the_planes_the_same_on_both(codec):
    """The batch statuses are decided once, by the `Plane`: a send 201, or 500 when any message failed; a delete's
    failures 400 when every one is a bad receipt handle, else 404."""
    plane = planes.Plane(request({}), codec)
    ok = SendResult(stored(message_id="A"), None)
    assert plane.sent_batch([ok]).status == 201
    assert plane.sent_batch([ok, SendResult(stored(), None, errors.InternalError())]).status == 500
    assert plane.delete_failures([("h1", errors.ReceiptHandleError())]).status == 400
    assert plane.delete_failures([("h1", errors.ReceiptHandleError()), ("h2", errors.MessageNotExist())]).status == 404
