"""Requests the wait tier coalesced (`contract.BATCH_PATH`): single sends, deletes and receives of a queue that reached
the tier within a few milliseconds, passed on as one call that carries each client's request whole (method, path,
headers, body). The call is the tier's (its batch signature, `contract.BATCH_ISSUER`); each request in it goes through
the pipeline as if it had come alone (`mnsd.pipeline.steps`: its own size, signature, request limit, owner, endpoint
ACL, permission, request id and plane), and what its operation would do is enlisted instead of done. The accepted
requests of a queue are then served together through the message service (one batch send, stored as one pack; one
batch delete; one claim for the single receives) and each request is answered with its own operation's answer: a
single send's `Message` with its own MessageId and MD5, a receive's own message and handle, its own error when its
message, its signature, its permission or its limit refuses it (`docs/wait_tier.md`, "Coalescing").

The tier posts each operation's batches to that operation's own function (on AWS its function URL: sends to the send
route's, deletes to the delete route's, receives to the receive route's), which serves the requests of its own route
only, under its own role; a request of another route in its batch is answered as no route's (`InvalidRequestURL`).
A batch to no route (`route_name` None) serves each request on its own route."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from mnsd.calls.call import Call, no_content
from mnsd.ground import actor, errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.model.inputs import MAX_BATCH, MAX_BATCH_BYTES, MessageInput
from mnsd.model.queues import Queue
from mnsd.operations.delete_message import delete_message
from mnsd.operations.receive_message import Render, deadline_of, receive_message, single_receive, tier_answer
from mnsd.operations.send_message import send_message
from mnsd.pipeline import steps
from mnsd.queues import addresses
from mnsd.queues.messages import Ask
from mnsd.request.door import RouteDoor, error_response, host_id, new_request_id
from mnsd.request.routes import ROUTES, Operation, path_parameters
from mnsd.waiting import contract

if TYPE_CHECKING:
    from mnsd.services import Services

logger = Logger(service="mns")

# The routes a coalesced request may be on (the tier coalesces only single sends, deletes and receives), each served by
# its own route's function.
BATCH_ROUTES = ("post_messages", "get_messages", "delete_messages")
MAX_REQUESTS = 64  # requests in one batch call, at most (the tier sends at most 16 a queue)
JSON_TYPE = "application/json"


@dataclass(eq=False)
class Enlisted:
    """A request whose operation is served with its queue's others: its call, its door (its errors, its request id)
    and the answer to fill (the pipeline stamped its request id on it already)."""

    call: Call
    door: RouteDoor
    answer: HttpResponse
    message: MessageInput | None = None  # a send's
    ask: Ask | None = None  # a receive's
    render: Render | None = None  # ... and its answer to a claim

    filled: bool = False

    def fill(self, answer: HttpResponse) -> None:
        self.filled = True
        stamped = self.answer.headers
        self.answer.status, self.answer.body = answer.status, answer.body
        self.answer.headers = {**answer.headers, **stamped}


@dataclass
class Batch:
    """The enlisted requests, by what serves them together (an operation and a queue)."""

    groups: dict[tuple[str, str], tuple[Queue, list[Enlisted]]] = field(default_factory=dict)

    def enlist(self, kind: str, queue: Queue, enlisted: Enlisted) -> HttpResponse:
        self.groups.setdefault((kind, queue.queue_id), (queue, []))[1].append(enlisted)
        return enlisted.answer

    def serve(self, services: Services) -> None:
        """Each group served together; a request its group's failure left unanswered gets that failure."""
        for (kind, _), (queue, enlisted) in self.groups.items():
            try:
                SERVERS[kind](services, queue, enlisted)
            except errors.MnsError as error:
                for each in enlisted:
                    if not each.filled:
                        each.fill(each.door.error(error))
            except Exception:
                logger.exception("coalesced requests failed", extra={"kind": kind, "requests": len(enlisted)})
                for each in enlisted:
                    if not each.filled:
                        each.fill(each.door.error(errors.InternalError()))


class EnlistingDoor(RouteDoor):
    """The route door of one coalesced request: every step as for a request alone, then its operation enlisted in the
    batch (single sends, deletes, receives) or, for any other operation, served at once."""

    def __init__(self, route_name: str | None, request: HttpRequest, request_id: str, host: str, batch: Batch) -> None:
        super().__init__(route_name, request, request_id, host)
        self.batch = batch

    def serve(self, operation: Operation, call: Call) -> HttpResponse:
        enlist = ENLISTERS.get(operation)
        if enlist is None:
            return operation(call)
        return enlist(self.batch, Enlisted(call, self, HttpResponse(500)))


# -- each operation's part: read and checked as it would be alone (enlist), then served with the others (serve) -------
def _enlist_send(batch: Batch, enlisted: Enlisted) -> HttpResponse:
    call = enlisted.call
    enlisted.message = call.plane.sent_message()  # (a bad message is answered before a missing queue)
    queue = call.own_queue(addresses.SEND)
    call.services.messages.check_sent(queue, [enlisted.message])
    return batch.enlist("send", queue, enlisted)


def _serve_sends(services: Services, queue: Queue, enlisted: list[Enlisted]) -> None:
    """Batch sends of 16 messages and 64 KB at most (a batch send's limits: each one pack)."""
    part: list[tuple[Enlisted, MessageInput]] = []
    size = 0
    for each in enlisted:
        assert each.message is not None  # (`_enlist_send` read it)
        length = len(each.message.body.encode("utf-8"))
        if part and (len(part) == MAX_BATCH or size + length > MAX_BATCH_BYTES):
            _send_part(services, queue, part)
            part, size = [], 0
        part.append((each, each.message))
        size += length
    _send_part(services, queue, part)


def _send_part(services: Services, queue: Queue, part: list[tuple[Enlisted, MessageInput]]) -> None:
    if not part:
        return
    with actor.acting(_one_key([each for each, _ in part])):
        results = services.messages.send(queue, [message for _, message in part])
    for (each, _), result in zip(part, results, strict=True):
        each.fill(each.door.error(result.error) if result.error else each.call.plane.sent(result))


def _one_key(enlisted: list[Enlisted]) -> str | None:
    """The access key the operation log names for requests served together (`mnsd.ground.actor`): theirs when they
    share one (a client's concurrent calls), else none (never one request's key for another's message)."""
    keys = {each.call.principal.key_id if each.call.principal else None for each in enlisted}
    return keys.pop() if len(keys) == 1 else None


def _enlist_delete(batch: Batch, enlisted: Enlisted) -> HttpResponse:
    return batch.enlist("delete", enlisted.call.queue(), enlisted)


def _serve_deletes(services: Services, queue: Queue, enlisted: list[Enlisted]) -> None:
    """Batch deletes of distinct handles (a handle two clients sent goes in the next, as if it came after)."""
    rest = enlisted
    while rest:
        part: list[Enlisted] = []
        later: list[Enlisted] = []
        seen: set[str] = set()
        for each in rest:
            handle = _handle(each)
            if handle in seen or len(part) == MAX_BATCH:
                later.append(each)
            else:
                seen.add(handle)
                part.append(each)
        failures = dict(services.messages.batch_delete(queue, [_handle(each) for each in part]))
        for each in part:
            failed = failures.get(_handle(each))
            each.fill(each.door.error(failed) if failed else no_content())
        rest = later


def _handle(enlisted: Enlisted) -> str:
    return enlisted.call.request.query("ReceiptHandle") or ""


def _enlist_receive(batch: Batch, enlisted: Enlisted) -> HttpResponse:
    call = enlisted.call
    wait, enlisted.render = single_receive(call)
    queue = call.queue()
    enlisted.ask = Ask(wait, call.request.received_at, deadline_of(call.request))
    return batch.enlist("receive", queue, enlisted)


def _serve_receives(services: Services, queue: Queue, enlisted: list[Enlisted]) -> None:
    """One claim of as many messages as the receives (16 at most each claim), one message to each while they last."""
    channel = contract.channel(queue.queue_id)
    for start in range(0, len(enlisted), MAX_BATCH):
        part = enlisted[start : start + MAX_BATCH]
        with actor.acting(_one_key(part)):
            outcomes = services.messages.receive_each(queue, [each.ask for each in part if each.ask is not None])
        for each, outcome in zip(part, outcomes, strict=True):
            if isinstance(outcome, errors.MnsError):
                each.fill(each.door.error(outcome))
            else:
                assert each.render is not None  # (`_enlist_receive` read it)
                each.fill(tier_answer(each.call, channel, outcome, each.render))


ENLISTERS: dict[Operation, Callable[[Batch, Enlisted], HttpResponse]] = {
    send_message: _enlist_send,
    delete_message: _enlist_delete,
    receive_message: _enlist_receive,
}
SERVERS: dict[str, Callable[[Services, Queue, list[Enlisted]], None]] = {
    "send": _serve_sends,
    "delete": _serve_deletes,
    "receive": _serve_receives,
}


# -- the batch call ------------------------------------------------------------------------------------------------------
def answer(
    request: HttpRequest, services: Services, request_id: str, host: str, route_name: str | None = None
) -> HttpResponse:
    """The answer to the tier's batch call (to the function of `route_name`, when it is one of `BATCH_ROUTES`): each
    request's own answer (`contract.answers_document`), or the call's error (a signature not the tier's batch
    signature, a body not a batch)."""
    try:
        answers = _answers(request, services, route_name)
    except errors.MnsError as error:
        refused = error_response(error, request_id, host)
        refused.headers["x-mns-request-id"] = request_id
        return refused
    # (one line for the call: each request's own id and status, as a request alone logs them)
    logger.info("coalesced", requests=[[each.headers.get("x-mns-request-id"), each.status] for each in answers])
    body = contract.answers_document([(each.status, each.headers, each.body) for each in answers])
    return HttpResponse(200, body, {"Content-Type": JSON_TYPE, "x-mns-request-id": request_id})


def _answers(request: HttpRequest, services: Services, route_name: str | None) -> list[HttpResponse]:
    token, key = request.header(contract.SIG_HEADER), services.settings.wait_tier_key
    if not key or token is None or not contract.verify(token, key, services.clock.now(), contract.BATCH_ISSUER):
        raise errors.AccessDenied(f"The {contract.SIG_HEADER} header is not the wait tier's batch signature.")
    try:
        given = contract.read_batch(request.body)
    except ValueError:
        raise errors.InvalidArgument("The wait tier's batch is not a batch document.") from None
    if not 1 <= len(given) <= MAX_REQUESTS:
        raise errors.InvalidArgument(f"A batch of the wait tier holds 1 to {MAX_REQUESTS} requests.")
    batch = Batch()
    served = (route_name,) if route_name in BATCH_ROUTES else BATCH_ROUTES
    answers = [_enlisted(each, request, token, services, batch, served) for each in given]
    batch.serve(services)
    return answers


def _enlisted(
    given: tuple[str, str, list[tuple[str, str]], bytes, int | None],
    outer: HttpRequest,
    token: str,
    services: Services,
    batch: Batch,
    served: tuple[str, ...],
) -> HttpResponse:
    """One request of the batch through the pipeline, as if it had come alone: its answer, or its place in the batch."""
    method, target, headers, body, deadline = given
    path, _, query = target.partition("?")
    said = {name.lower(): value for name, value in headers if not name.lower().startswith(contract.PREFIX)}
    said[contract.SIG_HEADER.lower()] = token  # (a receive's answer is the tier's: `mnsd.operations.receive_message`)
    if deadline is not None:
        said[contract.DEADLINE_HEADER.lower()] = str(deadline)
    route_name, params = _route(method, path, served)
    request = HttpRequest(method, path, query, said, body, params, outer.received_at, outer.source_ip)
    request_id = new_request_id()
    door = EnlistingDoor(
        route_name, request, request_id, host_id(said.get("host"), said.get("x-forwarded-proto")), batch
    )
    return steps.run(door, services, request_id)


def _route(method: str, path: str, served: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    """The route of a coalesced request among those `served` (None: not one of them) and its path's parameters."""
    for name in served:
        route = ROUTES[name]
        params = path_parameters(route.path, path) if route.method == method else {}
        if params:
            return name, params
    return None, {}
