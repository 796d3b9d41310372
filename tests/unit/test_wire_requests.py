"""Request bodies read into the domain's inputs, and the domain's checks of what they carry."""

import pytest

from mnsd.calls import queries
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest
from mnsd.model.inputs import MessageInput, PropertyInput, PublishInput
from mnsd.model.messages import Property
from mnsd.model.queues import QueueAttributeChanges, QueueAttributes
from mnsd.model.topics import (
    DlqPolicyInput,
    SubscriptionAttributes,
    SubscriptionChanges,
    SubscriptionInput,
    TopicAttributeChanges,
)
from mnsd.wire import requests
from mnsd.wire.codec import parse

NS = 'xmlns="http://mns.aliyuncs.com/doc/v1"'


def body(tag: str, inner: str) -> bytes:
    return f'<?xml version="1.0" encoding="UTF-8"?><{tag} {NS}>{inner}</{tag}>'.encode()


def message(inner: str):
    return parse(body("Message", inner))


def subscription(inner: str):
    return parse(body("Subscription", inner))


def invalid(call) -> str:
    with pytest.raises(errors.InvalidArgument) as exc:
        call()
    return exc.value.message


# ---------------------------------------------------------------- queues


def test_queue_attribute_changes_carry_the_given_texts():
    xml = parse(
        body(
            "Queue",
            "<DelaySeconds>5</DelaySeconds><MaximumMessageSize>2048</MaximumMessageSize>"
            "<MessageRetentionPeriod>600</MessageRetentionPeriod><VisibilityTimeout>60</VisibilityTimeout>"
            "<PollingWaitSeconds>3</PollingWaitSeconds><LoggingEnabled>True</LoggingEnabled>",
        )
    )
    assert requests.queue_attribute_changes(xml) == QueueAttributeChanges("5", "2048", "600", "60", "3", "True")


def test_metrics_enabled_and_alarms_are_read_as_given_and_an_empty_one_unsets():
    alarms = '{"VisibleMessages": 100}'
    xml = parse(body("Queue", f"<MetricsEnabled>False</MetricsEnabled><Alarms>{alarms}</Alarms>"))
    assert requests.queue_attribute_changes(xml) == QueueAttributeChanges(metrics_enabled="False", alarms=alarms)
    emptied = requests.queue_attribute_changes(parse(body("Queue", "<MetricsEnabled></MetricsEnabled><Alarms/>")))
    assert emptied == QueueAttributeChanges(metrics_enabled="", alarms="")
    set_before = QueueAttributes(metrics_enabled=False, alarms='{"DeadLetters":true,"Minutes":5}')
    assert set_before.updated_from(emptied) == QueueAttributes()
    topic = parse(body("Topic", "<MetricsEnabled>true</MetricsEnabled>"))
    assert requests.topic_attribute_changes(topic) == TopicAttributeChanges(metrics_enabled="true")


def test_queue_attribute_changes_without_body_or_elements_are_empty():
    assert requests.queue_attribute_changes(None) == QueueAttributeChanges()
    assert requests.queue_attribute_changes(parse(body("Queue", ""))) == QueueAttributeChanges()
    only = requests.queue_attribute_changes(parse(body("Queue", "<VisibilityTimeout>7</VisibilityTimeout>")))
    assert only == QueueAttributeChanges(visibility_timeout="7")


def test_queue_attributes_apply_the_given_changes_within_their_ranges():
    base = QueueAttributes(visibility_timeout=60)
    changed = base.updated_from(QueueAttributeChanges(delay_seconds="5", logging_enabled="true"))
    assert changed == QueueAttributes(delay_seconds=5, visibility_timeout=60, logging_enabled=True)
    assert base.updated_from(QueueAttributeChanges()) == base
    with pytest.raises(errors.InvalidArgument):  # integers are digits only, as MNS reads them
        base.updated_from(QueueAttributeChanges(delay_seconds=" 5 "))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            QueueAttributeChanges(delay_seconds="604801"),
            "The value of DelaySeconds should between 0 and 604800 seconds.",
        ),
        (
            QueueAttributeChanges(maximum_message_size="1023"),
            "The value of MaximumMessageSize should between 1024 and 65536 bytes.",
        ),
        (
            QueueAttributeChanges(message_retention_period="x"),
            "The value of MessageRetentionPeriod should between 60 and 1296000 seconds.",
        ),
        (
            QueueAttributeChanges(visibility_timeout="0"),
            "The value of VisibilityTimeout should between 1 and 43200 seconds.",
        ),
        (
            QueueAttributeChanges(polling_wait_seconds="31"),
            "The value of PollingWaitSeconds should between 0 and 30 seconds.",
        ),
        (QueueAttributeChanges(logging_enabled="maybe"), "The value of LoggingEnabled should be True or False."),
    ],
)
def test_queue_attribute_out_of_range(changes, message):
    assert invalid(lambda: QueueAttributes().updated_from(changes)) == message


# ---------------------------------------------------------------- messages


def test_sent_message_with_everything():
    xml = message(
        "<MessageBody>hello</MessageBody><DelaySeconds>3</DelaySeconds><Priority>2</Priority>"
        "<MessageGroupId>g</MessageGroupId>"
        "<UserProperties><PropertyValue><Name>a</Name><Value>1</Value><Type>NUMBER</Type></PropertyValue>"
        "<PropertyValue><Name>b</Name><Value></Value><Type>STRING</Type></PropertyValue></UserProperties>"
        "<SystemProperties><SystemPropertyValue><Name>s</Name><Value>v</Value><Type>STRING</Type>"
        "</SystemPropertyValue></SystemProperties>"
    )
    assert requests.sent_message(xml) == MessageInput(
        body="hello",
        delay_seconds=3,
        priority=2,
        user_properties=(Property("a", "1", "NUMBER"), Property("b", "", "STRING")),
        system_properties=(Property("s", "v", "STRING"),),
        message_group_id="g",
        priority_given=True,
    )


def test_sent_message_defaults():
    assert requests.sent_message(message("<MessageBody>x</MessageBody>")) == MessageInput("x", None, 8)


def test_message_request_keeps_incomplete_properties_for_the_domain():
    xml = message("<UserProperties><PropertyValue><Name>a</Name></PropertyValue></UserProperties>")
    request = requests.message_request(xml)
    assert request.body is None
    assert request.user_properties == (PropertyInput("a", None, None),)


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("", "The MessageBody should not be empty."),
        ("<MessageBody></MessageBody>", "The MessageBody should not be empty."),
        (
            "<MessageBody>x</MessageBody><DelaySeconds>604801</DelaySeconds>",
            "The value of DelaySeconds should between 0 and 604800 seconds.",
        ),
        ("<MessageBody>x</MessageBody><Priority>abc</Priority>", "The value of Priority should between 1 and 16."),
        ("<MessageBody>x</MessageBody><Priority>0</Priority>", "The value of Priority should between 1 and 16."),
        (
            "<MessageBody>x</MessageBody><UserProperties><PropertyValue><Name>a</Name><Value>1</Value>"
            "</PropertyValue></UserProperties>",
            "Each PropertyValue needs Name, Value and Type.",
        ),
        (
            "<MessageBody>x</MessageBody><SystemProperties><SystemPropertyValue><Value>1</Value><Type>STRING</Type>"
            "</SystemPropertyValue></SystemProperties>",
            "Each SystemPropertyValue needs Name, Value and Type.",
        ),
        # The body is checked first, then the delay, the priority, the properties.
        ("<DelaySeconds>-1</DelaySeconds><Priority>0</Priority>", "The MessageBody should not be empty."),
        (
            "<MessageBody>x</MessageBody><DelaySeconds>-1</DelaySeconds><Priority>0</Priority>",
            "The value of DelaySeconds should between 0 and 604800 seconds.",
        ),
    ],
)
def test_bad_sent_message(inner, expected):
    assert invalid(lambda: requests.sent_message(message(inner))) == expected


def messages(*bodies: str):
    inner = "".join(f"<Message><MessageBody>{b}</MessageBody></Message>" for b in bodies)
    return parse(body("Messages", inner))


def test_sent_messages_in_order():
    assert [m.body for m in requests.sent_messages(messages("a", "b", "c"))] == ["a", "b", "c"]


def test_batch_of_messages_count_size_then_each():
    assert invalid(lambda: requests.sent_messages(messages())) == "The count of message should between 1 and 16."
    too_many = messages(*["x"] * 17, "")  # the count is refused before the empty body
    assert invalid(lambda: requests.sent_messages(too_many)) == "The count of message should between 1 and 16."
    assert invalid(lambda: requests.sent_messages(messages("x", ""))) == "The MessageBody should not be empty."
    big = messages("a" * 40000, "b" * 30000)
    assert (
        invalid(lambda: requests.sent_messages(big))
        == "The total size of messages should not be larger than 65536 bytes."
    )
    assert len(requests.sent_messages(messages("a" * 40000, "b" * 25536))) == 2


def test_receipt_handles():
    xml = parse(body("ReceiptHandles", "<ReceiptHandle>h1</ReceiptHandle><ReceiptHandle>h2</ReceiptHandle>"))
    assert requests.receipt_handles(xml) == ["h1", "h2"]


# ---------------------------------------------------------------- topics, subscriptions, publishing, account


def test_topic_attribute_changes():
    xml = parse(body("Topic", "<MaximumMessageSize>1024</MaximumMessageSize><LoggingEnabled>false</LoggingEnabled>"))
    assert requests.topic_attribute_changes(xml) == TopicAttributeChanges("1024", "false")
    assert requests.topic_attribute_changes(None) == TopicAttributeChanges()


def test_subscription_input_and_changes():
    xml = subscription(
        "<Endpoint>http://h/p</Endpoint><FilterTag>t</FilterTag><NotifyStrategy>BACKOFF_RETRY</NotifyStrategy>"
        "<NotifyContentFormat>JSON</NotifyContentFormat>"
    )
    assert requests.subscription_input(xml) == SubscriptionInput("http://h/p", "t", "BACKOFF_RETRY", "JSON")
    assert requests.subscription_changes(xml) == SubscriptionChanges("BACKOFF_RETRY")
    empty = subscription("")
    assert requests.subscription_input(empty) == SubscriptionInput()
    assert requests.subscription_changes(empty) == SubscriptionChanges()


def test_a_subscription_dlq_policy_is_read_on_subscribe_and_set():
    xml = subscription(
        "<Endpoint>http://h/p</Endpoint><DlqPolicy><Enabled>True</Enabled>"
        "<DeadLetterTargetQueue>dlq</DeadLetterTargetQueue></DlqPolicy>"
    )
    policy = DlqPolicyInput("True", "dlq")
    assert requests.subscription_input(xml).dlq_policy == policy
    assert requests.subscription_changes(xml) == SubscriptionChanges(None, policy)
    empty_policy = subscription("<DlqPolicy/>")
    assert requests.subscription_changes(empty_policy).dlq_policy == DlqPolicyInput()


def test_a_dlq_policy_is_checked_against_the_subscriptions_attributes():
    http = SubscriptionAttributes("http://h/p")
    enabled = http.with_dlq_policy(DlqPolicyInput("true", " dlq "))
    assert (enabled.dlq_enabled, enabled.dlq_target_queue, enabled.dead_letter_queue) == (True, "dlq", "dlq")
    assert http.with_dlq_policy(DlqPolicyInput(None, "dlq")).dead_letter_queue == "dlq"  # Enabled defaults to True
    disabled = enabled.with_dlq_policy(DlqPolicyInput("False"))
    assert (disabled.dlq_enabled, disabled.dlq_target_queue, disabled.dead_letter_queue) == (False, "dlq", None)
    assert http.with_dlq_policy(DlqPolicyInput("False")).dead_letter_queue is None
    assert disabled.with_dlq_policy(DlqPolicyInput("True")).dead_letter_queue == "dlq"  # re-enabled: the kept queue
    assert disabled.with_dlq_policy(DlqPolicyInput("True", "other")).dead_letter_queue == "other"
    assert http.with_dlq_policy(None) is http
    for bad in (
        DlqPolicyInput(),  # enabled, but no queue
        DlqPolicyInput("True", ""),
        DlqPolicyInput("yes", "dlq"),
        DlqPolicyInput("True", "-dlq"),
        DlqPolicyInput("True", "bad_name"),
        DlqPolicyInput("True", "q" * 257),
        DlqPolicyInput("False", "bad name"),
    ):
        assert "DlqPolicy" in invalid(lambda bad=bad: http.with_dlq_policy(bad)), bad
    into_its_own_queue = SubscriptionAttributes("acs:mns:cn-hangzhou:1:queues/dlq")
    assert "cannot dead-letter" in invalid(lambda: into_its_own_queue.with_dlq_policy(DlqPolicyInput("True", "dlq")))
    assert into_its_own_queue.with_dlq_policy(DlqPolicyInput("True", "other")).dead_letter_queue == "other"


def test_publish_input():
    xml = message(
        "<MessageBody>b</MessageBody><MessageTag>tag</MessageTag>"
        '<MessageAttributes><DirectMail>{"Subject": "s"}</DirectMail><DirectSMS>{}</DirectSMS></MessageAttributes>'
        "<UserProperties><PropertyValue><Name>n</Name><Value>v</Value><Type>STRING</Type></PropertyValue>"
        "</UserProperties>"
    )
    assert requests.publish_input(xml) == PublishInput(
        body="b",
        tag="tag",
        direct_mail='{"Subject": "s"}',
        direct_sms="{}",
        user_properties=(PropertyInput("n", "v", "STRING"),),
    )
    assert requests.publish_input(message("")) == PublishInput()


def test_logging_bucket():
    assert requests.logging_bucket(parse(body("Account", "<LoggingBucket>b</LoggingBucket>"))) == "b"
    assert requests.logging_bucket(parse(body("Account", "<LoggingBucket></LoggingBucket>"))) == ""
    assert requests.logging_bucket(parse(body("Account", ""))) is None


# ---------------------------------------------------------------- query parameters


def query(raw: str) -> HttpRequest:
    return HttpRequest("GET", "/queues/q/messages", raw, {})


def test_receive_parameters():
    assert queries.wait_seconds(query("")) is None
    assert queries.wait_seconds(query("waitseconds=30")) == 30
    assert queries.batch_size(query("numOfMessages=16")) == 16
    assert queries.batch_size(query("numofmessages=1")) == 1  # names are case-insensitive
    assert invalid(lambda: queries.wait_seconds(query("waitseconds=31"))) == (
        "The value of waitseconds should between 0 and 30 seconds."
    )
    assert invalid(lambda: queries.batch_size(query("numOfMessages=17"))) == (
        "The value of numOfMessages should between 1 and 16."
    )
    assert invalid(lambda: queries.batch_size(query(""))) == "The value of numOfMessages should between 1 and 16."


def test_visibility_change_parameters():
    assert queries.visibility_change(query("ReceiptHandle=h&VisibilityTimeout=0")) == ("h", 0)
    with pytest.raises(errors.MissingReceiptHandle):
        queries.visibility_change(query("VisibilityTimeout=10"))
    with pytest.raises(errors.MissingVisibilityTimeout):
        queries.visibility_change(query("ReceiptHandle=h"))
    assert invalid(lambda: queries.visibility_change(query("ReceiptHandle=h&VisibilityTimeout=43201"))) == (
        "The value of VisibilityTimeout should between 0 and 43200 seconds."
    )
