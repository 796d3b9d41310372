"""A receive's answer, with or without the wait tier: a request the tier signed (`contract.SIG_HEADER`) gets the
service's outcome in the contract's headers (`MessageService.receive_or_hold`); any other waits at the origin, as
without the tier. A signature that does not verify is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from mnsd.ground import errors
from mnsd.ground.clock import Clock
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.ground.settings import Settings
from mnsd.model.queues import Queue
from mnsd.queues.messages import Claimed, Hold, MessageService, Received
from mnsd.waiting import contract

Render = Callable[[list[Received]], HttpResponse]


class _Services(Protocol):
    messages: MessageService
    settings: Settings
    clock: Clock


class ReceiveCall(Protocol):
    """What a receive's answer needs of its call (`mnsd.calls.call.Call`, named here by its shape only: the call's
    room stands on the services, which post the tier's wakes from this room)."""

    @property
    def request(self) -> HttpRequest: ...
    @property
    def services(self) -> _Services: ...
    @property
    def error_answer(self) -> Callable[[errors.MnsError], HttpResponse]: ...
    def queue(self) -> Queue: ...


def receive(call: ReceiveCall, count: int, wait_seconds: int | None, render: Render) -> HttpResponse:
    """The answer to a receive of up to `count` messages (`render` makes a claim's answer)."""
    queue, request, messages = call.queue(), call.request, call.services.messages
    token, key = request.header(contract.SIG_HEADER), call.services.settings.wait_tier_key
    through_tier = token is not None and bool(key)  # (no key: the tier is off, the header means nothing)
    if through_tier and not contract.verify(str(token), key, call.services.clock.now()):
        raise errors.AccessDenied(f"The {contract.SIG_HEADER} header is not signed by this service's wait tier.")
    channel, deadline = contract.channel(queue.queue_id), deadline_of(request)
    if not through_tier:
        return render(messages.receive(queue, count, wait_seconds, request.received_at))
    outcome = messages.receive_or_hold(queue, count, wait_seconds, request.received_at, deadline)
    return tier_answer(call, channel, outcome, render)


def deadline_of(request: HttpRequest) -> int | None:
    """The client's deadline (ms) the tier gives when it asks again for a receive it holds."""
    deadline = request.header(contract.DEADLINE_HEADER) or ""
    return int(deadline) if deadline.isdigit() else None


def tier_answer(call: ReceiveCall, channel: str, outcome: Claimed | Hold, render: Render) -> HttpResponse:
    """A receive's answer to the tier: what it claimed, or the answer to give when its wait ends (`MessageNotExist`),
    with what the tier reads of it."""
    answer = render(outcome.received) if isinstance(outcome, Claimed) else call.error_answer(errors.MessageNotExist())
    answer.headers.update(tier_headers(channel, outcome))
    return answer


def tier_headers(channel: str, outcome: Claimed | Hold) -> dict[str, str]:
    """What the tier reads of a receive's outcome (and removes before its client sees the answer)."""
    headers = {contract.CHANNEL_HEADER: channel}
    if isinstance(outcome, Hold):
        headers[contract.HOLD_HEADER] = str(outcome.until_ms)
        if outcome.due_ms is not None:
            headers[contract.DUE_HEADER] = str(outcome.due_ms)
        return headers
    headers[contract.CLAIMED_HEADER] = str(len(outcome.received))
    headers[contract.DUE_HEADER] = str(outcome.due_ms)
    if outcome.more:
        headers[contract.MORE_HEADER] = str(outcome.more)
    return headers
