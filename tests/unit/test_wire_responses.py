"""Entities encoded as MNS response elements: the exact bytes the SDKs parse."""

from mnsd.ground import errors
from mnsd.model.messages import Property
from mnsd.model.queues import Queue, QueueAttributes, QueueCounts
from mnsd.model.topics import Subscription, SubscriptionAttributes, Topic, TopicAttributes, TopicMessage
from mnsd.queues.messages import Received, SendResult
from mnsd.wire import codec, responses
from tests.support.wire import HEAD, NS, stored, xml


def test_received_message():
    received = Received(stored(), "HANDLE")
    assert xml(responses.received(received)) == (
        f"{HEAD}<Message {NS}><MessageId>M1</MessageId><ReceiptHandle>HANDLE</ReceiptHandle>"
        "<MessageBodyMD5>MD5</MessageBodyMD5><MessageBody>a&lt;b</MessageBody><EnqueueTime>1000</EnqueueTime>"
        "<FirstDequeueTime>2000</FirstDequeueTime><DequeueCount>1</DequeueCount><Priority>8</Priority>"
        "<NextVisibleTime>31000</NextVisibleTime></Message>"
    )


def test_peeked_message_with_group_and_properties():
    message = stored(
        message_group_id="g",
        user_properties=(Property("a", "1", "NUMBER"),),
        system_properties=(Property("s", "v", "STRING"),),
    )
    assert xml(responses.message_node(message)) == (
        f"{HEAD}<Message {NS}><MessageId>M1</MessageId>"
        "<MessageBodyMD5>MD5</MessageBodyMD5><MessageBody>a&lt;b</MessageBody><EnqueueTime>1000</EnqueueTime>"
        "<FirstDequeueTime>2000</FirstDequeueTime><DequeueCount>1</DequeueCount><Priority>8</Priority>"
        "<MessageGroupId>g</MessageGroupId>"
        "<UserProperties><PropertyValue><Name>a</Name><Value>1</Value><Type>NUMBER</Type></PropertyValue>"
        "</UserProperties><SystemProperties><SystemPropertyValue><Name>s</Name><Value>v</Value><Type>STRING</Type>"
        "</SystemPropertyValue></SystemProperties></Message>"
    )


def test_batches_of_received_and_peeked_messages():
    out = xml(
        responses.received_batch([Received(stored(message_id="A"), "h1"), Received(stored(message_id="B"), "h2")])
    )
    assert out.startswith(f"{HEAD}<Messages {NS}><Message><MessageId>A</MessageId><ReceiptHandle>h1</ReceiptHandle>")
    assert out.count("<Message>") == 2 and "<ReceiptHandle>h2</ReceiptHandle>" in out
    peeked = xml(responses.peeked_batch([stored()]))
    assert peeked.startswith(f"{HEAD}<Messages {NS}><Message><MessageId>M1</MessageId><MessageBodyMD5>")
    assert "ReceiptHandle" not in peeked and "NextVisibleTime" not in peeked


def test_sent_message_handle_only_when_delayed():
    assert xml(responses.sent(SendResult(stored(), None))) == (
        f"{HEAD}<Message {NS}><MessageId>M1</MessageId><MessageBodyMD5>MD5</MessageBodyMD5></Message>"
    )
    assert xml(responses.sent(SendResult(stored(), "H"))).endswith(
        "<MessageBodyMD5>MD5</MessageBodyMD5><ReceiptHandle>H</ReceiptHandle></Message>"
    )


def test_batch_send_results():
    ok = [SendResult(stored(message_id="A"), None), SendResult(stored(message_id="B"), "H")]
    assert xml(responses.sent_batch(ok)) == (
        f"{HEAD}<Messages {NS}><Message><MessageId>A</MessageId><MessageBodyMD5>MD5</MessageBodyMD5></Message>"
        "<Message><MessageId>B</MessageId><MessageBodyMD5>MD5</MessageBodyMD5></Message></Messages>"
    )
    node = responses.sent_batch([ok[0], SendResult(stored(), None, errors.InternalError())])
    assert xml(node).endswith(
        "<Message><ErrorCode>InternalError</ErrorCode><ErrorMessage>Internal error.</ErrorMessage></Message></Messages>"
    )


def test_batch_delete_failures():
    assert xml(responses.delete_failures([("h1", errors.ReceiptHandleError())])) == (
        f"{HEAD}<Errors {NS}><Error><ErrorCode>ReceiptHandleError</ErrorCode>"
        "<ErrorMessage>The receipt handle you provide is not valid.</ErrorMessage>"
        "<ReceiptHandle>h1</ReceiptHandle></Error></Errors>"
    )


def test_visibility_changed_and_published():
    assert xml(responses.visibility_changed("H2", 5000)) == (
        f"{HEAD}<ChangeVisibility {NS}><ReceiptHandle>H2</ReceiptHandle><NextVisibleTime>5000</NextVisibleTime>"
        "</ChangeVisibility>"
    )
    published = TopicMessage("1", "t", "tid", "T1", "body", "", 1)
    assert xml(responses.published(published)) == (
        f"{HEAD}<Message {NS}><MessageId>T1</MessageId><MessageBodyMD5>{published.body_md5}</MessageBodyMD5></Message>"
    )


QUEUE = Queue("1", "q", "qid", QueueAttributes(delay_seconds=2, logging_enabled=True), 10, 20)
QUEUE_FIELDS = (
    "<QueueName>q</QueueName><CreateTime>10</CreateTime><LastModifyTime>20</LastModifyTime>"
    "<DelaySeconds>2</DelaySeconds><MaximumMessageSize>65536</MaximumMessageSize>"
    "<MessageRetentionPeriod>259200</MessageRetentionPeriod><VisibilityTimeout>30</VisibilityTimeout>"
    "<PollingWaitSeconds>0</PollingWaitSeconds><LoggingEnabled>True</LoggingEnabled><MetricsEnabled>True</MetricsEnabled>"
    "<QueueType>normal</QueueType>"
)


def test_queue_attributes_with_counts():
    assert xml(responses.queue_node(QUEUE, QueueCounts(3, 2, 1), metrics_default=True)) == (
        f"{HEAD}<Queue {NS}>{QUEUE_FIELDS}<ActiveMessages>3</ActiveMessages><InactiveMessages>2</InactiveMessages>"
        "<DelayMessages>1</DelayMessages></Queue>"
    )


def test_fifo_queue_attributes_name_its_type_and_groups_in_flight():
    fifo = Queue("1", "q", "qid", QueueAttributes(delay_seconds=2, logging_enabled=True, queue_type="fifo"), 10, 20)
    assert xml(responses.queue_node(fifo, QueueCounts(0, 1, 0), held_groups=1, metrics_default=True)) == (
        f"{HEAD}<Queue {NS}>{QUEUE_FIELDS.replace('normal', 'fifo')}<ActiveMessages>0</ActiveMessages>"
        "<InactiveMessages>1</InactiveMessages><DelayMessages>0</DelayMessages>"
        "<MessageGroupsInFlight>1</MessageGroupsInFlight></Queue>"
    )


def test_queue_list_with_and_without_meta():
    assert xml(responses.queue_list([QUEUE], "MARK", "http://h", False, metrics_default=True)) == (
        f"{HEAD}<Queues {NS}><Queue><QueueURL>http://h/queues/q</QueueURL><QueueName>q</QueueName></Queue>"
        "<NextMarker>MARK</NextMarker></Queues>"
    )
    assert xml(responses.queue_list([QUEUE], None, "http://h", True, metrics_default=True)) == (
        f"{HEAD}<Queues {NS}><Queue><QueueURL>http://h/queues/q</QueueURL>{QUEUE_FIELDS}</Queue></Queues>"
    )


TOPIC = Topic("1", "t", "tid", TopicAttributes(maximum_message_size=1024), 10, 20)


def test_topic_attributes_and_list():
    fields = (
        "<TopicName>t</TopicName><CreateTime>10</CreateTime><LastModifyTime>20</LastModifyTime>"
        "<MaximumMessageSize>1024</MaximumMessageSize><MessageRetentionPeriod>86400</MessageRetentionPeriod>"
    )
    assert xml(responses.topic_node(TOPIC, 4, metrics_default=True)) == (
        f"{HEAD}<Topic {NS}>{fields}<MessageCount>4</MessageCount><LoggingEnabled>False</LoggingEnabled>"
        "<MetricsEnabled>True</MetricsEnabled></Topic>"
    )
    assert xml(responses.topic_list([TOPIC], None, "http://h", True, metrics_default=True)) == (
        f"{HEAD}<Topics {NS}><Topic><TopicURL>http://h/topics/t</TopicURL>{fields}"
        "<LoggingEnabled>False</LoggingEnabled><MetricsEnabled>True</MetricsEnabled></Topic></Topics>"
    )
    assert xml(responses.topic_list([TOPIC], None, "http://h", False, metrics_default=True)) == (
        f"{HEAD}<Topics {NS}><Topic><TopicURL>http://h/topics/t</TopicURL><TopicName>t</TopicName></Topic></Topics>"
    )
    assert xml(responses.topic_list([], "M", "http://h", False, metrics_default=True)) == (
        f"{HEAD}<Topics {NS}><NextMarker>M</NextMarker></Topics>"
    )


def test_metrics_enabled_answers_the_choice_else_the_stack_default_and_alarms_their_json():
    chosen = Queue("1", "q", "qid", QueueAttributes(metrics_enabled=False), 10, 20)
    unset = Queue("1", "q", "qid", QueueAttributes(), 10, 20)
    alarmed = Queue("1", "q", "qid", QueueAttributes(alarms='{"DeadLetters":true,"Minutes":5}'), 10, 20)

    def answer(queue: Queue, default: bool) -> tuple[str | None, str | None]:
        root = codec.parse(codec.encode(responses.queue_node(queue, None, metrics_default=default)))
        return root.value("MetricsEnabled"), root.value("Alarms")

    assert answer(chosen, True) == ("False", None)
    assert answer(unset, True) == ("True", None)
    assert answer(unset, False) == ("False", None)
    assert answer(alarmed, False) == ("True", '{"DeadLetters":true,"Minutes":5}')  # its alarms read its metrics
    topic = Topic("1", "t", "tid", TopicAttributes(metrics_enabled=True), 10, 20)
    root = codec.parse(codec.encode(responses.topic_node(topic, None, metrics_default=False)))
    assert root.value("MetricsEnabled") == "True"


def test_subscription_attributes_omit_an_empty_filter_tag():
    subscription = Subscription("1", "t", "s", SubscriptionAttributes("http://e"), 5_000, 6, "tid")
    expected = (
        f"{HEAD}<Subscription {NS}><SubscriptionName>s</SubscriptionName><Subscriber>1</Subscriber>"
        "<TopicOwner>1</TopicOwner><TopicName>t</TopicName><Endpoint>http://e</Endpoint>"
        "<NotifyStrategy>BACKOFF_RETRY</NotifyStrategy><NotifyContentFormat>XML</NotifyContentFormat>"
        "{tag}<CreateTime>5</CreateTime><LastModifyTime>6</LastModifyTime></Subscription>"
    )
    assert xml(responses.subscription_node(subscription)) == expected.format(tag="")
    tagged = Subscription("1", "t", "s", SubscriptionAttributes("http://e", filter_tag="x"), 5_000, 6, "tid")
    assert xml(responses.subscription_node(tagged)) == expected.format(tag="<FilterTag>x</FilterTag>")


def test_subscription_attributes_carry_the_dlq_policy_as_the_sdk_can_parse_it():
    from mns.mns_xml_handler import GetSubscriptionAttrDecoder

    attributes = SubscriptionAttributes("http://e", dlq_enabled=True, dlq_target_queue="dlq")
    encoded = xml(responses.subscription_node(Subscription("1", "t", "s", attributes, 5_000, 6, "tid")))
    assert (
        "<NotifyContentFormat>XML</NotifyContentFormat><CreateTime>5</CreateTime><LastModifyTime>6</LastModifyTime>"
        '<DlqPolicy>{"Enabled":true,"DeadLetterTargetQueue":"dlq"}</DlqPolicy>'
        "</Subscription>"
    ) in encoded
    # SDK 1.3.0 reads each child's first child as text: the policy comes to it as its JSON text.
    decoded = GetSubscriptionAttrDecoder.decode(encoded.encode())
    assert (decoded["Endpoint"], decoded["DlqPolicy"]) == ("http://e", '{"Enabled":true,"DeadLetterTargetQueue":"dlq"}')
    disabled = SubscriptionAttributes("http://e", dlq_target_queue="dlq")
    encoded = xml(responses.subscription_node(Subscription("1", "t", "s", disabled, 5_000, 6, "tid")))
    assert '<DlqPolicy>{"Enabled":false,"DeadLetterTargetQueue":"dlq"}</DlqPolicy>' in encoded
    never = xml(responses.subscription_node(Subscription("1", "t", "s", SubscriptionAttributes("http://e"), 5, 6, "t")))
    assert "DlqPolicy" not in never


def test_subscription_list():
    a, b = (Subscription("1", "t", name, SubscriptionAttributes("http://e"), 5, 6, "tid") for name in "ab")
    assert xml(responses.subscription_list([a, b], "M", "http://h/topics/t/subscriptions")) == (
        f"{HEAD}<Subscriptions {NS}><Subscription><SubscriptionURL>http://h/topics/t/subscriptions/a</SubscriptionURL>"
        "</Subscription><Subscription><SubscriptionURL>http://h/topics/t/subscriptions/b</SubscriptionURL>"
        "</Subscription><NextMarker>M</NextMarker></Subscriptions>"
    )


def test_subscription_list_with_meta_carries_each_subscriptions_attributes():
    """The Java SDK's `listSubscriptions` sends `x-mns-with-meta: true` and reads each entry's attributes."""
    a = Subscription("1", "t", "a", SubscriptionAttributes("http://e"), 5, 6, "tid")
    encoded = xml(responses.subscription_list([a], None, "http://h/topics/t/subscriptions", with_meta=True))
    assert encoded == (
        f"{HEAD}<Subscriptions {NS}><Subscription><SubscriptionURL>http://h/topics/t/subscriptions/a</SubscriptionURL>"
        + xml(responses.subscription_node(a)).split("<Subscription " + NS + ">")[1].removesuffix("</Subscription>")
        + "</Subscription></Subscriptions>"
    )
    assert "<SubscriptionName>a</SubscriptionName><Subscriber>1</Subscriber>" in encoded
    assert "<Endpoint>http://e</Endpoint>" in encoded


def test_account_and_error():
    assert xml(responses.account_node("")) == f"{HEAD}<Account {NS}><LoggingBucket></LoggingBucket></Account>"
    assert xml(responses.error_node(errors.QueueNotExist(), "RID", "host")) == (
        f"{HEAD}<Error {NS}><Code>QueueNotExist</Code><Message>The queue name you provided is not exist.</Message>"
        "<RequestId>RID</RequestId><HostId>host</HostId></Error>"
    )
