"""Topic, subscription and publish operations through the official SDK, and delivery to queue endpoints.

Error codes of the topic tables are in `test_e2e_topic_errors.py`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import xml.etree.ElementTree as ET

import pytest
from mns.message_property import MessagePropertyValue, PropertyType
from mns.mns_common import TopicHelper
from mns.mns_exception import MNSServerException
from mns.mns_request import ListTopicRequest, ListTopicResponse
from mns.queue import QueueMeta
from mns.subscription import SubscriptionMeta
from mns.topic import Base64TopicMessage, DirectMailInfo, DirectSMSInfo, TopicMessage, TopicMeta

from tests.e2e.resources import assert_deleted_and_deletes_again, list_pages, text_queue

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NS = "{http://mns.aliyuncs.com/doc/v1}"
XMLNS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'
ACCOUNT = "1000000000000001"
REGION = "cn-hangzhou"
RECEIVE_WAIT = 5  # long poll: returns as soon as the delivery lands


def md5u(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest().upper()


@pytest.fixture
def inbox(account_a, qname):
    """A queue of account A read as raw text, and its QueueEndpoint."""
    meta = QueueMeta()
    meta.set_visibilitytimeout(60)
    q = text_queue(account_a, qname, meta)
    yield q, TopicHelper.generate_queue_endpoint(REGION, ACCOUNT, qname)
    q.delete()


def subscribe(topic, name: str, endpoint: str, strategy: str = "", content_format: str = "", tag: str = "") -> None:
    topic.get_subscription(name).subscribe(SubscriptionMeta(endpoint, strategy, content_format, tag))


def receive_one(queue) -> str:
    msg = queue.receive_message(RECEIVE_WAIT)
    queue.delete_message(msg.receipt_handle)
    return msg.message_body


def assert_queue_empty(queue, wait: int = 1) -> None:
    with pytest.raises(MNSServerException) as exc:
        queue.receive_message(wait)
    assert exc.value.type == "MessageNotExist"


def list_topics_with_meta(account, prefix: str = "", ret_number: int = -1, marker: str = ""):
    """ListTopic with `x-mns-with-meta: true` (Account.list_topic of SDK 1.3.0 sends it but drops the meta)."""
    req, resp = ListTopicRequest(prefix, ret_number, marker, True), ListTopicResponse()
    account.get_client().list_topic(req, resp)
    return resp.topicurl_list, resp.next_marker, resp.topicmeta_list


# ---------------------------------------------------------------- topics


def test_create_topic_201_then_204_same_attributes_then_409(account_a, raw_a, tname, mns_error):
    r = raw_a.request(
        "PUT", f"/topics/{tname}", f"<Topic {XMLNS}><MaximumMessageSize>2048</MaximumMessageSize></Topic>"
    )
    assert r.status == 201, r.body
    assert r.body == b""
    assert r.headers["location"].endswith(f"/topics/{tname}")
    t = account_a.get_topic(tname)
    # same attributes: 204 with the Location (the SDK returns it)
    assert t.create(TopicMeta(maximum_message_size=2048)).endswith(f"/topics/{tname}")
    r = raw_a.request(
        "PUT", f"/topics/{tname}", f"<Topic {XMLNS}><MaximumMessageSize>2048</MaximumMessageSize></Topic>"
    )
    assert r.status == 204 and r.headers["location"].endswith(f"/topics/{tname}")
    with pytest.raises(MNSServerException) as exc:
        t.create(TopicMeta(maximum_message_size=4096))
    assert exc.value.type == "TopicAlreadyExist"
    with pytest.raises(MNSServerException) as exc:
        t.create(TopicMeta(maximum_message_size=2048, logging_enabled=True))
    assert exc.value.type == "TopicAlreadyExist"
    r = raw_a.request(
        "PUT", f"/topics/{tname}", f"<Topic {XMLNS}><MaximumMessageSize>1024</MaximumMessageSize></Topic>"
    )
    mns_error(r, 409, "TopicAlreadyExist")
    assert t.get_attributes().maximum_message_size == 2048
    t.delete()


def test_create_topic_without_body_gets_defaults(account_a, raw_a, tname):
    r = raw_a.request("PUT", f"/topics/{tname}")
    assert r.status == 201, r.body
    a = account_a.get_topic(tname).get_attributes()
    assert (a.maximum_message_size, a.message_retention_period, a.logging_enabled) == (65536, 86400, False)
    account_a.get_topic(tname).delete()


@pytest.mark.parametrize("size", [1024, 65536])
def test_maximum_message_size_bounds_accepted(account_a, tname, size):
    t = account_a.get_topic(tname)
    t.create(TopicMeta(maximum_message_size=size))
    assert t.get_attributes().maximum_message_size == size
    t.delete()


@pytest.mark.parametrize("logging", [True, False])
def test_logging_enabled(account_a, tname, logging):
    t = account_a.get_topic(tname)
    t.create(TopicMeta(logging_enabled=logging))
    assert t.get_attributes().logging_enabled is logging
    t.set_attributes(TopicMeta(logging_enabled=not logging))
    assert t.get_attributes().logging_enabled is (not logging)
    t.delete()


def test_get_topic_attributes_all_fields(account_a, raw_a, tname, server_clock):
    before = int(server_clock.now())
    t = account_a.get_topic(tname)
    t.create(TopicMeta(maximum_message_size=4096, logging_enabled=True))
    a = t.get_attributes()
    assert a.topic_name == tname
    assert before - 1 <= a.create_time <= int(server_clock.now()) + 1  # seconds
    assert a.last_modify_time == a.create_time
    assert (a.maximum_message_size, a.message_retention_period, a.logging_enabled) == (4096, 86400, True)
    assert a.message_count == 0
    for i in range(3):
        t.publish_message(TopicMessage(f"m{i}"))
    assert t.get_attributes().message_count == 3
    # the wire form: exactly these elements, integers and True/False
    r = raw_a.request("GET", f"/topics/{tname}")
    assert r.status == 200
    root = r.xml()
    assert root.tag == NS + "Topic"
    fields = {child.tag[len(NS) :]: child.text for child in root}
    assert fields == {
        "TopicName": tname,
        "CreateTime": str(a.create_time),
        "LastModifyTime": str(a.last_modify_time),
        "MaximumMessageSize": "4096",
        "MessageRetentionPeriod": "86400",
        "MessageCount": "3",
        "LoggingEnabled": "True",
        "MetricsEnabled": "True",  # monitored: the topic left it to the default (true)
    }
    t.delete()


def test_set_topic_attributes(account_a, raw_a, tname):
    t = account_a.get_topic(tname)
    t.create(TopicMeta(maximum_message_size=2048))
    created = t.get_attributes()
    t.set_attributes(TopicMeta(maximum_message_size=8192))
    a = t.get_attributes()
    assert (a.maximum_message_size, a.logging_enabled, a.create_time) == (8192, False, created.create_time)
    assert a.last_modify_time >= created.last_modify_time
    # metaoverride leaves the attributes it does not name alone
    r = raw_a.request(
        "PUT", f"/topics/{tname}?metaoverride=true", f"<Topic {XMLNS}><LoggingEnabled>True</LoggingEnabled></Topic>"
    )
    assert r.status == 204, r.body
    a = t.get_attributes()
    assert (a.maximum_message_size, a.logging_enabled) == (8192, True)
    # a create with the new attributes is now the idempotent one
    assert t.create(TopicMeta(maximum_message_size=8192, logging_enabled=True)).endswith(f"/topics/{tname}")
    t.delete()


def test_delete_topic(account_a, tname):
    t = account_a.get_topic(tname)
    t.create(TopicMeta())
    assert_deleted_and_deletes_again(t, "TopicNotExist")  # a missing topic deletes fine (204)


def test_delete_topic_removes_its_subscriptions(account_a, tname):
    t = account_a.get_topic(tname)
    t.create(TopicMeta())
    subscribe(t, "s1", "http://127.0.0.1:9/a")
    subscribe(t, "s2", "http://127.0.0.1:9/b")
    assert len(t.list_subscription()[0]) == 2
    t.delete()
    t.create(TopicMeta())
    assert t.list_subscription() == ([], "")
    with pytest.raises(MNSServerException) as exc:
        t.get_subscription("s1").get_attributes()
    assert exc.value.type == "SubscriptionNotExist"
    t.delete()


def test_recreated_topic_starts_with_no_messages(account_a, tname):
    t = account_a.get_topic(tname)
    t.create(TopicMeta())
    t.publish_message(TopicMessage("old"))
    t.publish_message(TopicMessage("old"))
    assert t.get_attributes().message_count == 2
    t.delete()
    t.create(TopicMeta())
    assert t.get_attributes().message_count == 0
    t.delete()


def test_delete_topic_with_raw_http_is_204(raw_a, tname):
    assert raw_a.request("PUT", f"/topics/{tname}").status == 201
    r = raw_a.request("DELETE", f"/topics/{tname}")
    assert (r.status, r.body) == (204, b"")
    r = raw_a.request("DELETE", f"/topics/{tname}")
    assert (r.status, r.body) == (204, b"")


def test_list_topic_prefix_and_paging(account_a, tname):
    names = sorted(f"{tname}-{i}" for i in range(5))
    for n in names:
        account_a.get_topic(n).create(TopicMeta())
    account_a.get_topic("zz" + tname).create(TopicMeta())  # not matching the prefix
    pages = list_pages(account_a.list_topic, tname + "-", 2, most=3)
    assert [len(page) for page in pages] == [2, 2, 1]
    assert [name for page in pages for name in page] == names  # in name order, each once
    urls, marker = account_a.list_topic(prefix=tname + "-")
    assert [u.rsplit("/topics/", 1)[1] for u in urls] == names and marker == ""
    assert account_a.list_topic(prefix=tname + "-nothing") == ([], "")
    # exactly one per page: the marker of the last full page leads to an empty-marker page
    urls, marker = account_a.list_topic(prefix=tname + "-", ret_number=4)
    assert len(urls) == 4 and marker
    urls, marker = account_a.list_topic(prefix=tname + "-", ret_number=4, marker=marker)
    assert [u.rsplit("/topics/", 1)[1] for u in urls] == names[4:] and marker == ""
    for n in names + ["zz" + tname]:
        account_a.get_topic(n).delete()


def test_list_topic_wire_shape(raw_a, account_a, endpoint, tname):
    for n in (f"{tname}-a", f"{tname}-b"):
        account_a.get_topic(n).create(TopicMeta())
    r = raw_a.request("GET", "/topics", headers={"x-mns-prefix": tname, "x-mns-ret-number": "1"})
    assert r.status == 200
    root = r.xml()
    assert root.tag == NS + "Topics"
    assert [e.text for e in root.iter(NS + "TopicURL")] == [f"{endpoint}/topics/{tname}-a"]
    # The URL and the name (as the live service lists them), no meta unless asked.
    assert [child.tag for child in root.find(NS + "Topic")] == [NS + "TopicURL", NS + "TopicName"]
    marker = root.find(NS + "NextMarker").text
    assert marker
    r = raw_a.request(
        "GET", "/topics", headers={"x-mns-prefix": tname, "x-mns-ret-number": "1", "x-mns-marker": marker}
    )
    assert [e.text for e in r.xml().iter(NS + "TopicURL")] == [f"{endpoint}/topics/{tname}-b"]
    assert b"NextMarker" not in r.body  # absent, not empty, on the last page
    for n in (f"{tname}-a", f"{tname}-b"):
        account_a.get_topic(n).delete()


def test_list_topic_with_meta(account_a, endpoint, tname):
    account_a.get_topic(f"{tname}-a").create(TopicMeta(maximum_message_size=2048, logging_enabled=True))
    account_a.get_topic(f"{tname}-b").create(TopicMeta())
    created = account_a.get_topic(f"{tname}-a").get_attributes()
    urls, marker, metas = list_topics_with_meta(account_a, tname, 1)
    assert urls == [f"{endpoint}/topics/{tname}-a"] and marker
    assert metas == [
        {
            "TopicURL": f"{endpoint}/topics/{tname}-a",
            "TopicName": f"{tname}-a",
            "CreateTime": str(created.create_time),
            "LastModifyTime": str(created.last_modify_time),
            "MaximumMessageSize": "2048",
            "MessageRetentionPeriod": "86400",
            "LoggingEnabled": "True",
            "MetricsEnabled": "True",
        }
    ]
    urls, marker2, metas = list_topics_with_meta(account_a, tname, 1, marker)
    assert urls == [f"{endpoint}/topics/{tname}-b"] and marker2 == ""
    assert (metas[0]["TopicName"], metas[0]["MaximumMessageSize"], metas[0]["LoggingEnabled"]) == (
        f"{tname}-b",
        "65536",
        "False",
    )
    for n in (f"{tname}-a", f"{tname}-b"):
        account_a.get_topic(n).delete()


# ---------------------------------------------------------------- subscriptions


def test_subscribe_201_then_204_then_409(topic, raw_a, endpoint, mns_error):
    path = f"/topics/{topic.topic_name}/subscriptions/s"
    body = f"<Subscription {XMLNS}><Endpoint>http://127.0.0.1:9/x</Endpoint><FilterTag>t</FilterTag></Subscription>"
    r = raw_a.request("PUT", path, body)
    assert r.status == 201, r.body
    assert r.headers["location"] == f"{endpoint}{path}"
    r = raw_a.request("PUT", path, body)
    assert r.status == 204 and r.headers["location"] == f"{endpoint}{path}"
    # the SDK with the same attributes: success, Location returned
    sub = topic.get_subscription("s")
    assert sub.subscribe(SubscriptionMeta("http://127.0.0.1:9/x", filter_tag="t")) == f"{endpoint}{path}"
    for meta in (
        SubscriptionMeta("http://127.0.0.1:9/y", filter_tag="t"),
        SubscriptionMeta("http://127.0.0.1:9/x"),
        SubscriptionMeta("http://127.0.0.1:9/x", filter_tag="u"),
        SubscriptionMeta("http://127.0.0.1:9/x", "EXPONENTIAL_DECAY_RETRY", filter_tag="t"),
        SubscriptionMeta("http://127.0.0.1:9/x", notify_content_format="JSON", filter_tag="t"),
    ):
        with pytest.raises(MNSServerException) as exc:
            sub.subscribe(meta)
        assert exc.value.type == "SubscriptionAlreadyExist", meta
    mns_error(raw_a.request("PUT", path, body.replace("/x<", "/z<")), 409, "SubscriptionAlreadyExist")
    assert sub.get_attributes().endpoint == "http://127.0.0.1:9/x"


def test_subscribe_explicit_defaults_equal_omitted_ones(topic, endpoint, tname):
    subscribe(topic, "s", "http://127.0.0.1:9/x")
    url = topic.get_subscription("s").subscribe(SubscriptionMeta("http://127.0.0.1:9/x", "BACKOFF_RETRY", "XML"))
    assert url == f"{endpoint}/topics/{tname}/subscriptions/s"


def test_get_subscription_attributes_defaults(topic, tname, server_clock):
    before = int(server_clock.now())
    subscribe(topic, "s-1", "http://127.0.0.1:9/notify")
    a = topic.get_subscription("s-1").get_attributes()
    assert (a.subscription_name, a.topic_name, a.topic_owner) == ("s-1", tname, ACCOUNT)
    assert a.endpoint == "http://127.0.0.1:9/notify"
    assert (a.notify_strategy, a.notify_content_format, a.filter_tag) == ("BACKOFF_RETRY", "XML", "")
    assert before - 1 <= a.create_time <= int(server_clock.now()) + 1
    assert a.last_modify_time == a.create_time


def test_get_subscription_attributes_wire(topic, raw_a, tname, inbox, server_clock):
    _, queue_endpoint = inbox
    subscribe(topic, "s", queue_endpoint, "EXPONENTIAL_DECAY_RETRY", "JSON", "tag-1")
    r = raw_a.request("GET", f"/topics/{tname}/subscriptions/s")
    assert r.status == 200
    root = r.xml()
    assert root.tag == NS + "Subscription"
    fields = {child.tag[len(NS) :]: child.text for child in root}
    created = fields.pop("CreateTime")
    assert fields.pop("LastModifyTime") == created and abs(int(created) - int(server_clock.now())) <= 2
    assert fields == {
        "SubscriptionName": "s",
        "Subscriber": ACCOUNT,
        "TopicOwner": ACCOUNT,
        "TopicName": tname,
        "Endpoint": queue_endpoint,
        "NotifyStrategy": "EXPONENTIAL_DECAY_RETRY",
        "NotifyContentFormat": "JSON",
        "FilterTag": "tag-1",
    }


def test_set_subscription_attributes(topic, raw_a, tname):
    subscribe(topic, "s", "http://127.0.0.1:9/x", content_format="JSON", tag="t")
    sub = topic.get_subscription("s")
    sub.set_attributes(SubscriptionMeta(notify_strategy="EXPONENTIAL_DECAY_RETRY"))
    a = sub.get_attributes()
    assert (a.notify_strategy, a.notify_content_format, a.filter_tag) == ("EXPONENTIAL_DECAY_RETRY", "JSON", "t")
    assert a.endpoint == "http://127.0.0.1:9/x"
    assert a.last_modify_time >= a.create_time
    r = raw_a.request(
        "PUT",
        f"/topics/{tname}/subscriptions/s?metaoverride=true",
        f"<Subscription {XMLNS}><NotifyStrategy>BACKOFF_RETRY</NotifyStrategy></Subscription>",
    )
    assert (r.status, r.body) == (204, b"")
    assert sub.get_attributes().notify_strategy == "BACKOFF_RETRY"


def test_unsubscribe(topic):
    subscribe(topic, "s", "http://127.0.0.1:9/x")
    sub = topic.get_subscription("s")
    sub.unsubscribe()
    with pytest.raises(MNSServerException) as exc:
        sub.get_attributes()
    assert exc.value.type == "SubscriptionNotExist"
    assert topic.list_subscription() == ([], "")
    sub.unsubscribe()  # missing: 204
    # the name is free again, with other attributes
    subscribe(topic, "s", "http://127.0.0.1:9/y", content_format="SIMPLIFIED")
    assert sub.get_attributes().notify_content_format == "SIMPLIFIED"


def test_list_subscription_prefix_and_paging(topic, endpoint, tname):
    names = sorted(f"sub-{i}" for i in range(5))
    for n in names:
        subscribe(topic, n, f"http://127.0.0.1:9/{n}")
    subscribe(topic, "other", "http://127.0.0.1:9/other")
    base = f"{endpoint}/topics/{tname}/subscriptions/"
    seen, marker, pages = [], "", 0
    while True:
        urls, marker = topic.list_subscription("sub-", 2, marker)
        pages += 1
        assert len(urls) == (2 if pages < 3 else 1)
        assert all(u.startswith(base) for u in urls)
        seen += [u[len(base) :] for u in urls]
        if not marker:
            break
        assert pages < 3
    assert seen == names and pages == 3
    urls, marker = topic.list_subscription()
    assert [u[len(base) :] for u in urls] == ["other", *names] and marker == ""
    assert topic.list_subscription("nothing") == ([], "")


def test_list_subscription_wire_shape(topic, raw_a, endpoint, tname):
    subscribe(topic, "a", "http://127.0.0.1:9/a")
    subscribe(topic, "b", "http://127.0.0.1:9/b")
    path = f"/topics/{tname}/subscriptions"
    r = raw_a.request("GET", path, headers={"x-mns-ret-number": "1"})
    assert r.status == 200
    root = r.xml()
    assert root.tag == NS + "Subscriptions"
    assert [e.text for e in root.iter(NS + "SubscriptionURL")] == [f"{endpoint}{path}/a"]
    marker = root.find(NS + "NextMarker").text
    r = raw_a.request("GET", path, headers={"x-mns-ret-number": "1", "x-mns-marker": marker})
    assert [e.text for e in r.xml().iter(NS + "SubscriptionURL")] == [f"{endpoint}{path}/b"]
    assert b"NextMarker" not in r.body


@pytest.mark.parametrize(
    ("endpoint_text", "content_format", "stored_format"),
    [
        ("mail:directmail:a@b.com", "", "SIMPLIFIED"),
        ("sms:directsms:anonymous", "", "SIMPLIFIED"),
        ("sms:directsms:13800000000", "SIMPLIFIED", "SIMPLIFIED"),
        ("http://127.0.0.1:9/notify?x=1", "JSON", "JSON"),
        ("https://example.com", "SIMPLIFIED", "SIMPLIFIED"),
        ("http://127.0.0.1:9/x", "XML", "XML"),
    ],
)
def test_subscribe_endpoint_kinds_and_content_formats_accepted(topic, endpoint_text, content_format, stored_format):
    subscribe(topic, "s", endpoint_text, content_format=content_format)
    a = topic.get_subscription("s").get_attributes()
    assert (a.endpoint, a.notify_content_format) == (endpoint_text, stored_format)


# ---------------------------------------------------------------- publish


def test_publish_message(topic, raw_a, tname):
    body = "héllo <wörld> & 你好"
    m = topic.publish_message(TopicMessage(body, "important"))
    assert m.message_body_md5 == md5u(body) == hashlib.md5(body.encode()).hexdigest().upper()
    assert re.fullmatch(r"[0-9A-F]{32}", m.message_body_md5)
    assert m.message_id
    r = raw_a.request(
        "POST",
        f"/topics/{tname}/messages",
        f"<Message {XMLNS}><MessageBody>plain</MessageBody><MessageTag>0123456789abcdef</MessageTag></Message>",
    )
    assert r.status == 201, r.body
    root = r.xml()
    assert root.tag == NS + "Message"
    fields = {child.tag[len(NS) :]: child.text for child in root}
    assert set(fields) == {"MessageId", "MessageBodyMD5"}
    assert fields["MessageBodyMD5"] == md5u("plain")
    assert fields["MessageId"] != m.message_id
    assert topic.get_attributes().message_count == 2


def test_publish_base64_message(topic, inbox):
    queue, queue_endpoint = inbox
    subscribe(topic, "s", queue_endpoint, content_format="SIMPLIFIED")
    m = topic.publish_message(Base64TopicMessage("binary-ish ✓"))
    encoded = base64.b64encode("binary-ish ✓".encode()).decode()
    assert m.message_body_md5 == md5u(encoded)  # the server hashes the text as sent
    assert receive_one(queue) == encoded


def test_publish_body_at_maximum_message_size(account_a, tname):
    t = account_a.get_topic(tname)
    t.create(TopicMeta(maximum_message_size=1024))
    m = t.publish_message(TopicMessage("x" * 1024))
    assert m.message_body_md5 == md5u("x" * 1024)
    assert t.publish_message(TopicMessage("é" * 512)).message_body_md5 == md5u("é" * 512)  # 1024 UTF-8 bytes
    t.delete()


def test_publish_with_direct_mail_and_sms(topic):
    mail = DirectMailInfo("sender@example.com", "Subject ✓", 0, 1, 0)
    m = topic.publish_message(TopicMessage("mail body", direct_mail=mail))
    assert m.message_body_md5 == md5u("mail body")
    single = DirectSMSInfo("Sign", "SMS_1", True)
    single.add_receiver("13800000000")
    single.set_params({"code": "1234"})
    assert topic.publish_message(TopicMessage("code ${code}", direct_sms=single)).message_id
    multi = DirectSMSInfo("Sign", "SMS_2", False)
    multi.add_receiver("13800000000", {"code": "1"})
    multi.add_receiver("13900000000", {"code": "2"})
    assert topic.publish_message(TopicMessage("code ${code}", direct_sms=multi)).message_id
    assert topic.get_attributes().message_count == 3


def test_publish_with_user_properties(topic, inbox):
    queue, queue_endpoint = inbox
    subscribe(topic, "s", queue_endpoint, content_format="SIMPLIFIED")
    msg = TopicMessage("with properties", "p")
    msg.add_user_property("s", MessagePropertyValue(PropertyType.STRING, "text ✓"))
    msg.add_user_property("n", MessagePropertyValue(PropertyType.NUMBER, 42))
    msg.add_user_property("b", MessagePropertyValue(PropertyType.BOOLEAN, True))
    msg.add_user_property("bin", MessagePropertyValue(PropertyType.BINARY, b"\x00\x01"))
    m = topic.publish_message(msg)
    assert m.message_body_md5 == md5u("with properties")
    assert receive_one(queue) == "with properties"


# ---------------------------------------------------------------- delivery to queues


def test_delivery_simplified_is_the_body(topic, inbox):
    queue, queue_endpoint = inbox
    subscribe(topic, "s", queue_endpoint, content_format="SIMPLIFIED")
    body = "héllo <world> & 你好"
    topic.publish_message(TopicMessage(body, "news"))
    assert receive_one(queue) == body
    assert_queue_empty(queue)


def xml_notification(text: str) -> dict:
    root = ET.fromstring(text)
    assert root.tag == NS + "Notification"
    return {child.tag[len(NS) :]: child.text for child in root}


# content format: (as subscribed (XML is the default), its decoder, a body)
NOTIFICATIONS = {
    "XML": ("", xml_notification, "héllo <world>"),
    "JSON": ("JSON", json.loads, '{"a": "b"} ✓'),
}


@pytest.mark.parametrize("content_format", list(NOTIFICATIONS))
def test_delivery_notification(topic, inbox, tname, content_format, server_clock):
    subscribed_as, decode, body = NOTIFICATIONS[content_format]
    queue, queue_endpoint = inbox
    subscribe(topic, f"s{content_format}", queue_endpoint, content_format=subscribed_as)
    before = int(server_clock.now() * 1000)
    m = topic.publish_message(TopicMessage(body, "news"))
    fields = decode(receive_one(queue))
    publish_time = int(fields.pop("PublishTime"))
    assert before - 1000 <= publish_time <= server_clock.now() * 1000 + 1000
    assert fields == {
        "TopicOwner": ACCOUNT,
        "TopicName": tname,
        "Subscriber": ACCOUNT,
        "SubscriptionName": f"s{content_format}",
        "MessageId": m.message_id,
        "Message": body,
        "MessageMD5": md5u(body),
        "MessageTag": "news",
    }
    assert_queue_empty(queue)


def test_delivery_filter_tag(topic, inbox):
    queue, queue_endpoint = inbox
    subscribe(topic, "s", queue_endpoint, content_format="SIMPLIFIED", tag="a")
    topic.publish_message(TopicMessage("tagged b", "b"))
    topic.publish_message(TopicMessage("untagged"))
    topic.publish_message(TopicMessage("tagged a", "a"))
    assert receive_one(queue) == "tagged a"
    assert_queue_empty(queue)


def test_delivery_without_filter_gets_every_message(topic, inbox):
    queue, queue_endpoint = inbox
    subscribe(topic, "s", queue_endpoint, content_format="SIMPLIFIED")
    for body, tag in (("one", "a"), ("two", ""), ("three", "b")):
        topic.publish_message(TopicMessage(body, tag))
    got = sorted(receive_one(queue) for _ in range(3))
    assert got == ["one", "three", "two"]
    assert_queue_empty(queue)


def test_subscription_made_after_a_publish_does_not_get_it(topic, inbox):
    queue, queue_endpoint = inbox
    topic.publish_message(TopicMessage("before"))
    subscribe(topic, "s", queue_endpoint, content_format="SIMPLIFIED")
    topic.publish_message(TopicMessage("after"))
    assert receive_one(queue) == "after"
    assert_queue_empty(queue)


def test_fan_out_to_two_queues(topic, account_a, qname):
    queues = []
    for i in range(2):
        q = text_queue(account_a, f"{qname}-{i}")
        subscribe(
            topic, f"s{i}", TopicHelper.generate_queue_endpoint(REGION, ACCOUNT, f"{qname}-{i}"), "", "SIMPLIFIED"
        )
        queues.append(q)
    topic.publish_message(TopicMessage("to both"))
    try:
        assert [receive_one(q) for q in queues] == ["to both", "to both"]
    finally:
        for q in queues:
            q.delete()


def test_publish_succeeds_when_a_subscribed_queue_does_not_exist(topic, inbox, qname):
    queue, queue_endpoint = inbox
    subscribe(topic, "gone", TopicHelper.generate_queue_endpoint(REGION, ACCOUNT, qname + "-missing"), "", "SIMPLIFIED")
    subscribe(topic, "live", queue_endpoint, content_format="SIMPLIFIED")
    m = topic.publish_message(TopicMessage("still delivered"))
    assert m.message_body_md5 == md5u("still delivered")
    assert receive_one(queue) == "still delivered"


def test_unsubscribed_queue_gets_nothing(topic, inbox):
    queue, queue_endpoint = inbox
    subscribe(topic, "s", queue_endpoint, content_format="SIMPLIFIED")
    topic.get_subscription("s").unsubscribe()
    topic.publish_message(TopicMessage("nobody listens"))
    assert_queue_empty(queue)


# ---------------------------------------------------------------- tenancy


def test_account_b_cannot_see_account_a_topic(account_a, account_b, topic, tname):
    subscribe(topic, "s", "http://127.0.0.1:9/x")
    tb = account_b.get_topic(tname)
    for call in (
        tb.get_attributes,
        lambda: tb.set_attributes(TopicMeta(maximum_message_size=2048)),
        lambda: tb.publish_message(TopicMessage("x")),
        tb.list_subscription,
        lambda: tb.get_subscription("s2").subscribe(SubscriptionMeta("http://127.0.0.1:9/x")),
    ):
        with pytest.raises(MNSServerException) as exc:
            call()
        assert exc.value.type == "TopicNotExist"
    with pytest.raises(MNSServerException) as exc:
        tb.get_subscription("s").get_attributes()
    assert exc.value.type == "SubscriptionNotExist"
    assert account_b.list_topic(prefix=tname) == ([], "")
    # B's own topic of the same name is independent of A's
    tb.create(TopicMeta(maximum_message_size=1024))
    assert tb.get_attributes().maximum_message_size == 1024
    assert topic.get_attributes().maximum_message_size == 65536
    tb.delete()
    assert topic.get_subscription("s").get_attributes().endpoint == "http://127.0.0.1:9/x"


def test_queue_endpoint_of_account_b_cannot_be_subscribed_by_a(topic, account_b, qname):
    qb = account_b.get_queue(qname)
    qb.create(QueueMeta())
    try:
        with pytest.raises(MNSServerException) as exc:
            subscribe(topic, "s", TopicHelper.generate_queue_endpoint(REGION, "2000000000000002", qname))
        assert exc.value.type == "EndpointInvalid"
    finally:
        qb.delete()
