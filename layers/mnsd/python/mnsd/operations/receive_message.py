"""ReceiveMessage, and a receive's answer with or without the wait tier (BatchReceiveMessage's too, and a receive the
tier coalesced, `mnsd.request.coalesced`): a request the tier signed (`contract.SIG_HEADER`) gets the service's outcome
in the contract's headers (`MessageService.receive_or_hold`); any other waits at the origin, as without the tier. A
signature that does not verify is refused."""

from __future__ import annotations

from collections.abc import Callable

from mnsd.calls.call import Call
from mnsd.calls.queries import wait_seconds
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.queues.messages import Claimed, Hold, Received
from mnsd.waiting import contract

Render = Callable[[list[Received]], HttpResponse]


def receive_message(call: Call) -> HttpResponse:
    wait, render = single_receive(call)
    return receive(call, 1, wait, render)


def single_receive(call: Call) -> tuple[int | None, Render]:
    """What a ReceiveMessage asks (its wait) and how it answers a claim (its one message): also read when the wait
    tier coalesced it with others (`mnsd.request.coalesced`)."""
    return wait_seconds(call.request), lambda received: call.plane.received(received[0])


def receive(call: Call, count: int, wait: int | None, render: Render) -> HttpResponse:
    """The answer to a receive of up to `count` messages (`render` makes a claim's answer)."""
    queue, request, messages = call.queue(), call.request, call.services.messages
    token, key = request.header(contract.SIG_HEADER), call.services.settings.wait_tier_key
    through_tier = token is not None and bool(key)  # (no key: the tier is off, the header means nothing)
    if through_tier and not contract.verify(str(token), key, call.services.clock.now()):
        raise errors.AccessDenied(f"The {contract.SIG_HEADER} header is not signed by this service's wait tier.")
    channel, deadline = contract.channel(queue.queue_id), deadline_of(request)
    if not through_tier:
        return render(messages.receive(queue, count, wait, request.received_at))
    outcome = messages.receive_or_hold(queue, count, wait, request.received_at, deadline)
    return tier_answer(call, channel, outcome, render)


def deadline_of(request: HttpRequest) -> int | None:
    """The client's deadline (ms) the tier gives when it asks again for a receive it holds."""
    deadline = request.header(contract.DEADLINE_HEADER) or ""
    return int(deadline) if deadline.isdigit() else None


def tier_answer(call: Call, channel: str, outcome: Claimed | Hold, render: Render) -> HttpResponse:
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
