import pytest

from mnsd.ground import errors
from mnsd.model.topics import (
    BACKOFF_RETRY,
    HTTP,
    MAIL,
    QUEUE,
    SIMPLIFIED,
    SMS,
    XML,
    Subscription,
    SubscriptionInput,
    TopicAttributeChanges,
    TopicAttributes,
    TopicMessage,
    parse_endpoint,
    subscription_attributes,
)

REGION, ACCOUNT = "cn-hangzhou", "1000000000000001"


@pytest.mark.parametrize(
    ("text", "kind", "target"),
    [
        (f"acs:mns:{REGION}:{ACCOUNT}:queues/orders-1", QUEUE, "orders-1"),
        ("http://example.com", HTTP, "http://example.com"),
        ("https://example.com:8443/a/b?c=d", HTTP, "https://example.com:8443/a/b?c=d"),
        ("mail:directmail:someone@example.com", MAIL, "someone@example.com"),
        ("sms:directsms:anonymous", SMS, "anonymous"),
        ("sms:directsms:13800000000", SMS, "13800000000"),
    ],
)
def test_endpoints_of_each_kind(text, kind, target):
    endpoint = parse_endpoint(text, REGION, ACCOUNT)
    assert (endpoint.kind, endpoint.target) == (kind, target)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ftp://example.com",
        "http://",
        "http://example.com/mns-reserved-x",
        f"acs:mns:cn-beijing:{ACCOUNT}:queues/q",  # another region
        f"acs:mns:{REGION}:{ACCOUNT}:queues/-bad",
        "mail:directmail:not-an-address",
        "sms:directsms:call-me",
    ],
)
def test_invalid_endpoints(text):
    with pytest.raises(errors.EndpointInvalid):
        parse_endpoint(text, REGION, ACCOUNT)


def test_subscription_defaults_and_mail_format():
    attributes = subscription_attributes(SubscriptionInput(endpoint="http://h/p"), REGION, ACCOUNT)
    assert (attributes.notify_strategy, attributes.notify_content_format, attributes.filter_tag) == (
        BACKOFF_RETRY,
        XML,
        "",
    )
    mail = subscription_attributes(SubscriptionInput(endpoint="mail:directmail:a@b.cn"), REGION, ACCOUNT)
    assert mail.notify_content_format == SIMPLIFIED
    with pytest.raises(errors.InvalidArgument):
        subscription_attributes(
            SubscriptionInput(endpoint="mail:directmail:a@b.cn", notify_content_format="XML"), REGION, ACCOUNT
        )


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({}, errors.EndpointInvalid),
        ({"endpoint": "http://h", "filter_tag": "x" * 17}, errors.InvalidArgument),
        ({"endpoint": "http://h", "notify_strategy": "SOMETIMES"}, errors.InvalidArgument),
        ({"endpoint": "http://h", "notify_content_format": "YAML"}, errors.InvalidArgument),
    ],
)
def test_invalid_subscription_attributes(fields, error):
    with pytest.raises(error):
        subscription_attributes(SubscriptionInput(**fields), REGION, ACCOUNT)


def test_strategy_and_format_are_case_insensitive():
    attributes = subscription_attributes(
        SubscriptionInput(endpoint="http://h", notify_strategy="exponential_decay_retry", notify_content_format="json"),
        REGION,
        ACCOUNT,
    )
    assert (attributes.notify_strategy, attributes.notify_content_format) == ("EXPONENTIAL_DECAY_RETRY", "JSON")


def test_topic_attribute_ranges():
    assert (
        TopicAttributes().updated_from(TopicAttributeChanges(maximum_message_size="1024")).maximum_message_size == 1024
    )
    for bad in ("1023", "65537", "x"):
        with pytest.raises(errors.InvalidArgument):
            TopicAttributes().updated_from(TopicAttributeChanges(maximum_message_size=bad))


def test_a_subscription_accepts_messages_published_after_it_with_its_tag():
    attributes = subscription_attributes(SubscriptionInput(endpoint="http://h", filter_tag="a"), REGION, ACCOUNT)
    subscription = Subscription(ACCOUNT, "t", "s", attributes, 1_000, 1, "tid")

    def message(tag: str, at: int) -> TopicMessage:
        return TopicMessage(ACCOUNT, "t", "tid", "m", "body", tag, at)

    assert subscription.accepts(message("a", 1_000))
    assert not subscription.accepts(message("a", 999))
    assert not subscription.accepts(message("b", 2_000))
    assert not subscription.accepts(message("", 2_000))
