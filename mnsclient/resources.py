"""The resource calls of the XML API the tools make with a key: attributes and resource policies of queues and
topics, a subscription's endpoint, a queue's receivers, security tokens."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from mnsclient.errors import ServiceError
from mnsclient.xml import XmlClient, parsed
from mnsd.model.policy import Policy
from mnsd.wire import codec


@dataclass(frozen=True)
class Credentials:
    """Temporary credentials (IssueSecurityToken): the key, its secret and the token the SDK sends beside them."""

    access_key_id: str
    access_key_secret: str
    security_token: str
    expiration: str


@dataclass(frozen=True)
class ReceiverSettings:
    """What CreateReceiver may give a receiver (None: not given, the service's default)."""

    start_time: int | None = None  # Unix seconds
    visibility_timeout: int | None = None
    polling_wait_seconds: int | None = None
    dlq_target: str | None = None
    max_receive_count: int | None = None

    def node(self) -> codec.Node:
        fields: list[tuple[str, codec.Value]] = [
            ("StartTime", self.start_time),
            ("VisibilityTimeout", self.visibility_timeout),
            ("PollingWaitSeconds", self.polling_wait_seconds),
        ]
        if self.dlq_target is not None:
            policy: list[tuple[str, codec.Value]] = [
                ("Enabled", True),
                ("DeadLetterTargetQueue", self.dlq_target),
                ("MaxReceiveCount", self.max_receive_count),
            ]
            fields.append(("DlqPolicy", codec.Node("DlqPolicy", policy)))
        return codec.Node("Receiver", fields)


def _resource(kind: str, name: str) -> str:
    return f"/{kind}/{quote(name, safe='')}"


def _receiver(queue: str, name: str) -> str:
    return f"{_resource('queues', queue)}/receivers/{quote(name, safe='')}"


class ResourceClient(XmlClient):
    # ---- attributes and resource policies (the Policy attribute of a queue or topic)
    def set_attributes(self, kind: str, name: str, fields: list[tuple[str, codec.Value]]) -> None:
        """SetQueueAttributes / SetTopicAttributes with only `fields` (`kind`: `queues` or `topics`)."""
        root = "Queue" if kind == "queues" else "Topic"
        self.call("PUT", _resource(kind, name) + "?metaoverride=true", codec.Node(root, fields))

    def attributes(self, kind: str, name: str) -> dict[str, str]:
        """GetQueueAttributes / GetTopicAttributes: each element's text, by element name."""
        answer = self.call("GET", _resource(kind, name))
        return {child.tag: child.text for child in answer.children} if answer is not None else {}

    def set_policy(self, kind: str, name: str, policy: Policy | None) -> None:
        """The queue's or topic's Policy alone ("" removes it)."""
        self.set_attributes(kind, name, [("Policy", policy.document if policy is not None else "")])

    def policy(self, kind: str, name: str) -> str:
        """The queue's or topic's Policy as GetQueueAttributes / GetTopicAttributes answers ("" for none)."""
        return self.attributes(kind, name).get("Policy", "")

    def subscription_endpoint(self, topic: str, subscription: str) -> str:
        """GetSubscriptionAttributes' Endpoint: always in full on this plane (`acs:mns:...:queues/{name}`,
        `mail:directmail:...`), where Mns-open answers it as it was given (a bare queue name, address or number)."""
        root = self.call("GET", f"{_resource('topics', topic)}/subscriptions/{quote(subscription, safe='')}")
        return (root.value("Endpoint") if root is not None else None) or ""

    # ---- a queue's receivers (each gets every message sent to the queue; reached as the queue `{queue}.{name}`)
    def create_receiver(self, queue: str, name: str, settings: ReceiverSettings) -> tuple[bool, bool]:
        """CreateReceiver: (created, still copying the queue's earlier messages: call again to go on)."""
        reply = self.exchange("PUT", _receiver(queue, name), codec.encode(settings.node()))
        parsed(reply)
        return reply.status == 201, reply.headers.get("x-mns-copy-pending") == "true"

    def receivers(self, queue: str) -> list[dict[str, str]]:
        """ListReceiver: each receiver's elements (name, address, times, attributes, counts), by element name."""
        answer = self.call("GET", f"{_resource('queues', queue)}/receivers")
        entries = answer.all("Receiver") if answer is not None else []
        return [{child.tag: child.text for child in entry.children} for entry in entries]

    def delete_receiver(self, queue: str, name: str) -> None:
        self.call("DELETE", _receiver(queue, name))

    # ---- temporary credentials
    def issue_token(self, duration_seconds: int | None, policy: Policy | None) -> Credentials:
        """`POST /?securitytoken=true`: credentials of the calling key's account, narrowed by `policy`."""
        fields: list[tuple[str, codec.Value]] = [
            ("DurationSeconds", duration_seconds),
            ("Policy", policy.document if policy is not None else None),
        ]
        answer = self.call("POST", "/?securitytoken=true", codec.Node("SecurityToken", fields))
        if answer is None or answer.tag != "Credentials":
            raise ServiceError(200, "InvalidResponse", "the answer holds no <Credentials>")
        return Credentials(
            answer.value("AccessKeyId") or "",
            answer.value("AccessKeySecret") or "",
            answer.value("SecurityToken") or "",
            answer.value("Expiration") or "",
        )
