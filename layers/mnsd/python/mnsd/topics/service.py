"""The topic service: topics, subscriptions and publishing over the control-plane and topic message tables.

Publishing stores the message and returns: fan-out happens elsewhere (`mnsd.push.fanout`), started by the
topic message table's stream on AWS and by a local thread pool in the local runtime.
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass, field
from typing import Protocol

from mnsd.control.catalog import Catalog
from mnsd.control.registry import Registry, created, decode_marker, next_marker
from mnsd.ground import errors
from mnsd.ground.clock import Clock, ms
from mnsd.ground.settings import Settings
from mnsd.metrics import MESSAGES_PUBLISHED, MetricsSink, NoMetrics, topic_labels
from mnsd.model.cloud_targets import check_cloud_target, cloud_target
from mnsd.model.egress import refuse_internal_endpoint
from mnsd.model.inputs import PublishInput, properties
from mnsd.model.messages import message_group_id
from mnsd.model.names import check_subscription_name, check_topic_name
from mnsd.model.ports import TopicMessageStore
from mnsd.model.topics import (
    MAX_TAG_LENGTH,
    QUEUE,
    QUEUE_ENDPOINT_REFUSAL,
    QueueGrants,
    Subscription,
    SubscriptionAttributes,
    SubscriptionChanges,
    SubscriptionInput,
    Topic,
    TopicAttributeChanges,
    TopicAttributes,
    TopicMessage,
    notify_strategy,
    parse_endpoint,
    subscription_attributes,
)
from mnsd.topics.attributes import direct_mail, direct_sms


class Dispatcher(Protocol):
    def submit(self, message: TopicMessage) -> None: ...


class StreamDispatcher:
    """On AWS the topic message table's stream starts the fan-out: nothing to do at publish."""

    def submit(self, message: TopicMessage) -> None:
        pass


@dataclass(eq=False, kw_only=True)  # a service: compared by identity
class TopicService:
    catalog: Catalog
    messages: TopicMessageStore
    clock: Clock
    settings: Settings
    dispatcher: Dispatcher  # starts the fan-out (`StreamDispatcher`: the table's stream does)
    registry: Registry[Topic]  # the control-plane path queues and topics share
    grants: QueueGrants | None = None
    metrics: MetricsSink = field(default_factory=NoMetrics)  # what publishing counts (`mnsd.metrics`)

    def __post_init__(self) -> None:
        self.list_topics = self.registry.list  # (account, prefix, limit, marker) -> (topics, next marker)
        self.delete_topic = self.registry.delete  # its subscriptions too; its messages are left to TTL

    # --- topics -------------------------------------------------------------------------------

    def create_topic(self, account_id: str, name: str, given: TopicAttributeChanges | None = None) -> bool:
        """Create a topic; False if an identical one exists (TopicAlreadyExist if it differs)."""
        check_topic_name(name)
        return self.registry.create(account_id, name, TopicAttributes().updated_from(given or TopicAttributeChanges()))

    def get_topic(self, account_id: str, name: str) -> Topic:
        return self.registry.get(account_id, name)

    def set_topic_attributes(self, account_id: str, name: str, given: TopicAttributeChanges) -> None:
        self.registry.set_attributes(account_id, name, lambda topic: topic.attributes.updated_from(given))

    def message_count(self, topic: Topic) -> int:
        return self.messages.count(topic.topic_id, ms(self.clock.now()))

    # --- subscriptions ------------------------------------------------------------------------

    def subscribe(self, account_id: str, topic_name: str, name: str, given: SubscriptionInput) -> bool:
        """Create a subscription; False if an identical one exists (SubscriptionAlreadyExist if it differs)."""
        check_subscription_name(name)
        topic = self.get_topic(account_id, topic_name)
        attributes = subscription_attributes(given, self.settings.region, account_id)
        refuse_internal_endpoint(attributes.endpoint, self.settings.push_allowed_networks)
        if target := cloud_target(attributes.endpoint):  # a Lambda function or EventBridge bus: this deployment's?
            check_cloud_target(target, self.settings)
        self._check_queue_endpoint(account_id, attributes)
        self._check_dead_letter_queue(account_id, attributes)
        now = self.clock.now()
        subscription = Subscription(account_id, topic_name, name, attributes, ms(now), int(now), topic.topic_id)
        return created(self.catalog.create_subscription(subscription), attributes, errors.SubscriptionAlreadyExist)

    def _check_queue_endpoint(self, account_id: str, attributes: SubscriptionAttributes) -> None:
        """A QueueEndpoint of another account only where that queue's policy lets this account send to it."""
        endpoint = parse_endpoint(attributes.endpoint, self.settings.region, account_id)
        if endpoint.kind != QUEUE or endpoint.account_id == account_id:
            return
        if self.grants is None or not self.grants.may_send(account_id, endpoint.account_id, endpoint.target):
            raise errors.EndpointInvalid(QUEUE_ENDPOINT_REFUSAL)

    def get_subscription(self, account_id: str, topic_name: str, name: str) -> Subscription:
        check_topic_name(topic_name)
        check_subscription_name(name)
        subscription = self.catalog.get_subscription(account_id, topic_name, name)
        if subscription is None:
            raise errors.SubscriptionNotExist()
        return subscription

    def set_subscription_attributes(
        self, account_id: str, topic_name: str, name: str, given: SubscriptionChanges
    ) -> None:
        subscription = self.get_subscription(account_id, topic_name, name)
        attributes = subscription.attributes
        strategy = given.notify_strategy
        if strategy:
            attributes = dataclasses.replace(attributes, notify_strategy=notify_strategy(strategy))
        attributes = attributes.with_dlq_policy(given.dlq_policy)
        if given.dlq_policy is not None:
            self._check_dead_letter_queue(account_id, attributes)
        changed = dataclasses.replace(subscription, attributes=attributes, last_modify_time=int(self.clock.now()))
        if not self.catalog.update_subscription(changed):
            raise errors.SubscriptionNotExist()

    def _check_dead_letter_queue(self, account_id: str, attributes: SubscriptionAttributes) -> None:
        """An enabled DlqPolicy names an existing queue of the subscription's own account (QueueNotExist)."""
        target = attributes.dead_letter_queue
        if target is not None and self.catalog.get_queue(account_id, target) is None:
            raise errors.QueueNotExist("The DlqPolicy's DeadLetterTargetQueue does not exist.")

    def unsubscribe(self, account_id: str, topic_name: str, name: str) -> None:
        check_topic_name(topic_name)
        check_subscription_name(name)
        self.catalog.delete_subscription(account_id, topic_name, name)

    def list_subscriptions(
        self, account_id: str, topic_name: str, prefix: str, limit: int, marker: str | None
    ) -> tuple[list[Subscription], str | None]:
        self.get_topic(account_id, topic_name)
        start_after = decode_marker(marker) if marker else None
        found, more = self.catalog.list_subscriptions(account_id, topic_name, prefix, limit, start_after)
        return found, next_marker([subscription.name for subscription in found], more)

    def subscriptions_of(self, message: TopicMessage) -> list[Subscription]:
        """Every subscription that should receive a message: same topic incarnation, created before it, tag matching."""
        found = self.catalog.every_subscription(message.account_id, message.topic_name)
        return [s for s in found if s.topic_id == message.topic_id and s.accepts(message)]

    # --- messages -----------------------------------------------------------------------------

    def publish(self, account_id: str, topic_name: str, given: PublishInput) -> TopicMessage:
        topic = self.get_topic(account_id, topic_name)
        body = given.body
        if not body:
            raise errors.InvalidArgument("The MessageBody should not be empty.")
        if len(body.encode("utf-8")) > topic.attributes.maximum_message_size:
            raise errors.InvalidArgument("The length of message should not be larger than MaximumMessageSize.")
        tag = given.tag or ""
        if len(tag) > MAX_TAG_LENGTH:
            raise errors.InvalidArgument("The length of message tag should be between 1 and 16.")
        now_ms = ms(self.clock.now())
        message = TopicMessage(
            account_id=account_id,
            topic_name=topic_name,
            topic_id=topic.topic_id,
            message_id=f"{secrets.token_hex(8).upper()}-1-{now_ms:X}-{secrets.randbelow(10**9):09d}",
            body=body,
            tag=tag,
            publish_time=now_ms,
            direct_mail=direct_mail(given),
            direct_sms=direct_sms(given),
            user_properties=properties(given.user_properties, "PropertyValue"),
            logging_enabled=topic.attributes.logging_enabled,
            metrics_enabled=topic.attributes.metrics_enabled,
            message_group_id=message_group_id(given.message_group_id) if given.message_group_id else "",
        )
        self.messages.put(message)
        if self.metrics.monitors(topic.attributes.metrics_enabled):
            self.metrics.add(MESSAGES_PUBLISHED, topic_labels(account_id, topic_name))
        self.dispatcher.submit(message)
        return message
