"""The MNS error model: every error the service answers with, carrying its wire code and HTTP status.

Operations raise these; the request pipeline (`mnsd.pipeline.steps`) renders them once, in the plane's error shape.
"""

from __future__ import annotations

from dataclasses import dataclass


class MnsError(Exception):
    code = "InternalError"
    status = 500
    default_message = "Internal error."

    def __init__(self, message: str | None = None) -> None:
        self.message = message or self.default_message
        super().__init__(self.message)


class OpenApiError(MnsError):
    """A refusal only the Mns-open OpenAPI answers (`mnsd.rpc`), with the code Alibaba Cloud's API gateway answers
    (`InvalidAccessKeyId.NotFound`, `SignatureNonceUsed`, ...), in its JSON; never an answer of the XML API."""


def openapi_error(code: str, status: int, message: str) -> type[OpenApiError]:
    return type(code.replace(".", ""), (OpenApiError,), {"code": code, "status": status, "default_message": message})


def _error(name: str, status: int, message: str) -> type[MnsError]:
    return type(name, (MnsError,), {"code": name, "status": status, "default_message": message})


# Authentication and request shape.
AccessDenied = _error(
    "AccessDenied", 403, "The OwnerId that your Access Key Id associated to is forbidden for this operation."
)
InvalidAccessKeyId = _error("InvalidAccessKeyId", 403, "The access Id you provided does not exist.")
SignatureDoesNotMatch = _error(
    "SignatureDoesNotMatch",
    403,
    "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
)
InvalidAuthorizationHeader = _error("InvalidAuthorizationHeader", 400, "The Authorization header format is invalid.")
MissingAuthorizationHeader = _error("MissingAuthorizationHeader", 400, "Authorization header is required.")
InvalidDateHeader = _error("InvalidDateHeader", 400, "The Date header format is invalid.")
MissingDateHeader = _error("MissingDateHeader", 400, "Date header is required.")
TimeExpired = _error("TimeExpired", 408, "The http request you sent is expired.")
InvalidDigest = _error("InvalidDigest", 400, "The Content-MD5 you specified is invalid.")
InvalidRequestURL = _error("InvalidRequestURL", 400, "Http request URL format invalid.")
InvalidQueryString = _error("InvalidQueryString", 400, "Http request URL contains invalid querystring item.")
MalformedXML = _error("MalformedXML", 400, "The XML you provided was not well-formed.")
InvalidArgument = _error("InvalidArgument", 400, "The XML you provided did not validate against our published schema.")
InternalError = _error("InternalError", 500, "Internal error.")


# A dependency busy or unreachable past the request's time budget, or the local server at its limits: the request
# did nothing it did not finish, or what it did is safe to do again. The SDKs retry a 503 (the Java SDK on its own).
class ServiceUnavailable(MnsError):
    code = "ServiceUnavailable"
    status = 503
    default_message = "The service is busy, please try again later."


# Temporary credentials (a `security-token` header): the codes and messages Alibaba Cloud OSS answers with.
InvalidSecurityToken = _error("InvalidSecurityToken", 403, "The security token you provided is invalid.")
SecurityTokenExpired = _error("SecurityTokenExpired", 403, "The security token you provided has expired.")
AccessKeyIdAndSecurityTokenNotMatch = _error(
    "AccessKeyIdAndSecurityTokenNotMatch", 403, "The access key id and security token you provided does not match."
)

# Limits (`mnsd.control.limits`).
QpsLimitExceeded = _error("QpsLimitExceeded", 400, "The qps limit of the queue is exceeded.")

# Queues and messages.
QueueAlreadyExist = _error("QueueAlreadyExist", 409, "The queue you want to create is already exist.")
QueueNotExist = _error("QueueNotExist", 404, "The queue name you provided is not exist.")
InvalidQueueName = _error(
    "InvalidQueueName",
    400,
    "The queue name you provided is invalid. QueueName should start with alpha and contain only alpha, digit or - .",
)
QueueNameLengthError = _error("QueueNameLengthError", 400, "Queue name length should between 1 and 256.")
QueueNumExceededLimit = _error(
    "QueueNumExceededLimit", 400, "The number of the queues you created has exceeded the limit."
)
MessageNotExist = _error("MessageNotExist", 404, "Message not exist.")
ReceiptHandleError = _error("ReceiptHandleError", 400, "The receipt handle you provide is not valid.")
MissingReceiptHandle = _error("MissingReceiptHandle", 400, "ReceiptHandle is required.")
MissingVisibilityTimeout = _error("MissingVisibilityTimeout", 400, "VisibilityTimeout is required.")

# A message's history (`GET /queues/{q}/messages/{id}/history`, `mnsd.log.history`).
LoggingNotEnabled = _error(
    "LoggingNotEnabled",
    409,
    "The queue or topic does not log its messages' events (LoggingEnabled is False): no history is recorded.",
)
MessageHistoryExpired = _error(
    "MessageHistoryExpired", 404, "The message's events are older than the operation log keeps: its history aged out."
)
MessageHistoryNotExist = _error(
    "MessageHistoryNotExist", 404, "The operation log holds no event of this message in its window."
)

# A queue's receivers (each receives every message sent to its queue: `mnsd.queues.receivers`).
ReceiverNotExist = _error("ReceiverNotExist", 404, "The receiver you provided does not exist.")
ReceiverAlreadyExist = _error("ReceiverAlreadyExist", 409, "The receiver you want to create already exists.")
InvalidReceiverName = _error(
    "InvalidReceiverName",
    400,
    "The receiver name you provided is invalid. ReceiverName should be 1 to 64 characters, start with alpha or digit "
    "and contain only alpha, digit or -.",
)
ReceiverNumExceededLimit = _error(
    "ReceiverNumExceededLimit", 400, "The number of the receivers of the queue has exceeded the limit."
)

# Topics, subscriptions and publishing.
TopicAlreadyExist = _error("TopicAlreadyExist", 409, "The topic you want to create is already exists.")
TopicNotExist = _error("TopicNotExist", 404, "The topic you provided does not exist.")
TopicNameLengthError = _error(
    "TopicNameLengthError", 400, "Topic name length is out of range, should be between 1 and 256."
)
TopicNameInvalid = _error(
    "TopicNameInvalid",
    400,
    "The topic name you provided is invalid. TopicName should start with alpha or digit, and contain only alpha, "
    "digit or -.",
)
TopicNumExceededLimit = _error(
    "TopicNumExceededLimit", 400, "The number of the topics you created has exceeded the limit."
)
SubscriptionAlreadyExist = _error(
    "SubscriptionAlreadyExist", 409, "The subscription you want to create already exists."
)
SubscriptionNotExist = _error("SubscriptionNotExist", 404, "The subscription you provided does not exist.")
SubscriptionNameLengthError = _error(
    "SubscriptionNameLengthError", 400, "Subscription name length is out of range, should be between 1 and 256."
)
SubscriptionNameInvalid = _error(
    "SubscriptionNameInvalid",
    400,
    "The subscription you provided is invalid. SubscriptionName should start with alpha or digit, and contain only "
    "alpha, digit or -.",
)
EndpointInvalid = _error("EndpointInvalid", 400, "The endpoint you provided is invalid.")


def out_of_range(element: str, low: int, high: int, unit: str = "") -> MnsError:
    suffix = f" {unit}" if unit else ""
    return InvalidArgument(f"The value of {element} should between {low} and {high}{suffix}.")


@dataclass(frozen=True)
class Refusals:
    """The errors of one kind of resource that the control-plane path answers (`mnsd.control.registry`)."""

    not_exist: type[MnsError]
    already_exist: type[MnsError]
    too_many: type[MnsError]


QUEUE_REFUSALS = Refusals(QueueNotExist, QueueAlreadyExist, QueueNumExceededLimit)
TOPIC_REFUSALS = Refusals(TopicNotExist, TopicAlreadyExist, TopicNumExceededLimit)
