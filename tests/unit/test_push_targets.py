"""Lambda functions and EventBridge buses as push endpoints: their ARNs checked as untrusted input, the deployment's
allow-lists, the events they are given, and what each refusal means for the push (`mnsd.model.cloud_targets`,
`mnsd.push.cloud_delivery`)."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, ReadTimeoutError

from local_runtime.cloud_targets import LocalLambda, default_allow_lists, registered_buses, registered_functions
from mnsd.ground import errors
from mnsd.ground.settings import PUSH_EVENT_BUS_ARNS, PUSH_LAMBDA_ARNS, Settings
from mnsd.model.cloud_targets import EVENTBRIDGE, LAMBDA, allowed, check_cloud_target, cloud_target, partition_of
from mnsd.model.topics import Subscription, SubscriptionAttributes, TopicMessage, parse_endpoint
from mnsd.push import cloud_delivery
from mnsd.push.delivery import Deliverer
from mnsd.rpc.push_kinds import endpoint_of
from mnsd.wire.notifications import event_detail, function_payload

REGION, ACCOUNT, AWS_REGION = "cn-hangzhou", "1000000000000001", "us-east-1"
FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:orders"
BUS = "arn:aws:events:us-east-1:123456789012:event-bus/orders"
SETTINGS = Settings(aws_region=AWS_REGION, push_lambda_arns=f"{FUNCTION},{FUNCTION}:*", push_event_bus_arns=BUS)


@pytest.mark.parametrize(
    ("endpoint", "kind", "name"),
    [
        (FUNCTION, LAMBDA, "orders"),
        (f"{FUNCTION}:$LATEST", LAMBDA, "orders"),
        (f"{FUNCTION}:7", LAMBDA, "orders"),
        (f"{FUNCTION}:live", LAMBDA, "orders"),
        ("arn:aws-cn:lambda:cn-north-1:123456789012:function:f_1-x", LAMBDA, "f_1-x"),
        (BUS, EVENTBRIDGE, "orders"),
        ("arn:aws:events:us-east-1:123456789012:event-bus/default", EVENTBRIDGE, "default"),
        ("arn:aws-us-gov:events:us-gov-west-1:123456789012:event-bus/a.b_c-d", EVENTBRIDGE, "a.b_c-d"),
    ],
)
def test_a_function_or_bus_arn_is_an_endpoint_of_its_kind(endpoint, kind, name):
    target = cloud_target(endpoint)
    assert target is not None and (target.kind, target.name, target.account_id) == (kind, name, "123456789012")
    found = parse_endpoint(endpoint, REGION, ACCOUNT)
    assert (found.kind, found.target) == (kind, endpoint)


@pytest.mark.parametrize(
    "endpoint",
    [
        "arn:aws:lambda:us-east-1:12345678901:function:orders",  # an 11-digit account
        "arn:aws:lambda:us-east-1:123456789012:function:or ders",
        "arn:aws:lambda:us-east-1:123456789012:function:orders:live:more",
        "arn:aws:lambda:us-east-1:123456789012:function:" + "f" * 65,
        "arn:aws:lambda:us-east-1:123456789012:layer:orders",
        "arn:aws:lambda:*:123456789012:function:orders",
        "arn:aws:lambda:us-east-1:123456789012:function:*",
        "arn:aws:sqs:us-east-1:123456789012:orders",
        "arn:evil:lambda:us-east-1:123456789012:function:orders",
        "arn:aws:events:us-east-1:123456789012:rule/orders",
        "arn:aws:events:us-east-1:123456789012:event-bus/orders\n",
        "arn:aws:events:us-east-1:123456789012:event-bus/",
        "ARN:AWS:LAMBDA:us-east-1:123456789012:function:orders",
    ],
)
def test_anything_but_an_exact_arn_is_refused(endpoint):
    assert cloud_target(endpoint) is None
    with pytest.raises(errors.EndpointInvalid):
        parse_endpoint(endpoint.strip() + (" x" if endpoint.endswith("\n") else ""), REGION, ACCOUNT)


def test_a_target_must_be_in_the_deployment_s_partition_and_region_and_on_its_allow_list():
    def refused(arn: str, settings: Settings = SETTINGS) -> str:
        target = cloud_target(arn)
        assert target is not None
        with pytest.raises(errors.EndpointInvalid) as raised:
            check_cloud_target(target, settings)
        return raised.value.message

    check_cloud_target(cloud_target(FUNCTION), SETTINGS)  # listed
    check_cloud_target(cloud_target(f"{FUNCTION}:live"), SETTINGS)  # by the pattern
    check_cloud_target(cloud_target(BUS), SETTINGS)
    assert "region us-east-1" in refused(FUNCTION.replace("us-east-1", "eu-west-1"))
    assert "partition aws" in refused(FUNCTION.replace("arn:aws:", "arn:aws-cn:"))
    assert "pushLambdaArns" in refused(FUNCTION.replace("orders", "payments"))
    assert "pushEventBusArns" in refused(BUS.replace("orders", "payments"))
    assert "pushLambdaArns" in refused(FUNCTION, dataclasses.replace(SETTINGS, push_lambda_arns=""))  # none: refused
    assert partition_of("cn-northwest-1") == "aws-cn" and partition_of("us-gov-east-1") == "aws-us-gov"


def test_an_allow_list_pattern_widens_only_where_it_says_star():
    assert allowed("arn:aws:lambda:us-east-1:123456789012:function:orders-eu", ("arn:*:function:orders-*",))
    assert not allowed("arn:aws:lambda:us-east-1:123456789012:function:ordersXeu", ("arn:*:function:orders.eu",))
    assert not allowed(FUNCTION + "-2", (FUNCTION,))
    assert not allowed(FUNCTION, ())


def subscription(endpoint: str, content_format: str = "XML") -> Subscription:
    attributes = SubscriptionAttributes(endpoint=endpoint, notify_content_format=content_format)
    return Subscription(ACCOUNT, "t", "s", attributes, 0, 0, "tid")


MESSAGE = TopicMessage(ACCOUNT, "t", "tid", "M1", "hello <world>", "news", 1_700_000_000_000)


def test_a_function_is_invoked_with_the_notification_in_its_format_as_its_event():
    assert json.loads(function_payload(subscription(FUNCTION, "JSON"), MESSAGE))["MessageId"] == "M1"
    assert json.loads(function_payload(subscription(FUNCTION, "SIMPLIFIED"), MESSAGE)) == "hello <world>"
    xml = json.loads(function_payload(subscription(FUNCTION, "XML"), MESSAGE))
    assert xml.startswith("<?xml") and "<Message>hello &lt;world&gt;</Message>" in xml


def test_a_bus_event_s_detail_is_a_json_object_in_every_format():
    assert json.loads(event_detail(subscription(BUS, "JSON"), MESSAGE))["MessageTag"] == "news"
    assert json.loads(event_detail(subscription(BUS, "SIMPLIFIED"), MESSAGE)) == {
        "Notification": "hello <world>",
        "MessageId": "M1",
        "MessageTag": "news",
    }
    assert json.loads(event_detail(subscription(BUS, "XML"), MESSAGE))["Notification"].startswith("<?xml")


def aws_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "said"}, "ResponseMetadata": {"HTTPStatusCode": status}}, "X"
    )


class FakeClient:
    """A Lambda or EventBridge client that gives `answer` (or raises it) to every call, which it records."""

    def __init__(self, answer: dict[str, Any] | Exception) -> None:
        self.answer = answer
        self.calls: list[dict[str, Any]] = []

    def _answer(self, **call: Any) -> dict[str, Any]:
        self.calls.append(call)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    invoke = put_events = _answer


@pytest.mark.parametrize(
    ("answer", "delivered", "status", "permanent"),
    [
        ({"StatusCode": 200, "Payload": io.BytesIO(b"null")}, True, 200, False),
        (
            {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": io.BytesIO(b'{"errorMessage":"x"}')},
            False,
            502,
            False,
        ),
        (aws_error("ResourceNotFoundException", 404), False, 404, False),  # no such function: retried, as an HTTP 404
        (aws_error("AccessDeniedException", 403), False, 403, False),  # not (yet) granted: retried, as an HTTP 403
        (aws_error("TooManyRequestsException", 429), False, 429, False),
        (aws_error("ServiceException", 500), False, 500, False),
        (aws_error("ResourceConflictException", 409), False, 409, False),  # being updated
        (aws_error("InvalidRequestContentException", 400), False, 400, True),  # the request itself: never mended
        (aws_error("RequestTooLargeException", 413), False, 413, True),
        (ReadTimeoutError(endpoint_url="https://lambda"), False, 0, False),  # no answer within 5 s
    ],
)
def test_what_each_answer_of_invoke_means_for_the_push(answer, delivered, status, permanent):
    client = FakeClient(answer)
    outcome = cloud_delivery.to_function(client, subscription(FUNCTION), MESSAGE)
    assert (outcome.delivered, outcome.status, outcome.permanent) == (delivered, status, permanent)
    assert client.calls[0]["FunctionName"] == FUNCTION and client.calls[0]["InvocationType"] == "RequestResponse"
    if not delivered:
        assert outcome.detail


@pytest.mark.parametrize(
    ("answer", "delivered", "status", "permanent"),
    [
        ({"FailedEntryCount": 0, "Entries": [{"EventId": "e"}]}, True, 200, False),
        ({"FailedEntryCount": 1, "Entries": [{"ErrorCode": "ThrottlingException"}]}, False, 429, False),
        ({"FailedEntryCount": 1, "Entries": [{"ErrorCode": "InternalFailure"}]}, False, 500, False),
        ({"FailedEntryCount": 1, "Entries": [{"ErrorCode": "NotAuthorizedForSourceException"}]}, False, 400, False),
        ({"FailedEntryCount": 1, "Entries": [{"ErrorCode": "MalformedDetail"}]}, False, 400, True),
        (aws_error("ResourceNotFoundException", 400), False, 400, False),  # no such bus (yet)
        (aws_error("AccessDeniedException", 400), False, 400, False),
    ],
)
def test_what_each_answer_of_put_events_means_for_the_push(answer, delivered, status, permanent):
    client = FakeClient(answer)
    outcome = cloud_delivery.to_bus(client, subscription(BUS, "JSON"), MESSAGE)
    assert (outcome.delivered, outcome.status, outcome.permanent) == (delivered, status, permanent)
    (entry,) = client.calls[0]["Entries"]
    assert (entry["Source"], entry["DetailType"], entry["EventBusName"]) == ("mns", "MNS Notification", BUS)
    assert json.loads(entry["Detail"])["MessageId"] == "M1"


def test_a_target_the_allow_list_no_longer_names_is_given_up_at_once_without_a_call():
    function, events = FakeClient({"StatusCode": 200}), FakeClient({"FailedEntryCount": 0, "Entries": [{}]})
    clients = {"lambda": function, "events": events}
    redeployed = dataclasses.replace(SETTINGS, push_lambda_arns="", push_event_bus_arns="")
    deliverer = Deliverer(redeployed, None, clients.__getitem__)
    for endpoint in (FUNCTION, BUS):
        outcome = deliverer.deliver(subscription(endpoint), MESSAGE)
        assert (outcome.delivered, outcome.permanent) == (False, True) and "may not push" in outcome.detail
    assert function.calls == [] and events.calls == []
    allowed_now = Deliverer(SETTINGS, None, clients.__getitem__)
    assert allowed_now.deliver(subscription(FUNCTION), MESSAGE).delivered
    assert allowed_now.deliver(subscription(BUS), MESSAGE).delivered


def test_mns_open_s_fc_and_eventbus_kinds_take_an_arn_and_refuse_alibaba_s_resources():
    assert endpoint_of("fc", FUNCTION, REGION, ACCOUNT) == FUNCTION
    assert endpoint_of("EventBus", BUS, REGION, ACCOUNT) == BUS
    for push_type, alibaba in (
        ("fc", "acs:fc:cn-hangzhou:1:services/s/functions/f"),
        ("eventbus", "acs:eventbridge:x"),
    ):
        with pytest.raises(errors.EndpointInvalid) as refused:
            endpoint_of(push_type, alibaba, REGION, ACCOUNT)
        assert "by its ARN" in refused.value.message


def test_the_local_stand_in_invokes_registered_callables_as_lambda_answers():
    functions = registered_functions("ok=tests.e2e.local_functions:echo, bad=tests.e2e.local_functions:fail")
    local = LocalLambda(functions)
    answer = local.invoke(FunctionName=FUNCTION.replace("orders", "ok"), Payload=b'"hi"')
    assert json.loads(answer["Payload"].read()) == {"echo": "hi", "name": "ok"}
    failed = local.invoke(FunctionName=FUNCTION.replace("orders", "bad") + ":live", Payload=b"{}")
    assert (
        failed["FunctionError"] == "Unhandled" and json.loads(failed["Payload"].read())["errorType"] == "RuntimeError"
    )
    missing = cloud_delivery.to_function(local, subscription(FUNCTION.replace("orders", "none")), MESSAGE)
    assert (missing.status, missing.permanent) == (404, False)
    other_account = cloud_delivery.to_function(local, subscription(FUNCTION.replace("123456789012", "1" * 12)), MESSAGE)
    assert other_account.status == 404


@pytest.mark.parametrize(
    "text", ["ok", "ok=module_without_callable", "bad name=tests.e2e.local_functions:echo", "x=json:nothing"]
)
def test_a_wrong_registration_stops_the_runtime_saying_which(text):
    with pytest.raises(ValueError, match="MNS_LOCAL_FUNCTIONS"):
        registered_functions(text)


def test_the_local_allow_lists_default_to_the_registered_functions_and_buses():
    lists = default_allow_lists({}, AWS_REGION, ["orders"], ["orders"])
    assert allowed(FUNCTION, tuple(lists[PUSH_LAMBDA_ARNS].split(",")))
    assert allowed(FUNCTION + ":live", tuple(lists[PUSH_LAMBDA_ARNS].split(",")))
    assert lists[PUSH_EVENT_BUS_ARNS] == BUS
    assert default_allow_lists({PUSH_LAMBDA_ARNS: ""}, AWS_REGION, ["orders"], [])[PUSH_LAMBDA_ARNS] == ""
    with pytest.raises(ValueError, match="MNS_LOCAL_EVENT_BUSES"):
        registered_buses("a/b")
