"""First attempts handed to an SQS FIFO queue (AWS), so that no subscription waits behind a sibling's endpoint.

The topic message table's stream brings a topic's messages to the fan-out in order, one batch at a time: a
batch that made its first attempts itself would last as long as its slowest endpoint (up to 5 s), and one
hanging endpoint would delay every sibling's later messages. So the fan-out hands each first attempt to an
HTTP, mail or SMS endpoint to this queue (a queue endpoint is a quick write of our own: it stays inline), with

- MessageGroupId = the subscription: SQS hands out a group's messages one batch at a time and the other
  groups' meanwhile, so a hanging endpoint holds back its own subscription's attempts only;
- MessageDeduplicationId = the delivery (message + subscription, as the retry execution is named): a stream
  record fanned out again within SQS's 5-minute window hands nothing over twice.

The SQS message carries the subscription and the topic message as the fan-out read them (a body of at most
64 KB, which ASCII JSON makes at most 192 KB; one that would still exceed SQS's 256 KiB is attempted inline):
the attempt reads nothing again and is the very attempt the fan-out would have made, `FirstAttempt.attempt`,
made by the first-attempt function (`QueuedFirstAttempt`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from mnsd.model.cloud_targets import EVENTBRIDGE, LAMBDA
from mnsd.model.messages import Property
from mnsd.model.topics import HTTP, MAIL, SMS, Subscription, SubscriptionAttributes, TopicMessage
from mnsd.push.first_attempt import FirstAttempt
from mnsd.push.workflow import execution_name

# Endpoints outside the service: an attempt may take its 5 s.
QUEUED_KINDS = frozenset({HTTP, MAIL, SMS, LAMBDA, EVENTBRIDGE})
MAX_BATCH_ENTRIES = 10  # SendMessageBatch: at most 10 entries...
MAX_REQUEST_BYTES = 262_144  # ...and 256 KiB of bodies in all (a single message's limit too)


def encode(subscription: Subscription, message: TopicMessage) -> str:
    """The SQS message body of a first attempt: ASCII JSON (SQS refuses some characters a body may hold)."""
    return json.dumps({"subscription": asdict(subscription), "message": asdict(message)}, separators=(",", ":"))


def decode(body: str) -> tuple[Subscription, TopicMessage]:
    data = json.loads(body)
    subscription, message = data["subscription"], data["message"]
    return (
        Subscription(**{**subscription, "attributes": SubscriptionAttributes(**subscription["attributes"])}),
        TopicMessage(**{**message, "user_properties": tuple(Property(**p) for p in message["user_properties"])}),
    )


def group_id(subscription: Subscription) -> str:
    """The subscription's message group (names may be 256 characters long; a group id at most 128)."""
    name = f"{subscription.account_id}/{subscription.topic_name}/{subscription.name}"
    return hashlib.sha256(name.encode("utf-8")).hexdigest()


class AttemptQueueRefused(Exception):
    """SQS refused some of a message's first attempts: the fan-out of that message fails and is tried again."""


class AttemptQueue:
    """The first-attempt queue over a boto3 SQS client: which attempts it takes, sending and deleting them."""

    def __init__(self, client: Any, queue_url: str, region: str) -> None:
        self.client = client
        self.queue_url = queue_url
        self.region = region

    def takes(self, subscription: Subscription) -> bool:
        return subscription.endpoint(self.region).kind in QUEUED_KINDS

    def send(self, message: TopicMessage, subscriptions: list[Subscription]) -> list[Subscription]:
        """Hands over each subscription's first attempt at `message`, batched; returns the subscriptions whose
        attempt is too large for SQS, for the caller to make. Raises `AttemptQueueRefused` if SQS refuses any."""
        entries: list[dict[str, str]] = []
        too_large: list[Subscription] = []
        for subscription in subscriptions:
            body = encode(subscription, message)
            if len(body) > MAX_REQUEST_BYTES:  # ASCII: characters are bytes
                too_large.append(subscription)
                continue
            entries.append(
                {
                    "Id": str(len(entries)),
                    "MessageBody": body,
                    "MessageGroupId": group_id(subscription),
                    "MessageDeduplicationId": execution_name(subscription, message),
                }
            )
        for batch in _batches(entries):
            failed = self.client.send_message_batch(QueueUrl=self.queue_url, Entries=batch).get("Failed")
            if failed:
                raise AttemptQueueRefused(f"{message.message_id}: {failed}")
        return too_large

    def delete(self, receipt_handle: str) -> None:
        self.client.delete_message(QueueUrl=self.queue_url, ReceiptHandle=receipt_handle)


def _batches(entries: list[dict[str, str]]) -> list[list[dict[str, str]]]:
    """`entries` in order, as few SendMessageBatch requests as their count and sizes allow."""
    batches: list[list[dict[str, str]]] = []
    size = 0
    for entry in entries:
        length = len(entry["MessageBody"])
        if not batches or len(batches[-1]) == MAX_BATCH_ENTRIES or size + length > MAX_REQUEST_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(entry)
        size += length
    return batches


class QueuedFirstAttempt:
    """The first-attempt function's job: one message of the queue, the attempt the fan-out handed over."""

    def __init__(self, first_attempt: FirstAttempt, queue: AttemptQueue) -> None:
        self.first_attempt = first_attempt
        self.queue = queue

    def handle(self, body: str, receipt_handle: str, release: bool) -> None:
        """Makes the attempt (a failure starts the retry workflow; raises only if that cannot start, and SQS
        brings the message back). With `release` the message is deleted at once, which frees its subscription's
        group for the next: Lambda deletes a batch's messages only once all are done, and a batch may hold
        several subscriptions' messages, one of them perhaps waiting 5 s on a hanging endpoint."""
        subscription, message = decode(body)
        self.first_attempt.attempt(subscription, message)
        if release:
            self.queue.delete(receipt_handle)
