"""The Mns-open OpenAPI (2022-01-19) end to end, on each engine, through the SDKs a company uses today: the Tea SDK
with its ACS3 signature and with v1, and the core SDK sending form bodies; its refusals; another account; and the XML
plane on the same queues."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from alibabacloud_mns_open20220119 import models
from aliyunsdkmns_open.request.v20220119 import (
    CreateQueueRequest,
    CreateTopicRequest,
    DeleteQueueRequest,
    DeleteTopicRequest,
    GetQueueAttributesRequest,
    GetSubscriptionAttributesRequest,
    GetTopicAttributesRequest,
    ListQueueRequest,
    ListSubscriptionByTopicRequest,
    ListTopicRequest,
    SetQueueAttributesRequest,
    SetSubscriptionAttributesRequest,
    SetTopicAttributesRequest,
    SubscribeRequest,
    UnsubscribeRequest,
)
from mns.account import Account
from mns.mns_exception import MNSServerException
from mns.queue import Message, QueueMeta

from tests.e2e.mns_open_clients import CoreClient, acs3_headers, core_error, post, tea_client, tea_error, v1_call
from tests.support.raw_http import RawClient
from tests.support.servers import ACCOUNT_A, ACCOUNT_B
from tests.support.tokens import issue, policy_body

KEY_A, SECRET_A = ACCOUNT_A[1], ACCOUNT_A[2]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.mark.parametrize("v1", [False, True], ids=["acs3", "v1"])
def test_the_tea_sdk_drives_queues_topics_and_subscriptions(endpoint, v1):
    client = tea_client(endpoint, KEY_A, SECRET_A, v1=v1)
    dlq, queue, topic = unique("dlq"), unique("q"), unique("t")
    client.create_queue(models.CreateQueueRequest(queue_name=dlq))
    client.create_queue(
        models.CreateQueueRequest(
            queue_name=queue,
            visibility_timeout=45,
            delay_seconds=0,
            maximum_message_size=2048,
            message_retention_period=3600,
            polling_wait_seconds=2,
            enable_logging=True,  # the SDK sends `True`
            dlq_policy=models.CreateQueueRequestDlqPolicy(
                enabled=True, dead_letter_target_queue=dlq, max_receive_count=3
            ),
            tenant_rate_limit_policy=models.CreateQueueRequestTenantRateLimitPolicy(
                enabled=True, max_receives_per_second=50
            ),
            queue_type="normal",
            tag=[models.CreateQueueRequestTag(key="team", value="orders")],
        )
    )
    got = client.get_queue_attributes(models.GetQueueAttributesRequest(queue_name=queue)).body.to_map()
    data = got["Data"]
    assert got["Success"] is True and got["Code"] == 200 and got["RequestId"]
    assert (data["QueueName"], data["VisibilityTimeout"], data["MaximumMessageSize"]) == (queue, 45, 2048)
    assert (data["MessageRetentionPeriod"], data["PollingWaitSeconds"], data["LoggingEnabled"]) == (3600, 2, True)
    assert data["DlqPolicy"] == {"Enabled": True, "DeadLetterTargetQueue": dlq, "MaxReceiveCount": "3"}
    assert data["TenantRateLimitPolicy"] == {"Enabled": True, "MaxReceivesPerSecond": 50}
    assert data["Tags"] == [{"TagKey": "team", "TagValue": "orders"}]
    assert data["QueueType"] == "normal" and data["ActiveMessages"] == 0

    client.set_queue_attributes(
        models.SetQueueAttributesRequest(
            queue_name=queue,
            visibility_timeout=60,
            dlq_policy=models.SetQueueAttributesRequestDlqPolicy(enabled=False),
        )
    )
    data = client.get_queue_attributes(models.GetQueueAttributesRequest(queue_name=queue)).body.to_map()["Data"]
    assert data["VisibilityTimeout"] == 60 and data["DlqPolicy"]["Enabled"] is False

    listed = client.list_queue(
        models.ListQueueRequest(
            queue_name=queue[:8], page_num=1, page_size=5, tag=[models.ListQueueRequestTag(key="team", value="orders")]
        )
    ).body.to_map()["Data"]
    assert [q["QueueName"] for q in listed["PageData"]] == [queue]
    assert (listed["Total"], listed["PageNum"], listed["PageSize"]) == (1, 1, 5)

    client.create_topic(
        models.CreateTopicRequest(
            topic_name=topic,
            max_message_size=4096,
            enable_logging=False,
            tag=[models.CreateTopicRequestTag(key="env", value="test")],
        )
    )
    client.set_topic_attributes(models.SetTopicAttributesRequest(topic_name=topic, max_message_size=8192))
    data = client.get_topic_attributes(models.GetTopicAttributesRequest(topic_name=topic)).body.to_map()["Data"]
    assert (data["TopicName"], data["MaxMessageSize"], data["LoggingEnabled"]) == (topic, 8192, False)
    assert data["Tags"] == [{"TagKey": "env", "TagValue": "test"}]
    listed = client.list_topic(models.ListTopicRequest(topic_name=topic, page_size=10)).body.to_map()["Data"]
    assert [t["TopicName"] for t in listed["PageData"]] == [topic]

    queue_endpoint = f"acs:mns:cn-hangzhou:{ACCOUNT_A[0]}:queues/{queue}"
    client.subscribe(
        models.SubscribeRequest(
            topic_name=topic,
            subscription_name="sub",
            push_type="queue",
            endpoint=queue_endpoint,
            notify_strategy="BACKOFF_RETRY",
            notify_content_format="SIMPLIFIED",
            message_tag="important",
        )
    )
    sub = client.get_subscription_attributes(
        models.GetSubscriptionAttributesRequest(topic_name=topic, subscription_name="sub")
    ).body.to_map()["Data"]
    assert (sub["Endpoint"], sub["FilterTag"], sub["NotifyContentFormat"]) == (
        queue_endpoint,
        "important",
        "SIMPLIFIED",
    )
    client.set_subscription_attributes(
        models.SetSubscriptionAttributesRequest(
            topic_name=topic, subscription_name="sub", notify_strategy="EXPONENTIAL_DECAY_RETRY"
        )
    )
    subs = client.list_subscription_by_topic(
        models.ListSubscriptionByTopicRequest(topic_name=topic, page_num=1, page_size=10)
    ).body.to_map()["Data"]
    assert [(s["SubscriptionName"], s["NotifyStrategy"]) for s in subs["PageData"]] == [
        ("sub", "EXPONENTIAL_DECAY_RETRY")
    ]

    client.unsubscribe(models.UnsubscribeRequest(topic_name=topic, subscription_name="sub"))
    client.delete_topic(models.DeleteTopicRequest(topic_name=topic))
    client.delete_queue(models.DeleteQueueRequest(queue_name=queue))
    client.delete_queue(models.DeleteQueueRequest(queue_name=dlq))
    code, status = tea_error(lambda: client.get_queue_attributes(models.GetQueueAttributesRequest(queue_name=queue)))
    assert (code, status) == ("QueueNotExist", 404)
    code, status = tea_error(lambda: client.get_topic_attributes(models.GetTopicAttributesRequest(topic_name=topic)))
    assert (code, status) == ("TopicNotExist", 404)


@pytest.mark.parametrize("v1", [False, True], ids=["acs3", "v1"])
def test_the_tea_sdk_sets_the_account_and_its_endpoint(endpoint, v1):
    client = tea_client(endpoint, KEY_A, SECRET_A, v1=v1)
    client.set_account_attributes(
        models.SetAccountAttributesRequest(log_enabled=True, project_name="ops-logs", log_store_name="mns")
    )
    data = client.get_account_attributes(models.GetAccountAttributesRequest()).body.to_map()["Data"]
    assert data == {"LogEnabled": True, "ProjectName": "ops-logs", "LogStoreName": "mns", "MessageTraceEnabled": False}
    # the same setting the XML plane answers: the account's LoggingBucket
    assert Account(endpoint, KEY_A, SECRET_A).get_attributes().logging_bucket == "ops-logs"
    client.set_account_attributes(models.SetAccountAttributesRequest(log_enabled=False))
    assert (
        client.get_account_attributes(models.GetAccountAttributesRequest()).body.to_map()["Data"]["LogEnabled"] is False
    )
    code, _ = tea_error(
        lambda: client.set_account_attributes(models.SetAccountAttributesRequest(message_trace_enabled=True))
    )
    assert code == "InvalidArgument"

    client.authorize_endpoint_acl(
        models.AuthorizeEndpointAclRequest(
            endpoint_type="public", acl_strategy="allow", cidr_list=["127.0.0.0/8", "10.0.0.0/8"]
        )
    )
    data = client.get_endpoint_attribute(models.GetEndpointAttributeRequest(endpoint_type="public")).body.to_map()[
        "Data"
    ]
    assert data["EndpointEnabled"] is True
    assert [(c["Cidr"], c["AclStrategy"]) for c in data["CidrList"]] == [
        ("127.0.0.0/8", "allow"),
        ("10.0.0.0/8", "allow"),
    ]
    client.revoke_endpoint_acl(
        models.RevokeEndpointAclRequest(
            endpoint_type="public", acl_strategy="allow", cidr_list=["127.0.0.0/8", "10.0.0.0/8"]
        )
    )
    assert (
        client.get_endpoint_attribute(models.GetEndpointAttributeRequest(endpoint_type="public")).body.to_map()["Data"][
            "CidrList"
        ]
        == []
    )
    code, _ = tea_error(lambda: client.enable_endpoint(models.EnableEndpointRequest(endpoint_type="vpc")))
    assert code == "InvalidArgument"
    code, _ = tea_error(
        lambda: client.create_event_rule(models.CreateEventRuleRequest(product_name="oss", rule_name="r"))
    )
    assert code == "OperationNotSupported"


def test_the_endpoint_allow_list_is_enforced_on_both_planes(endpoint):
    """The local server sees every client at 127.0.0.1: an allow-list without it refuses the account's requests on
    either plane (the endpoint actions stay open), and its removal lets them through again."""
    client = tea_client(endpoint, KEY_A, SECRET_A)
    xml = Account(endpoint, KEY_A, SECRET_A)
    acl = dict(endpoint_type="public", acl_strategy="allow", cidr_list=["10.0.0.0/8"])
    client.authorize_endpoint_acl(models.AuthorizeEndpointAclRequest(**acl))
    try:
        code, status = tea_error(lambda: client.list_queue(models.ListQueueRequest()))
        assert (code, status) == ("AccessDenied", 403)
        with pytest.raises(MNSServerException) as refused:
            xml.list_queue()
        assert refused.value.type == "AccessDenied"
        # another account is not fenced by this one's list
        tea_client(endpoint, ACCOUNT_B[1], ACCOUNT_B[2]).list_queue(models.ListQueueRequest())
        assert client.get_endpoint_attribute(
            models.GetEndpointAttributeRequest(endpoint_type="public")
        ).body.data.cidr_list
    finally:
        client.revoke_endpoint_acl(models.RevokeEndpointAclRequest(**acl))
    xml.list_queue()
    client.disable_endpoint(models.DisableEndpointRequest(endpoint_type="public"))
    try:
        assert tea_error(lambda: client.list_topic(models.ListTopicRequest()))[0] == "AccessDenied"
    finally:
        client.enable_endpoint(models.EnableEndpointRequest(endpoint_type="public"))
    client.list_topic(models.ListTopicRequest())


def test_the_core_sdk_drives_every_operation_with_form_bodies(endpoint):
    core = CoreClient(endpoint, KEY_A, SECRET_A)
    queue, topic = unique("core-q"), unique("core-t")

    def request(module, **params):
        made = getattr(module, module.__name__.rpartition(".")[2])()
        for key, value in params.items():
            getattr(made, f"set_{key}")(value)
        return core.send(made)

    assert request(CreateQueueRequest, QueueName=queue, VisibilityTimeout=40, EnableLogging="True")["Success"] is True
    assert request(GetQueueAttributesRequest, QueueName=queue)["Data"]["VisibilityTimeout"] == 40
    request(SetQueueAttributesRequest, QueueName=queue, DelaySeconds=5)
    assert request(GetQueueAttributesRequest, QueueName=queue)["Data"]["DelaySeconds"] == 5
    page = request(ListQueueRequest, QueueName=queue, PageNum=1, PageSize=10)["Data"]
    assert [q["QueueName"] for q in page["PageData"]] == [queue] and page["PageData"][0]["QueueUrl"].endswith(
        f"/queues/{queue}"
    )
    request(CreateTopicRequest, TopicName=topic, MaxMessageSize=1024)
    request(SetTopicAttributesRequest, TopicName=topic, EnableLogging="true")
    assert request(GetTopicAttributesRequest, TopicName=topic)["Data"]["LoggingEnabled"] is True
    assert [t["TopicName"] for t in request(ListTopicRequest, TopicName=topic)["Data"]["PageData"]] == [topic]
    request(SubscribeRequest, TopicName=topic, SubscriptionName="s1", PushType="queue", Endpoint=queue)
    sub = request(GetSubscriptionAttributesRequest, TopicName=topic, SubscriptionName="s1")["Data"]
    assert sub["Endpoint"] == queue  # read back as given (Terraform compares it with its configuration)
    on_xml = Account(endpoint, KEY_A, SECRET_A).get_subscription(topic, "s1").get_attributes()
    assert on_xml.endpoint == f"acs:mns:cn-hangzhou:{ACCOUNT_A[0]}:queues/{queue}"  # the XML plane's full form
    request(SetSubscriptionAttributesRequest, TopicName=topic, SubscriptionName="s1", NotifyStrategy="BACKOFF_RETRY")
    listed = request(ListSubscriptionByTopicRequest, TopicName=topic)["Data"]["PageData"]
    assert listed[0]["SubscriptionURL"].endswith(f"/topics/{topic}/subscriptions/s1")
    core.call("TagResources", ResourceType="topic", **{"ResourceId.1": topic, "Tag.1.Key": "k", "Tag.1.Value": "v"})
    assert request(GetTopicAttributesRequest, TopicName=topic)["Data"]["Tags"] == [{"TagKey": "k", "TagValue": "v"}]
    core.call("UntagResources", ResourceType="topic", **{"ResourceId.1": topic, "TagKey.1": "k"})
    assert request(GetTopicAttributesRequest, TopicName=topic)["Data"]["Tags"] == []
    request(UnsubscribeRequest, TopicName=topic, SubscriptionName="s1")
    request(DeleteTopicRequest, TopicName=topic)
    request(DeleteQueueRequest, QueueName=queue)
    assert core_error(lambda: request(GetQueueAttributesRequest, QueueName=queue)) == ("QueueNotExist", 404)
    assert core_error(lambda: request(GetSubscriptionAttributesRequest, TopicName=topic, SubscriptionName="s1"))[0] in (
        "SubscriptionNotExist",
        "TopicNotExist",
    )


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_each_signature_refusal_has_its_code(endpoint):
    params = {"QueueName": "whatever"}
    status, body = v1_call(endpoint, KEY_A, "not-the-secret", "GetQueueAttributes", params)
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch") and body["RequestId"]
    status, body = v1_call(endpoint, "NOSUCHKEY", SECRET_A, "GetQueueAttributes", params)
    assert (status, body["Code"]) == (404, "InvalidAccessKeyId.NotFound")
    stale = _iso(datetime.now(UTC) - timedelta(minutes=20))
    status, body = v1_call(endpoint, KEY_A, SECRET_A, "ListQueue", {}, Timestamp=stale)
    assert (status, body["Code"]) == (400, "InvalidTimeStamp.Expired")
    nonce = uuid.uuid4().hex
    assert v1_call(endpoint, KEY_A, SECRET_A, "ListQueue", {}, SignatureNonce=nonce)[0] == 200
    status, body = v1_call(endpoint, KEY_A, SECRET_A, "ListQueue", {}, SignatureNonce=nonce)
    assert (status, body["Code"]) == (400, "SignatureNonceUsed")
    # ACS3: a signed header changed after signing, and a body that is not the one hashed
    headers = acs3_headers(endpoint, KEY_A, SECRET_A, "ListQueue", {"PageSize": "5"})
    assert post(endpoint, {"PageSize": "5"}, b"", headers)[0] == 200
    tampered = {**acs3_headers(endpoint, KEY_A, SECRET_A, "ListQueue", {}), "x-acs-action": "ListTopic"}
    status, body = post(endpoint, {}, b"", tampered)
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch")
    headers = acs3_headers(endpoint, KEY_A, SECRET_A, "ListQueue", {})
    status, body = post(endpoint, {}, b"QueueName=x", {**headers, "content-type": "application/x-www-form-urlencoded"})
    assert (status, body["Code"]) == (400, "SignatureDoesNotMatch")
    replayed = acs3_headers(endpoint, KEY_A, SECRET_A, "ListTopic", {})
    assert post(endpoint, {}, b"", replayed)[0] == 200
    assert post(endpoint, {}, b"", replayed)[1]["Code"] == "SignatureNonceUsed"
    status, body = v1_call(endpoint, KEY_A, SECRET_A, "NoSuchAction", {})
    assert (status, body["Code"]) == (404, "InvalidAction.NotFound")


def test_a_token_limited_by_its_policy_is_refused_beyond_it_on_both_signatures(endpoint):
    queue = unique("sts")
    tea_client(endpoint, KEY_A, SECRET_A).create_queue(models.CreateQueueRequest(queue_name=queue))
    policy = {
        "Version": "1",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["mns:GetQueueAttributes"],
                "Resource": f"acs:mns:*:{ACCOUNT_A[0]}:/queues/{queue}",
            }
        ],
    }
    credentials = issue(endpoint, policy_body(policy))
    key, secret, token = credentials["AccessKeyId"], credentials["AccessKeySecret"], credentials["SecurityToken"]
    limited = tea_client(endpoint, key, secret, token=token)
    assert (
        limited.get_queue_attributes(models.GetQueueAttributesRequest(queue_name=queue)).body.data.queue_name == queue
    )
    code, status = tea_error(lambda: limited.create_queue(models.CreateQueueRequest(queue_name=unique("no"))))
    assert (code, status) == ("Forbidden.RAM", 403)
    status, body = v1_call(endpoint, key, secret, "DeleteQueue", {"QueueName": queue}, SecurityToken=token)
    assert (status, body["Code"]) == (403, "Forbidden.RAM")
    assert "mns:DeleteQueue" in body["Message"]
    assert v1_call(endpoint, key, secret, "GetQueueAttributes", {"QueueName": queue}, SecurityToken=token)[0] == 200
    status, body = v1_call(endpoint, key, secret, "GetQueueAttributes", {"QueueName": queue}, SecurityToken=token + "x")
    assert status == 400 and body["Code"].startswith("InvalidSecurityToken")
    tea_client(endpoint, KEY_A, SECRET_A).delete_queue(models.DeleteQueueRequest(queue_name=queue))


def test_another_account_sees_nothing_of_the_first(endpoint):
    a = tea_client(endpoint, KEY_A, SECRET_A)
    b = tea_client(endpoint, ACCOUNT_B[1], ACCOUNT_B[2])
    queue = unique("mine")
    a.create_queue(models.CreateQueueRequest(queue_name=queue))
    try:
        names = [
            q["QueueName"]
            for q in b.list_queue(models.ListQueueRequest(page_size=50)).body.to_map()["Data"]["PageData"]
        ]
        assert queue not in names
        assert (
            tea_error(lambda: b.get_queue_attributes(models.GetQueueAttributesRequest(queue_name=queue)))[0]
            == "QueueNotExist"
        )
        # at the owner's host, without a grant: refused, whether the queue exists or not
        host = endpoint.replace("127.0.0.1", f"{ACCOUNT_A[0]}.mns.localhost")
        headers = acs3_headers(host, ACCOUNT_B[1], ACCOUNT_B[2], "GetQueueAttributes", {"QueueName": queue})
        status, body = post(endpoint, {"QueueName": queue}, b"", headers)
        assert (status, body["Code"]) == (403, "Forbidden.RAM")
    finally:
        a.delete_queue(models.DeleteQueueRequest(queue_name=queue))


def test_the_xml_and_openapi_planes_serve_the_same_queue(endpoint):
    client = tea_client(endpoint, KEY_A, SECRET_A)
    xml = Account(endpoint, KEY_A, SECRET_A)
    made_by_rpc, made_by_xml = unique("rpc"), unique("xml")
    client.create_queue(models.CreateQueueRequest(queue_name=made_by_rpc, visibility_timeout=50))
    queue = xml.get_queue(made_by_rpc)
    assert queue.get_attributes().visibility_timeout == 50
    queue.send_message(Message("hello"))
    data = client.get_queue_attributes(models.GetQueueAttributesRequest(queue_name=made_by_rpc)).body.to_map()["Data"]
    assert data["ActiveMessages"] == 1
    meta = QueueMeta()
    meta.set_visibilitytimeout(70)
    xml.get_queue(made_by_xml).create(meta)
    client.set_queue_attributes(models.SetQueueAttributesRequest(queue_name=made_by_xml, polling_wait_seconds=3))
    attributes = xml.get_queue(made_by_xml).get_attributes()
    assert (attributes.visibility_timeout, attributes.polling_wait_seconds) == (70, 3)
    client.delete_queue(models.DeleteQueueRequest(queue_name=made_by_xml))
    with pytest.raises(MNSServerException):
        xml.get_queue(made_by_xml).get_attributes()
    xml.get_queue(made_by_rpc).delete()
    raw = RawClient(endpoint, KEY_A, SECRET_A)
    assert raw.request("GET", f"/queues/{made_by_rpc}").status == 404
    assert json.loads(json.dumps(data))["QueueName"] == made_by_rpc
