"""A batch ChangeMessageVisibility on both planes: its body read into the same checked changes (a timeout for the
batch, or one per handle), its answer written per handle (the new handle and NextVisibleTime, or BatchDeleteMessage's
error entry) with the status decided once, and the route telling it from the single change by its body."""

from __future__ import annotations

import json

import pytest

from mnsd.calls import planes
from mnsd.calls.call import Call
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.jsonwire import requests as json_requests
from mnsd.jsonwire import responses as json_responses
from mnsd.model.inputs import VisibilityChange
from mnsd.operations.batch_change_message_visibility import batch_change_message_visibility
from mnsd.operations.change_message_visibility import change_message_visibility
from mnsd.queues.messages import VisibilityResult
from mnsd.request.routes import ACTIONS, ROUTES
from mnsd.wire import requests as xml_requests
from mnsd.wire import responses as xml_responses
from mnsd.wire.plane import parsed_body
from tests.support.wire import HEAD, NS, xml

MNS = 'xmlns="http://mns.aliyuncs.com/doc/v1/"'


def xml_changes(inner: str) -> list[VisibilityChange]:
    return xml_requests.visibility_changes(
        parsed_body(f"<ChangeVisibilities {MNS}>{inner}</ChangeVisibilities>".encode())
    )


def test_xml_handles_take_the_batch_timeout_and_entries_their_own_in_the_order_given():
    given = xml_changes(
        "<ReceiptHandle>h1</ReceiptHandle>"
        "<ChangeVisibility><ReceiptHandle>h2</ReceiptHandle><VisibilityTimeout>5</VisibilityTimeout></ChangeVisibility>"
        "<ChangeVisibility><ReceiptHandle>h3</ReceiptHandle></ChangeVisibility>"
        "<VisibilityTimeout>60</VisibilityTimeout>"
        "<ReceiptHandle></ReceiptHandle>"
    )
    assert given == [
        VisibilityChange("h1", 60),
        VisibilityChange("h2", 5),
        VisibilityChange("h3", 60),
        VisibilityChange("", 60),  # (that handle fails on its own: MissingReceiptHandle)
    ]


def test_json_reads_into_the_changes_xml_does():
    body = {
        "VisibilityTimeout": 60,
        "ChangeVisibilities": ["h1", {"ReceiptHandle": "h2", "VisibilityTimeout": "5"}, {"ReceiptHandle": "h3"}],
    }
    assert json_requests.visibility_changes(body) == [
        VisibilityChange("h1", 60),
        VisibilityChange("h2", 5),
        VisibilityChange("h3", 60),
    ]
    assert json_requests.root(body, ("ChangeVisibilities",)) == "ChangeVisibilities"


@pytest.mark.parametrize(
    ("inner", "error"),
    [
        ("<VisibilityTimeout>5</VisibilityTimeout>", errors.InvalidArgument),  # no handle
        ("<VisibilityTimeout>5</VisibilityTimeout>" + "<ReceiptHandle>h</ReceiptHandle>" * 17, errors.InvalidArgument),
        ("<ReceiptHandle>h</ReceiptHandle>", errors.MissingVisibilityTimeout),
        ("<VisibilityTimeout>43201</VisibilityTimeout><ReceiptHandle>h</ReceiptHandle>", errors.InvalidArgument),
        (
            "<VisibilityTimeout>5</VisibilityTimeout><ChangeVisibility><ReceiptHandle>h</ReceiptHandle>"
            "<VisibilityTimeout>x</VisibilityTimeout></ChangeVisibility>",
            errors.InvalidArgument,
        ),
        ("<VisibilityTimeout>5</VisibilityTimeout><Handle>h</Handle>", errors.InvalidArgument),  # not the schema's
    ],
)
def test_a_bad_xml_batch_is_refused_whole(inner, error):
    with pytest.raises(error) as refused:
        xml_changes(inner)
    assert type(refused.value) is error


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"VisibilityTimeout": 5, "ChangeVisibilities": []}, errors.InvalidArgument),
        ({"VisibilityTimeout": 5, "ChangeVisibilities": ["h"] * 17}, errors.InvalidArgument),
        ({"VisibilityTimeout": 5, "ChangeVisibilities": "h"}, errors.InvalidArgument),
        ({"VisibilityTimeout": 5, "ChangeVisibilities": [3]}, errors.InvalidArgument),
        ({"ChangeVisibilities": ["h"]}, errors.MissingVisibilityTimeout),
        ({"VisibilityTimeout": -1, "ChangeVisibilities": ["h"]}, errors.InvalidArgument),
        ({"VisibilityTimeout": 1.5, "ChangeVisibilities": ["h"]}, errors.InvalidArgument),
    ],
)
def test_a_bad_json_batch_is_refused_whole(body, error):
    with pytest.raises(error) as refused:
        json_requests.visibility_changes(body)
    assert type(refused.value) is error


RESULTS = [
    VisibilityResult("old1", "new1", 5000),
    VisibilityResult("old2", error=errors.MessageNotExist()),
    VisibilityResult("bad", error=errors.ReceiptHandleError()),
]


def test_the_xml_answer_has_each_handles_result_in_the_order_given():
    assert xml(xml_responses.visibility_batch(RESULTS)) == (
        f"{HEAD}<ChangeVisibilities {NS}>"
        "<ChangeVisibility><ReceiptHandle>new1</ReceiptHandle><NextVisibleTime>5000</NextVisibleTime></ChangeVisibility>"
        "<ChangeVisibility><ErrorCode>MessageNotExist</ErrorCode><ErrorMessage>Message not exist.</ErrorMessage>"
        "<ReceiptHandle>old2</ReceiptHandle></ChangeVisibility>"
        "<ChangeVisibility><ErrorCode>ReceiptHandleError</ErrorCode>"
        "<ErrorMessage>The receipt handle you provide is not valid.</ErrorMessage>"
        "<ReceiptHandle>bad</ReceiptHandle></ChangeVisibility>"
        "</ChangeVisibilities>"
    )


def test_the_json_answer_has_each_handles_result_and_the_first_failures_code():
    assert json_responses.visibility_batch(RESULTS) == {
        "Code": "MessageNotExist",
        "Message": "2 of 3 receipt handles were not changed; each one's error is in ChangeVisibilities.",
        "ChangeVisibilities": [
            {"ReceiptHandle": "new1", "NextVisibleTime": 5000},
            {"ErrorCode": "MessageNotExist", "ErrorMessage": "Message not exist.", "ReceiptHandle": "old2"},
            {
                "ErrorCode": "ReceiptHandleError",
                "ErrorMessage": "The receipt handle you provide is not valid.",
                "ReceiptHandle": "bad",
            },
        ],
    }
    assert json_responses.visibility_batch(RESULTS[:1]) == {
        "ChangeVisibilities": [json_responses.visibility_changed("new1", 5000)]
    }


@pytest.mark.parametrize("codec", [planes.XML, planes.JSON], ids=["xml", "json"])
def test_the_status_is_200_when_every_handle_changed_else_batch_deletes(codec):
    plane = planes.Plane(HttpRequest("PUT", "/queues/q/messages", "", {}, b""), codec)
    assert plane.visibility_batch(RESULTS[:1]).status == 200
    assert plane.visibility_batch([RESULTS[0], RESULTS[2]]).status == 400  # only bad handles
    assert plane.visibility_batch(RESULTS).status == 404
    assert json.loads(planes.JSON.answer(planes.JSON.write.visibility_batch(RESULTS), 404).body)["Code"]


def selected(query: str, body: bytes, content_type: str = "text/xml") -> object:
    request = HttpRequest("PUT", "/queues/q/messages", query, {"content-type": content_type}, body)
    return ROUTES["put_messages"].select(Call(request, None, "1", None))  # type: ignore[arg-type]


def test_the_route_tells_the_batch_by_its_body_and_authorizes_it_as_change_message_visibility():
    batch = f"<ChangeVisibilities {MNS}><VisibilityTimeout>5</VisibilityTimeout></ChangeVisibilities>".encode()
    assert selected("ReceiptHandle=h&VisibilityTimeout=5", b"") is change_message_visibility
    assert selected("receiptHandle=h&visibilityTimeout=5", b"") is change_message_visibility
    assert selected("", b"") is change_message_visibility  # (which answers MissingReceiptHandle)
    assert selected("", batch) is batch_change_message_visibility
    assert selected("", b'{"ChangeVisibilities": []}', "application/json") is batch_change_message_visibility
    with pytest.raises(errors.InvalidArgument):
        selected("", f"<ReceiptHandles {MNS}><ReceiptHandle>h</ReceiptHandle></ReceiptHandles>".encode())
    assert ACTIONS[batch_change_message_visibility] == ACTIONS[change_message_visibility] == "ChangeMessageVisibility"
