"""The admin's client of the MNS API: the calls it makes with a key (resource policies, monitoring, receivers,
security tokens).

Requests are signed as the SDKs sign them (`mnsd.access.authentication.string_to_sign` and `sign`: HMAC-SHA1 over the MNS
string to sign) and sent with urllib; a refusal raises `ApiError` with the MNS code and message.
"""

from __future__ import annotations

import base64
import hashlib
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.utils import formatdate
from urllib.parse import quote

from migrate.errors import ServiceError
from mnsd.access.authentication import sign, string_to_sign
from mnsd.ground.errors import MalformedXML
from mnsd.ground.http import HttpRequest
from mnsd.model.policy import Policy
from mnsd.wire import codec

MNS_VERSION = "2015-06-06"
XML_TYPE = "text/xml;charset=UTF-8"
TIMEOUT_SECONDS = 30.0


# An MNS error answer (`<Error>`), or a failure to reach the endpoint at all (status 0): the error of every client of
# the API here (this one and `python -m migrate`'s).
ApiError = ServiceError


@dataclass(frozen=True)
class Credentials:
    """Temporary credentials (IssueSecurityToken): the key, its secret and the token the SDK sends beside them."""

    access_key_id: str
    access_key_secret: str
    security_token: str
    expiration: str


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    xml: codec.Element | None


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


def _error(status: int, body: bytes, request_id: str) -> ApiError:
    try:
        root = codec.parse(body)
    except MalformedXML:
        root = None
    if root is None or root.tag != "Error":
        return ApiError(status, f"HTTP{status}", body[:200].decode("utf-8", "replace"), request_id)
    return ApiError(status, root.value("Code") or "", root.value("Message") or "", root.value("RequestId") or "")


def _resource(kind: str, name: str) -> str:
    return f"/{kind}/{quote(name, safe='')}"


class MnsClient:
    def __init__(self, endpoint: str, key_id: str, secret: str, timeout: float = TIMEOUT_SECONDS) -> None:
        self.endpoint = endpoint.rstrip("/")
        self.key_id = key_id
        self.secret = secret
        self.timeout = timeout

    def call(self, method: str, resource: str, body: codec.Node | None = None) -> codec.Element | None:
        """One signed request; the answer's XML (None when it has no body)."""
        return self.exchange(method, resource, body).xml

    def exchange(self, method: str, resource: str, body: codec.Node | None = None) -> Answer:
        """One signed request; its status, headers and XML (None when it has no body)."""
        data = codec.encode(body) if body is not None else b""
        date = formatdate(usegmt=True)
        headers = {"x-mns-version": MNS_VERSION, "date": date}
        if data:
            md5 = hashlib.md5(data).hexdigest().encode("ascii")  # base64 of the hex digest, as the SDKs send
            headers.update({"content-type": XML_TYPE, "content-md5": base64.b64encode(md5).decode("ascii")})
        path, _, query = resource.partition("?")
        signed = HttpRequest(method, path, query, headers, data)
        headers["authorization"] = f"MNS {self.key_id}:{sign(self.secret, string_to_sign(signed, date))}"
        request = urllib.request.Request(self.endpoint + resource, data=data or None, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, answer = response.status, response.read()
                answer_headers = {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as error:
            raise _error(error.code, error.read(), error.headers.get("x-mns-request-id", "")) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ApiError(0, "NetworkError", f"cannot reach {self.endpoint}: {reason}") from None
        if not answer.strip():
            return Answer(status, answer_headers, None)
        try:
            return Answer(status, answer_headers, codec.parse(answer))
        except MalformedXML:
            raise ApiError(200, "InvalidResponse", answer[:200].decode("utf-8", "replace")) from None

    # ---- resource policies (the Policy attribute of a queue or topic)
    def set_policy(self, kind: str, name: str, policy: Policy | None) -> None:
        """SetQueueAttributes / SetTopicAttributes with only `Policy` ("" removes it)."""
        root = "Queue" if kind == "queues" else "Topic"
        document = policy.document if policy is not None else ""
        self.call("PUT", _resource(kind, name) + "?metaoverride=true", codec.Node(root, [("Policy", document)]))

    def policy(self, kind: str, name: str) -> str:
        """The queue's or topic's Policy as GetQueueAttributes / GetTopicAttributes answers ("" for none)."""
        answer = self.call("GET", _resource(kind, name))
        return (answer.value("Policy") if answer is not None else None) or ""

    # ---- monitoring on AWS: MetricsEnabled (queues, topics) and a queue's Alarms
    def set_attributes(self, kind: str, name: str, fields: list[tuple[str, codec.Value]]) -> None:
        """SetQueueAttributes / SetTopicAttributes with only `fields`."""
        root = "Queue" if kind == "queues" else "Topic"
        self.call("PUT", _resource(kind, name) + "?metaoverride=true", codec.Node(root, fields))

    def attributes(self, kind: str, name: str) -> dict[str, str]:
        """GetQueueAttributes / GetTopicAttributes: each element's text, by element name."""
        answer = self.call("GET", _resource(kind, name))
        return {child.tag: child.text for child in answer.children} if answer is not None else {}

    # ---- a queue's receivers (each gets every message sent to the queue; reached as the queue `{queue}.{name}`)
    def create_receiver(self, queue: str, name: str, settings: ReceiverSettings) -> tuple[bool, bool]:
        """CreateReceiver: (created, still copying the queue's earlier messages: call again to go on)."""
        resource = f"{_resource('queues', queue)}/receivers/{quote(name, safe='')}"
        answer = self.exchange("PUT", resource, settings.node())
        return answer.status == 201, answer.headers.get("x-mns-copy-pending") == "true"

    def receivers(self, queue: str) -> list[dict[str, str]]:
        """ListReceiver: each receiver's elements (name, address, times, attributes, counts), by element name."""
        answer = self.call("GET", f"{_resource('queues', queue)}/receivers")
        entries = answer.all("Receiver") if answer is not None else []
        return [{child.tag: child.text for child in entry.children} for entry in entries]

    def delete_receiver(self, queue: str, name: str) -> None:
        self.call("DELETE", f"{_resource('queues', queue)}/receivers/{quote(name, safe='')}")

    # ---- temporary credentials
    def issue_token(self, duration_seconds: int | None, policy: Policy | None) -> Credentials:
        """`POST /?securitytoken=true`: credentials of the calling key's account, narrowed by `policy`."""
        fields: list[tuple[str, codec.Value]] = [
            ("DurationSeconds", duration_seconds),
            ("Policy", policy.document if policy is not None else None),
        ]
        answer = self.call("POST", "/?securitytoken=true", codec.Node("SecurityToken", fields))
        if answer is None or answer.tag != "Credentials":
            raise ApiError(200, "InvalidResponse", "the answer holds no <Credentials>")
        return Credentials(
            answer.value("AccessKeyId") or "",
            answer.value("AccessKeySecret") or "",
            answer.value("SecurityToken") or "",
            answer.value("Expiration") or "",
        )
