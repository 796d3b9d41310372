"""One delivery attempt of a topic message to one subscription's endpoint.

Queue endpoints are written through the queue service's own send path; HTTP endpoints get a signed
POST (2xx within 5 s = delivered); mail goes to Amazon SES and SMS to Amazon SNS, using the
message's DirectMail / DirectSMS attributes; Lambda functions are invoked and EventBridge buses given an event
(`mnsd.push.cloud_delivery`). An attempt never raises: it returns an `Outcome`, and
`permanent` marks failures that no retry can mend (a mail message without DirectMail, say).
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import http.client
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from aws_lambda_powertools import Logger

from mnsd.ground import errors, jsontext
from mnsd.ground.settings import Settings
from mnsd.model.cloud_targets import EVENTBRIDGE, LAMBDA
from mnsd.model.egress import AddressRefused, allowed_networks
from mnsd.model.inputs import MessageInput
from mnsd.model.kinds import kind_of
from mnsd.model.queues import Queue
from mnsd.model.topics import HTTP, MAIL, QUEUE, SIMPLIFIED, SMS, QueueGrants, Subscription, TopicMessage
from mnsd.push import cloud_delivery
from mnsd.push import http_request as push_http
from mnsd.push.outcome import Outcome as Outcome  # (its home; imported from here too)
from mnsd.push.signing import sign, string_to_sign
from mnsd.queues import addresses
from mnsd.queues.addresses import QueueAddresses
from mnsd.queues.messages import MessageService, SendResult
from mnsd.wire.notifications import CONTENT_TYPES, notification_body

HTTP_TIMEOUT_SECONDS = 5  # for the whole attempt: resolution, connect, send, status, headers and body
DEFAULT_PATH = "/notifications"
MNS_VERSION = "2015-06-06"
USER_AGENT = "Aliyun Notification Service Agent"
# `Settings.push_header_names`: the signed standard headers once, as the live service names them (the default), or
# also in lower case.
LIVE_NAMES = "live"
WITH_LOWER_CASE_COPIES = "with-lower-case-copies"

logger = Logger(service="mns")


# SES and SNS refusals that no retry mends (sandbox, unverified sender, missing permission, bad number or
# address): the delivery is dropped at once instead of being retried for up to a day.
PERMANENT_AWS_ERRORS = frozenset(
    {
        "MessageRejected",  # SES: sandbox recipient or unverified sender
        "MailFromDomainNotVerifiedException",
        "ConfigurationSetDoesNotExistException",
        "AccessDenied",
        "AccessDeniedException",
        "AuthorizationError",  # SNS: no permission (or SMS not enabled for the account)
        "InvalidParameter",  # SNS: not a phone number, message too long
        "InvalidParameterValue",
        "OptedOutException",
    }
)


def content_md5(body: bytes) -> str:
    return base64.b64encode(hashlib.md5(body).hexdigest().encode("ascii")).decode("ascii")


def http_push(
    subscription: Subscription, message: TopicMessage, settings: Settings
) -> tuple[str, dict[str, str], bytes]:
    """(url, headers, body) of the signed POST an HTTP endpoint receives.

    Header names leave as given (`Host` is added by the sender), as the live service names them: `Content-md5`,
    `Content-Type`, `Date` and the `x-mns-*` in lower case, which the Java SDK's sample endpoint
    (`HttpEndpointSubscription`), the spec's Java verifier and the PHP SDK's sample look up case-sensitively;
    receivers that ignore case find them too. `settings.push_header_names` = `with-lower-case-copies` adds the
    three signed ones again in lower case, for the Python SDK's sample endpoint (`sample/topic/server.py`, which
    looks them up in lower case, case-sensitively, on Python 3) -- a receiver behind a stack that joins a repeated
    header's values (Node's http, WSGI servers, API Gateway) then reads `v, v` and fails: not the default.
    """
    url = subscription.attributes.endpoint
    parts = urlsplit(url)
    path = parts.path if parts.path not in ("", "/") else DEFAULT_PATH
    resource = f"{path}?{parts.query}" if parts.query else path
    body = notification_body(subscription, message).encode("utf-8")
    content_format = subscription.attributes.notify_content_format
    mns_headers = {
        "x-mns-request-id": secrets.token_hex(12).upper(),
        "x-mns-signing-cert-url": base64.b64encode(settings.signing_cert_url.encode("utf-8")).decode("ascii"),
        "x-mns-version": MNS_VERSION,
    }
    if content_format == SIMPLIFIED:
        mns_headers["x-mns-message-id"] = message.message_id
        if message.tag:
            mns_headers["x-mns-message-tag"] = message.tag
    signed = {
        "Date": email.utils.formatdate(usegmt=True),
        "Content-Type": CONTENT_TYPES[content_format],
        "Content-md5": content_md5(body),
    }
    authorization = sign(settings.signing_key, string_to_sign("POST", {**signed, **mns_headers}, resource))
    headers = {"Content-Length": str(len(body)), **signed, "Authorization": authorization, "User-Agent": USER_AGENT}
    if settings.push_header_names == WITH_LOWER_CASE_COPIES:
        headers |= {name.lower(): value for name, value in signed.items()}
    headers |= dict(sorted(mns_headers.items()))
    return f"{parts.scheme}://{parts.netloc}{resource}", headers, body


def sms_text(text: str, params: dict[str, Any], sign_name: str) -> str:
    """The SMS body: the message body with `${name}` placeholders filled, after the signature in brackets."""
    for name, value in params.items():
        text = text.replace("${" + str(name) + "}", str(value))
    return f"【{sign_name}】{text}" if sign_name else text


@dataclass(frozen=True)
class QueueEndpoints:
    """A queue endpoint's side of a push: the queue its name names (a queue's own: a receiver gets the queue's
    messages) and the send to it."""

    addresses: QueueAddresses
    messages: MessageService

    def queue(self, account_id: str, name: str) -> Queue:
        return self.addresses.queue(account_id, name, addresses.SEND)

    def send(self, queue: Queue, message: MessageInput) -> SendResult:
        (result,) = self.messages.send(queue, [message])
        return result


class Deliverer:
    def __init__(
        self,
        settings: Settings,
        queues: QueueEndpoints | None,
        clients: Callable[[str], Any],
        attempt_seconds: float | None = None,
        grants: QueueGrants | None = None,
    ) -> None:
        self.settings = settings
        self.queues = queues
        self.grants = grants
        self.clients = clients  # boto3 client factory: SES and SNS are made on first use
        self.attempt_seconds = HTTP_TIMEOUT_SECONDS if attempt_seconds is None else attempt_seconds
        self.allowed_networks = allowed_networks(settings.push_allowed_networks)

    def deliver(self, subscription: Subscription, message: TopicMessage) -> Outcome:
        try:
            kind = subscription.endpoint(self.settings.region).kind
            if kind == QUEUE:
                return self._to_queue(subscription, message)
            if kind == HTTP:
                return self._to_http(subscription, message)
            if kind == MAIL:
                return self._to_mail(subscription, message)
            if kind == SMS:
                return self._to_sms(subscription, message)
            if kind in (LAMBDA, EVENTBRIDGE):
                return self._to_cloud(kind, subscription, message)
            return Outcome(False, detail=f"unknown endpoint kind {kind}", permanent=True)
        except errors.MnsError as error:
            return Outcome(False, detail=f"{error.code}: {error.message}")
        except Exception as error:  # an endpoint's failure must not stop the others
            logger.exception("delivery failed", extra={"subscription": subscription.name})
            return Outcome(False, detail=f"{type(error).__name__}: {error}")

    def _to_queue(self, subscription: Subscription, message: TopicMessage) -> Outcome:
        endpoint = subscription.endpoint(self.settings.region)
        owner = endpoint.account_id
        if owner != subscription.account_id and (
            self.grants is None or not self.grants.may_send(subscription.account_id, owner, endpoint.target)
        ):  # the queue's policy no longer lets the topic's account send: no retry mends that
            return Outcome(
                False, detail="AccessDenied: the queue's policy does not grant the topic's account", permanent=True
            )
        body = notification_body(subscription, message)
        queues = self._queue_endpoints()
        queue = queues.queue(owner, endpoint.target)
        # (a FIFO queue takes a message published without a group in the subscription's own, so it keeps the order
        # its deliveries arrive in)
        group = kind_of(queue).group(message.message_group_id, subscription.name)
        result = queues.send(queue, MessageInput(body, None, 8, message_group_id=group))
        if result.error is not None:
            return Outcome(False, detail=f"{result.error.code}: {result.error.message}")
        return Outcome(True)

    def _queue_endpoints(self) -> QueueEndpoints:
        if self.queues is None:  # (a deliverer made for the other kinds of endpoint)
            raise errors.InternalError("This deliverer has no queues to deliver to.")
        return self.queues

    def _to_http(self, subscription: Subscription, message: TopicMessage) -> Outcome:
        url, headers, body = http_push(subscription, message, self.settings)
        try:
            status = push_http.post(url, headers, body, seconds=self.attempt_seconds, allowed=self.allowed_networks)
        except AddressRefused as error:  # no retry makes an internal address reachable
            return Outcome(False, detail=str(error), permanent=True)
        except ValueError as error:  # a port or a name that cannot be sent: no retry mends it either
            return Outcome(False, detail=f"{type(error).__name__}: {error}", permanent=True)
        except (OSError, http.client.HTTPException) as error:  # DeadlineExceeded is an OSError
            return Outcome(False, detail=f"{type(error).__name__}: {error}")
        return Outcome(200 <= status < 300, status=status)  # a 3xx is an answer, not a delivery

    def _to_cloud(self, kind: str, subscription: Subscription, message: TopicMessage) -> Outcome:
        """A function or bus the deployment may still push to (its allow-list is read at every attempt)."""
        if refused := cloud_delivery.not_allowed(subscription, self.settings):
            return refused
        if kind == LAMBDA:
            return cloud_delivery.to_function(self.clients("lambda"), subscription, message)
        return cloud_delivery.to_bus(self.clients("events"), subscription, message)

    def _to_mail(self, subscription: Subscription, message: TopicMessage) -> Outcome:
        mail = message.direct_mail
        if not mail or not mail.get("AccountName") or "Subject" not in mail:
            return Outcome(
                False,
                detail="the message has no DirectMail (or DM) attribute naming a sender and a subject",
                permanent=True,
            )
        address = subscription.endpoint(self.settings.region).target
        content = {"Data": message.body, "Charset": "UTF-8"}
        request: dict[str, Any] = {
            "Source": mail["AccountName"],
            "Destination": {"ToAddresses": [address]},
            "Message": {
                "Subject": {"Data": str(mail["Subject"]), "Charset": "UTF-8"},
                "Body": {"Html" if str(mail.get("IsHtml", 0)) == "1" else "Text": content},
            },
        }
        if str(mail.get("ReplyToAddress", 0)) == "1":
            request["ReplyToAddresses"] = [mail["AccountName"]]
        try:
            self.clients("ses").send_email(**request)
        except Exception as error:
            return _aws_refusal(error)
        return Outcome(True)

    def _to_sms(self, subscription: Subscription, message: TopicMessage) -> Outcome:
        sms = message.direct_sms
        if not sms:
            return Outcome(False, detail="the message has no DirectSMS (or DYSMS) attribute", permanent=True)
        phone = subscription.endpoint(self.settings.region).target
        params = sms.get("SmsParams") or {}
        if isinstance(params, str):
            try:
                params = jsontext.loads(params or "{}")
            except ValueError:
                return Outcome(False, detail="the SmsParams of DirectSMS are not JSON", permanent=True)
        multi = sms.get("Type") == "multiContent"
        if phone != "anonymous":
            if multi:
                return Outcome(False, detail="multiContent SMS goes to sms:directsms:anonymous only", permanent=True)
            texts = {phone: params}
        elif multi:
            texts = {number: values for number, values in params.items()}
        else:
            receivers = [r.strip() for r in str(sms.get("Receiver") or "").split(",") if r.strip()]
            if not receivers:
                return Outcome(False, detail="DirectSMS names no Receiver", permanent=True)
            texts = {number: params for number in receivers}
        for number, values in texts.items():
            text = sms_text(message.body, values, str(sms.get("FreeSignName") or ""))
            try:
                self.clients("sns").publish(PhoneNumber=number, Message=text)
            except Exception as error:
                return _aws_refusal(error)
        return Outcome(True)


def _aws_refusal(error: Exception) -> Outcome:
    """The outcome of an SES or SNS call that raised: permanent for the refusals no retry mends."""
    code = str(getattr(error, "response", {}).get("Error", {}).get("Code", ""))
    if not code:
        raise error  # not an AWS answer (a bug, a network failure): the caller's handler logs and retries it
    return Outcome(False, detail=f"{code}: {error}", permanent=code in PERMANENT_AWS_ERRORS)
