"""Every error code of the topic tables, on the wire and through the SDK: status, body shape, request id, no side effects.

Where the SDK validates client-side (empty body, tags over 16 characters) the bad input goes over raw signed HTTP.
"""

from __future__ import annotations

import uuid

import pytest
from mns.mns_common import TopicHelper
from mns.mns_exception import MNSServerException
from mns.subscription import SubscriptionMeta
from mns.topic import TopicMessage, TopicMeta

from tests.support.raw_http import RawClient
from tests.support.servers import ACCOUNT_A, ACCOUNT_B

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'
ACCOUNT = "1000000000000001"
OTHER_ACCOUNT = "2000000000000002"
REGION = "cn-hangzhou"


def topic_xml(**attrs) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in attrs.items())
    return f'<?xml version="1.0" encoding="UTF-8"?><Topic {XMLNS}>{inner}</Topic>'


def subscription_xml(**attrs) -> str:
    inner = "".join(f"<{k}>{v}</{k}>" for k, v in attrs.items())
    return f'<?xml version="1.0" encoding="UTF-8"?><Subscription {XMLNS}>{inner}</Subscription>'


def message_xml(body: str | None, inner: str = "", **extra) -> str:
    parts = "" if body is None else f"<MessageBody>{body}</MessageBody>"
    parts += "".join(f"<{k}>{v}</{k}>" for k, v in extra.items()) + inner
    return f'<?xml version="1.0" encoding="UTF-8"?><Message {XMLNS}>{parts}</Message>'


def calls_on_a_topic(tname: str, maximum_message_size: int) -> list[tuple[str, str, str]]:
    """One call of each kind on the topic `tname` and under it: (method, path, body)."""
    return [
        ("GET", f"/topics/{tname}", ""),
        ("PUT", f"/topics/{tname}?metaoverride=true", topic_xml(MaximumMessageSize=maximum_message_size)),
        ("POST", f"/topics/{tname}/messages", message_xml("x")),
        ("GET", f"/topics/{tname}/subscriptions", ""),
        ("PUT", f"/topics/{tname}/subscriptions/s", subscription_xml(Endpoint="http://h/x")),
    ]


@pytest.fixture
def topic(account_a, tname):
    """A topic of account A with one subscription; neither may change under a bad request."""
    t = account_a.get_topic(tname)
    t.create(TopicMeta(maximum_message_size=2048))
    t.get_subscription("keep").subscribe(SubscriptionMeta("http://127.0.0.1:9/keep", filter_tag="k"))
    before = snapshot(t)
    yield t
    assert snapshot(t) == before
    t.delete()


def snapshot(t):
    a = t.get_attributes()
    s = t.get_subscription("keep").get_attributes()
    return (
        a.maximum_message_size,
        a.logging_enabled,
        a.message_count,
        a.last_modify_time,
        s.endpoint,
        s.filter_tag,
        s.notify_strategy,
        s.notify_content_format,
        s.last_modify_time,
        t.list_subscription(),
    )


def server_error(call) -> str:
    with pytest.raises(MNSServerException) as exc:
        call()
    return exc.value.type


# ---------------------------------------------------------------- topic names and attributes


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("a" * 257, "TopicNameLengthError"),
        ("-starts-with-dash", "TopicNameInvalid"),
        ("has_underscore", "TopicNameInvalid"),
        ("has.dot", "TopicNameInvalid"),
    ],
)
def test_create_topic_bad_name(raw_a, account_a, mns_error, name, code):
    mns_error(raw_a.request("PUT", f"/topics/{name}", topic_xml()), 400, code)
    assert server_error(lambda: account_a.get_topic(name).create(TopicMeta())) == code
    assert account_a.list_topic(prefix=name) == ([], "")


def test_topic_name_of_256_characters_is_fine(account_a):
    name = uuid.uuid4().hex + "a" * 224
    assert len(name) == 256
    t = account_a.get_topic(name)
    assert t.create(TopicMeta()).endswith(f"/topics/{name}")
    assert t.get_attributes().topic_name == name
    t.delete()


@pytest.mark.parametrize("size", [1023, 65537, 0, "abc"])
def test_maximum_message_size_out_of_range(raw_a, account_a, tname, mns_error, size):
    mns_error(raw_a.request("PUT", f"/topics/{tname}", topic_xml(MaximumMessageSize=size)), 400, "InvalidArgument")
    assert server_error(account_a.get_topic(tname).get_attributes) == "TopicNotExist"
    if isinstance(size, int) and size > 0:  # the SDK refuses <= 0 itself
        assert server_error(lambda: account_a.get_topic(tname).create(TopicMeta(size))) == "InvalidArgument"
        assert server_error(account_a.get_topic(tname).get_attributes) == "TopicNotExist"


@pytest.mark.parametrize("size", [1023, 65537])
def test_set_maximum_message_size_out_of_range(topic, raw_a, tname, mns_error, size):
    r = raw_a.request("PUT", f"/topics/{tname}?metaoverride=true", topic_xml(MaximumMessageSize=size))
    mns_error(r, 400, "InvalidArgument")
    assert server_error(lambda: topic.set_attributes(TopicMeta(size))) == "InvalidArgument"


def test_logging_enabled_not_a_boolean(topic, raw_a, tname, mns_error):
    r = raw_a.request("PUT", f"/topics/{tname}?metaoverride=true", topic_xml(LoggingEnabled="maybe"))
    mns_error(r, 400, "InvalidArgument")


def test_topic_not_exist(raw_a, account_a, tname, mns_error):
    missing = account_a.get_topic(tname)
    assert server_error(missing.get_attributes) == "TopicNotExist"
    assert server_error(lambda: missing.set_attributes(TopicMeta(2048))) == "TopicNotExist"
    assert server_error(lambda: missing.publish_message(TopicMessage("x"))) == "TopicNotExist"
    assert server_error(missing.list_subscription) == "TopicNotExist"
    assert server_error(lambda: missing.get_subscription("s").subscribe(SubscriptionMeta("http://h/x"))) == (
        "TopicNotExist"
    )
    for method, path, body in calls_on_a_topic(tname, maximum_message_size=2048):
        mns_error(raw_a.request(method, path, body), 404, "TopicNotExist")
    # none of them created anything
    assert server_error(missing.get_attributes) == "TopicNotExist"


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("x-mns-ret-number", "0"),
        ("x-mns-ret-number", "1001"),
        ("x-mns-ret-number", "abc"),
        ("x-mns-marker", "a"),
        ("x-mns-marker", "!!!"),
    ],
)
def test_list_bad_paging_headers(topic, raw_a, tname, mns_error, header, value):
    mns_error(raw_a.request("GET", "/topics", headers={header: value}), 400, "InvalidArgument")
    mns_error(raw_a.request("GET", f"/topics/{tname}/subscriptions", headers={header: value}), 400, "InvalidArgument")


# ---------------------------------------------------------------- subscriptions


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("s" * 257, "SubscriptionNameLengthError"),
        ("-sub", "SubscriptionNameInvalid"),
        ("my_sub", "SubscriptionNameInvalid"),
    ],
)
def test_subscribe_bad_name(topic, raw_a, tname, mns_error, name, code):
    r = raw_a.request("PUT", f"/topics/{tname}/subscriptions/{name}", subscription_xml(Endpoint="http://h/x"))
    mns_error(r, 400, code)
    assert server_error(lambda: topic.get_subscription(name).subscribe(SubscriptionMeta("http://h/x"))) == code


@pytest.mark.parametrize(
    "endpoint_text",
    [
        "ftp://x",
        f"acs:mns:{REGION}:{OTHER_ACCOUNT}:queues/q",  # another account's queue
        f"acs:mns:cn-beijing:{ACCOUNT}:queues/q",  # another region
        f"acs:mns:{REGION}:{ACCOUNT}:queues/bad_queue",
        "http://host/mns-reserved-x",
        "http://host/MNS-Reserved-x",
        "mail:directmail:not-an-address",
        "sms:directsms:abc",
        "http://",
        "just text",
    ],
)
def test_subscribe_endpoint_invalid(topic, raw_a, tname, mns_error, endpoint_text):
    r = raw_a.request("PUT", f"/topics/{tname}/subscriptions/s", subscription_xml(Endpoint=endpoint_text))
    mns_error(r, 400, "EndpointInvalid")
    assert server_error(lambda: topic.get_subscription("s").subscribe(SubscriptionMeta(endpoint_text))) == (
        "EndpointInvalid"
    )


@pytest.mark.parametrize(
    ("endpoint_text", "kind", "instead"),
    [
        (f"acs:fc:{REGION}:{ACCOUNT}:services/s/functions/f", "fc", "a Lambda function by its ARN"),
        (f"acs:eventbridge:{REGION}:{ACCOUNT}:eventbus/default", "eventbus", "an Amazon EventBridge bus by its ARN"),
        ("push:123456", "mpush", "HTTP endpoint"),
    ],
)
def test_subscribe_to_a_push_kind_no_aws_service_serves_is_refused_saying_why(
    topic, raw_a, tname, mns_error, endpoint_text, kind, instead
):
    r = raw_a.request("PUT", f"/topics/{tname}/subscriptions/s", subscription_xml(Endpoint=endpoint_text))
    mns_error(r, 400, "EndpointInvalid")
    assert f"Push kind {kind} is not served" in r.body.decode() and instead in r.body.decode()
    assert raw_a.request("GET", f"/topics/{tname}/subscriptions/s").status == 404  # nothing was kept


def test_subscribe_without_endpoint(topic, raw_a, tname, mns_error):
    r = raw_a.request("PUT", f"/topics/{tname}/subscriptions/s", subscription_xml(FilterTag="t"))
    mns_error(r, 400, "EndpointInvalid")
    r = raw_a.request("PUT", f"/topics/{tname}/subscriptions/s", subscription_xml(Endpoint=""))
    mns_error(r, 400, "EndpointInvalid")
    assert server_error(lambda: topic.get_subscription("s").subscribe(SubscriptionMeta(""))) == "EndpointInvalid"


def test_subscribe_filter_tag_too_long(topic, raw_a, tname, mns_error):
    # the SDK refuses a 17-character FilterTag itself: raw HTTP
    body = subscription_xml(Endpoint="http://h/x", FilterTag="t" * 17)
    mns_error(raw_a.request("PUT", f"/topics/{tname}/subscriptions/s", body), 400, "InvalidArgument")
    body = subscription_xml(Endpoint="http://h/x", FilterTag="t" * 16)
    assert raw_a.request("PUT", f"/topics/{tname}/subscriptions/s16", body).status == 201
    assert topic.get_subscription("s16").get_attributes().filter_tag == "t" * 16
    topic.get_subscription("s16").unsubscribe()


@pytest.mark.parametrize(("element", "value"), [("NotifyStrategy", "bogus"), ("NotifyContentFormat", "bogus")])
def test_subscribe_bad_choice(topic, raw_a, tname, mns_error, element, value):
    body = subscription_xml(Endpoint="http://h/x", **{element: value})
    mns_error(raw_a.request("PUT", f"/topics/{tname}/subscriptions/s", body), 400, "InvalidArgument")
    meta = SubscriptionMeta(
        "http://h/x", **{"notify_strategy" if element == "NotifyStrategy" else "notify_content_format": value}
    )
    assert server_error(lambda: topic.get_subscription("s").subscribe(meta)) == "InvalidArgument"


@pytest.mark.parametrize("content_format", ["XML", "JSON"])
def test_mail_and_sms_endpoints_take_simplified_only(topic, content_format):
    for endpoint in ("mail:directmail:a@b.com", "sms:directsms:anonymous"):
        meta = SubscriptionMeta(endpoint, notify_content_format=content_format)
        assert server_error(lambda meta=meta: topic.get_subscription("s").subscribe(meta)) == "InvalidArgument"


def test_subscription_not_exist(topic, raw_a, tname, mns_error):
    missing = topic.get_subscription("missing")
    assert server_error(missing.get_attributes) == "SubscriptionNotExist"
    assert server_error(lambda: missing.set_attributes(SubscriptionMeta(notify_strategy="BACKOFF_RETRY"))) == (
        "SubscriptionNotExist"
    )
    mns_error(raw_a.request("GET", f"/topics/{tname}/subscriptions/missing"), 404, "SubscriptionNotExist")
    body = subscription_xml(NotifyStrategy="BACKOFF_RETRY")
    r = raw_a.request("PUT", f"/topics/{tname}/subscriptions/missing?metaoverride=true", body)
    mns_error(r, 404, "SubscriptionNotExist")
    missing.unsubscribe()  # missing: still a success
    r = raw_a.request("DELETE", f"/topics/{tname}/subscriptions/missing")
    assert (r.status, r.body) == (204, b"")
    assert "x-mns-request-id" in [k for k, _ in r.raw_headers]


def test_set_subscription_attributes_bad_strategy(topic, raw_a, tname, mns_error):
    body = subscription_xml(NotifyStrategy="SOMETIMES")
    r = raw_a.request("PUT", f"/topics/{tname}/subscriptions/keep?metaoverride=true", body)
    mns_error(r, 400, "InvalidArgument")
    meta = SubscriptionMeta(notify_strategy="SOMETIMES")
    assert server_error(lambda: topic.get_subscription("keep").set_attributes(meta)) == "InvalidArgument"


# ---------------------------------------------------------------- publish


def test_publish_tag_too_long(topic, raw_a, tname, mns_error):
    r = raw_a.request("POST", f"/topics/{tname}/messages", message_xml("x", MessageTag="t" * 17))
    mns_error(r, 400, "InvalidArgument")


@pytest.mark.parametrize("body", [None, ""])
def test_publish_empty_body(topic, raw_a, tname, mns_error, body):
    mns_error(raw_a.request("POST", f"/topics/{tname}/messages", message_xml(body)), 400, "InvalidArgument")


def test_publish_body_larger_than_maximum_message_size(topic, raw_a, tname, mns_error):
    # the topic fixture allows 2048 bytes: counted in UTF-8 bytes
    assert server_error(lambda: topic.publish_message(TopicMessage("x" * 2049))) == "InvalidArgument"
    assert server_error(lambda: topic.publish_message(TopicMessage("é" * 1025))) == "InvalidArgument"
    mns_error(raw_a.request("POST", f"/topics/{tname}/messages", message_xml("x" * 2049)), 400, "InvalidArgument")


@pytest.mark.parametrize(
    "body",
    [
        "<Message><MessageBody>x",
        "not xml at all",
        f"<Message {XMLNS}><MessageBody>x</MessageBody></Messag>",
    ],
)
def test_publish_malformed_xml(topic, raw_a, tname, mns_error, body):
    mns_error(raw_a.request("POST", f"/topics/{tname}/messages", body), 400, "MalformedXML")


@pytest.mark.parametrize("attribute", ["DirectMail", "DirectSMS", "DM", "DYSMS"])  # DM, DYSMS: Java SDK 2.x's
@pytest.mark.parametrize("value", ["{not json", "[1, 2]", "42"])
def test_publish_direct_attribute_not_a_json_object(topic, raw_a, tname, mns_error, attribute, value):
    inner = f"<MessageAttributes><{attribute}>{value}</{attribute}></MessageAttributes>"
    mns_error(raw_a.request("POST", f"/topics/{tname}/messages", message_xml("x", inner)), 400, "InvalidArgument")


def test_publish_direct_mail_json_accepted_raw(account_a, raw_a, tname):
    account_a.get_topic(tname).create(TopicMeta())
    mail = '{"Subject":"S","AccountName":"a@b.com","ReplyToAddress":0,"AddressType":0,"IsHtml":0}'
    inner = f"<MessageAttributes><DirectMail>{mail}</DirectMail></MessageAttributes>"
    r = raw_a.request("POST", f"/topics/{tname}/messages", message_xml("x", inner))
    assert r.status == 201, r.body
    account_a.get_topic(tname).delete()


def test_publish_java2_dm_and_dysms_accepted_signed_v4(account_a, endpoint, tname):
    """Java SDK 2.x's attributes, as its serializer writes them and its V4 signer signs them."""
    account_a.get_topic(tname).create(TopicMeta())
    raw_v4 = RawClient(endpoint, ACCOUNT_A[1], ACCOUNT_A[2], region=REGION)
    dm, dysms = '{"MailAddress":"a@example.com","Subject":"S","IsHtml":0}', '{"PhoneNumber":"13800000000"}'
    inner = f"<MessageAttributes><DYSMS>{dysms}</DYSMS><DM>{dm}</DM></MessageAttributes>"
    r = raw_v4.request("POST", f"/topics/{tname}/messages", message_xml("x", inner))
    assert r.status == 201, r.body
    account_a.get_topic(tname).delete()


# ---------------------------------------------------------------- tenancy and request ids


def test_account_b_gets_topic_not_exist_on_raw_http(topic, endpoint, tname, mns_error):
    raw_b = RawClient(endpoint, ACCOUNT_B[1], ACCOUNT_B[2])
    for method, path, body in calls_on_a_topic(tname, maximum_message_size=4096):
        mns_error(raw_b.request(method, path, body), 404, "TopicNotExist")
    mns_error(raw_b.request("GET", f"/topics/{tname}/subscriptions/keep"), 404, "SubscriptionNotExist")
    # B's deletes succeed and touch nothing of A's (the fixture checks A's topic afterwards)
    assert raw_b.request("DELETE", f"/topics/{tname}/subscriptions/keep").status == 204
    assert raw_b.request("DELETE", f"/topics/{tname}").status == 204


def test_every_topic_response_carries_a_request_id(raw_a, tname, qname):
    queue_endpoint = TopicHelper.generate_queue_endpoint(REGION, ACCOUNT, qname)
    steps = [
        ("PUT", f"/topics/{tname}-r", topic_xml(), 201),
        ("PUT", f"/topics/{tname}-r", topic_xml(), 204),
        ("PUT", f"/topics/{tname}-r", topic_xml(MaximumMessageSize=1024), 409),
        ("PUT", f"/topics/{tname}-r?metaoverride=true", topic_xml(MaximumMessageSize=4096), 204),
        ("GET", f"/topics/{tname}-r", "", 200),
        ("GET", "/topics", "", 200),
        ("PUT", f"/topics/{tname}-r/subscriptions/s", subscription_xml(Endpoint=queue_endpoint), 201),
        ("PUT", f"/topics/{tname}-r/subscriptions/s", subscription_xml(Endpoint=queue_endpoint), 204),
        ("PUT", f"/topics/{tname}-r/subscriptions/s", subscription_xml(Endpoint="http://h/x"), 409),
        ("GET", f"/topics/{tname}-r/subscriptions/s", "", 200),
        ("PUT", f"/topics/{tname}-r/subscriptions/s?metaoverride=true", subscription_xml(NotifyStrategy="x"), 400),
        ("GET", f"/topics/{tname}-r/subscriptions", "", 200),
        ("POST", f"/topics/{tname}-r/messages", message_xml("x"), 201),
        ("POST", f"/topics/{tname}-r/messages", message_xml(""), 400),
        ("POST", f"/topics/{tname}-r/messages", "<broken", 400),
        ("DELETE", f"/topics/{tname}-r/subscriptions/s", "", 204),
        ("GET", f"/topics/{tname}-r/subscriptions/s", "", 404),
        ("DELETE", f"/topics/{tname}-r", "", 204),
        ("GET", f"/topics/{tname}-r", "", 404),
        ("PUT", "/topics/bad_name", topic_xml(), 400),
    ]
    ids = set()
    for method, path, body, status in steps:
        r = raw_a.request(method, path, body)
        assert r.status == status, (method, path, r.status, r.body)
        names = [k for k, _ in r.raw_headers]
        assert "x-mns-request-id" in names, (method, path, r.raw_headers)
        assert r.headers["x-mns-request-id"] and r.headers["x-mns-version"] == "2015-06-06"
        ids.add(r.headers["x-mns-request-id"])
    assert len(ids) == len(steps)  # one per request
