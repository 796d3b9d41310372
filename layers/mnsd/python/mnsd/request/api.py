"""The one entry of every API call (the Lambda handlers' and the local server's): the request's id, its plane's front
door (the XML and JSON planes' route table, `request.door`, or the Mns-open OpenAPI's action table, `rpc.door`),
and the request pipeline (`mnsd.pipeline.steps`) through it; and the MNS answer to a request the HTTP front end
refuses before it reaches a route. A request the wait tier passed on (signed by it) tells the tier of the messages it
made receivable in its answer (`contract.WAKES_HEADER`), not by a post (`mnsd.waiting.wakes.carried`)."""

from __future__ import annotations

from collections.abc import Mapping

from mnsd.calls import planes
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.pipeline import steps
from mnsd.pipeline.steps import Door
from mnsd.request import coalesced
from mnsd.request.door import RouteDoor, error_answer, host_id, new_request_id
from mnsd.request.routes import ROUTES
from mnsd.rpc import door as rpc
from mnsd.rpc import envelope
from mnsd.services import Services
from mnsd.waiting import contract, wakes


def refuse(
    error: errors.MnsError, host: str | None = None, headers: Mapping[str, str] | None = None, target: str = ""
) -> HttpResponse:
    """The MNS answer to a request refused before it reached a route (by the HTTP front end): on the plane its
    `headers` and `target` (path and query), when known, put it on (the OpenAPI's at `/`, `mnsd.calls.planes`),
    else in XML."""
    request_id = new_request_id()
    path, _, query = target.partition("?")
    said = HttpRequest("", path or "/", query, {name.lower(): value for name, value in (headers or {}).items()})
    if path == "/" and rpc.params_of(said) is not None:
        answer, version = envelope.failure(error, request_id, host_id(host)), rpc.ANSWER_VERSION
    else:
        answer, version = error_answer(error, request_id, host_id(host), said), planes.codec_of(said).version
    answer.headers.update({"x-mns-request-id": request_id, "x-mns-version": version})
    return answer


def handle(route_name: str | None, request: HttpRequest, services: Services) -> HttpResponse:
    with wakes.carried(through_tier(request, services)) as told:
        response = _handle(route_name, request, services)
    if told:
        response.headers[contract.WAKES_HEADER] = contract.wakes_header(told)
    return response


def _handle(route_name: str | None, request: HttpRequest, services: Services) -> HttpResponse:
    request_id = new_request_id()
    host = host_id(request.header("host"), request.header("x-forwarded-proto"))
    if request.method == "POST" and request.path == contract.BATCH_PATH:  # the wait tier's coalesced requests
        return coalesced.answer(request, services, request_id, host, route_name)
    return steps.run(_door(route_name, request, request_id, host), services, request_id)


def through_tier(request: HttpRequest, services: Services) -> bool:
    """Whether the wait tier passed the request on: signed with its key (`contract.SIG_HEADER`; a client cannot send
    that header through the tier, and one it sends to the origin itself does not verify without the key)."""
    token = request.header(contract.SIG_HEADER)
    if token is None:  # (a client's request: the services are not asked, the catch-all's none)
        return False
    key = services.settings.wait_tier_key
    return bool(key) and contract.verify(token, key, services.clock.now())


def _door(route_name: str | None, request: HttpRequest, request_id: str, host: str) -> Door:
    """The OpenAPI's door for its calls at `/` (told by their parameters, `rpc.params_of`), the route table's for every
    other call."""
    if route_name in rpc.RPC_ROUTES:
        params = rpc.params_of(request)
        if params is not None:
            return rpc.OpenApiDoor(request, params, request_id, host)
    return RouteDoor(route_name, request, request_id, host)


def route_path(route_name: str | None) -> str | None:
    """The path template of a route (`/queues/{queue}/messages`), None for the catch-all."""
    return ROUTES[route_name].path if route_name in ROUTES else None
