"""One attempt to a Lambda function (Invoke, RequestResponse) or an EventBridge bus (PutEvents), and what their
refusals mean for the push.

An HTTP endpoint's push is retried on every answer but a 2xx, and given up at once only when it cannot be sent
at all (an internal address, a name that cannot be sent). The same rules here:

- delivered: the function returned (status 2xx, no `FunctionError`); the bus accepted the entry;
- retried, as an HTTP 4xx or 5xx is, with the status recorded: the function raised or timed out (`FunctionError`:
  502, as a function URL answers), no such function or bus (404), not allowed by the function's or bus's own policy
  (403: another account may grant it later), throttled (429), the service failing (5xx), and no answer within the
  attempt's 5 s;
- given up at once (dead-lettered or dropped), as an HTTP push that cannot be sent: the request itself is refused
  (`PERMANENT_REFUSALS`: no retry sends another), or the deployment's allow-list no longer names the target (the
  stack was redeployed without it).
"""

from __future__ import annotations

from typing import Any

from mnsd.ground.settings import Settings
from mnsd.model.cloud_targets import allow_list, cloud_target, refusal
from mnsd.model.topics import Subscription, TopicMessage
from mnsd.push.outcome import Outcome
from mnsd.wire.notifications import EVENT_DETAIL_TYPE, EVENT_SOURCE, event_detail, function_payload

# Refusals of the request itself (its payload, its parameters): the same request is refused again on every retry.
PERMANENT_REFUSALS = frozenset(
    {
        "InvalidRequestContentException",  # Lambda: the payload is not JSON
        "RequestTooLargeException",
        "UnsupportedMediaTypeException",
        "InvalidParameterValueException",
        "MalformedDetail",  # EventBridge (an entry's ErrorCode): the detail is not a JSON object
        "InvalidArgument",
        "ValidationException",
    }
)
FUNCTION_ERROR_STATUS = 502  # the function raised or timed out (a function URL answers 502 too)
# The HTTP status an EventBridge entry's ErrorCode stands for (entries carry no status); any other is a 400.
ENTRY_STATUS = {"ThrottlingException": 429, "InternalFailure": 500, "InternalException": 500}
DETAIL_LIMIT = 256  # characters of an error kept in the outcome (and a failed retry's cause)


def refused(code: str, status: int, message: str) -> Outcome:
    """The outcome of a refusal by Lambda or EventBridge (`code`, its HTTP `status`)."""
    return Outcome(
        False, status=status, detail=f"{code}: {message}"[:DETAIL_LIMIT], permanent=code in PERMANENT_REFUSALS
    )


def _client_refusal(error: Exception) -> Outcome:
    """A boto3 call that raised: an AWS refusal as `refused` says; anything else (no answer within the deadline, no
    connection) is retried."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return Outcome(False, detail=f"{type(error).__name__}: {error}"[:DETAIL_LIMIT])
    code = str(response.get("Error", {}).get("Code", "") or type(error).__name__)
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
    return refused(code, status, str(response.get("Error", {}).get("Message", "")))


def not_allowed(subscription: Subscription, settings: Settings) -> Outcome | None:
    """A permanent failure if the deployment may no longer push to the subscription's target; None if it may."""
    target = cloud_target(subscription.attributes.endpoint)
    why = (
        "not a function or bus ARN"
        if target is None
        else refusal(target, settings.aws_region, allow_list(settings, target.kind))
    )
    return None if why is None else Outcome(False, detail=why, permanent=True)


def to_function(client: Any, subscription: Subscription, message: TopicMessage) -> Outcome:
    """Invoke the function (RequestResponse) with the notification as its event."""
    try:
        answer = client.invoke(
            FunctionName=subscription.attributes.endpoint,
            InvocationType="RequestResponse",
            Payload=function_payload(subscription, message),
        )
    except Exception as error:
        return _client_refusal(error)
    status = int(answer.get("StatusCode") or 0)
    if answer.get("FunctionError"):
        payload = answer.get("Payload")
        said = payload.read().decode("utf-8", "replace") if payload is not None else ""
        return Outcome(
            False,
            status=FUNCTION_ERROR_STATUS,
            detail=f"FunctionError {answer['FunctionError']}: {said}"[:DETAIL_LIMIT],
        )
    return Outcome(200 <= status < 300, status=status)


def to_bus(client: Any, subscription: Subscription, message: TopicMessage) -> Outcome:
    """Put the notification on the bus as one event's Detail (Source `mns`, DetailType `MNS Notification`)."""
    entry = {
        "Source": EVENT_SOURCE,
        "DetailType": EVENT_DETAIL_TYPE,
        "Detail": event_detail(subscription, message),
        "EventBusName": subscription.attributes.endpoint,
    }
    try:
        answer = client.put_events(Entries=[entry])
    except Exception as error:
        return _client_refusal(error)
    entries = answer.get("Entries") or [{}]
    code = entries[0].get("ErrorCode")
    if answer.get("FailedEntryCount") or code:
        code = str(code or "InternalFailure")
        return refused(code, ENTRY_STATUS.get(code, 400), str(entries[0].get("ErrorMessage", "")))
    return Outcome(True, status=200)
