"""The request pipeline every route shares: request id, authentication, dispatch, error rendering."""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from aws_lambda_powertools import Logger

from mnsd import errors, grip
from mnsd.access.authentication import authenticate
from mnsd.access.permissions import Permission, permission_for
from mnsd.http import HttpRequest, HttpResponse
from mnsd.jsonwire import responses as json_responses
from mnsd.request import planes
from mnsd.request.call import Call, xml_response
from mnsd.request.routes import ACTIONS, ROUTES, Operation, Route
from mnsd.rpc import api as rpc_api
from mnsd.services import Services
from mnsd.wire import responses

MNS_VERSION = planes.XML_VERSION
MAX_REQUEST_BYTES = 256 * 1024

logger = Logger(service="mns")


def new_request_id() -> str:
    return secrets.token_hex(12).upper()


def error_response(error: errors.MnsError, request_id: str, host_id: str, accept: str | None = None) -> HttpResponse:
    """The error in XML, or in JSON to a client that accepts JSON and not XML (Alibaba's Tea gateway for MNS sends
    `accept: application/json` and reads a JSON error's `Code`; no MNS SDK sends an Accept header)."""
    if accept and "json" in accept and "xml" not in accept:
        body = json_responses.error(error, request_id, host_id)
        return HttpResponse(error.status, body, {"Content-Type": json_responses.CONTENT_TYPE})
    return xml_response(responses.error_node(error, request_id, host_id), status=error.status)


def _error_answer(error: errors.MnsError, request_id: str, host: str, request: HttpRequest) -> HttpResponse:
    """A call's error: in JSON on the JSON plane (`mnsd.request.planes`), else as `error_response` says."""
    accept = "application/json" if planes.is_json(request) else request.header("accept")
    return error_response(error, request_id, host, accept)


def host_id(host: str | None, forwarded_proto: str | None = None) -> str:
    """The HostId of error bodies: the endpoint the client called, with its scheme (as MNS writes it)."""
    return f"{forwarded_proto or 'http'}://{host or 'mns'}"


def refuse(error: errors.MnsError, host: str | None = None, headers: Mapping[str, str] | None = None) -> HttpResponse:
    """The MNS answer to a request refused before it reached a route (by the HTTP front end): on the plane its
    `headers`, when known, put it on (`mnsd.request.planes`), else in XML."""
    request_id = new_request_id()
    said = HttpRequest("", "/", "", {name.lower(): value for name, value in (headers or {}).items()})
    answer = _error_answer(error, request_id, host_id(host), said)
    return _stamped(answer, request_id, planes.codec_of(said).version)


def _stamped(response: HttpResponse, request_id: str, version: str = MNS_VERSION) -> HttpResponse:
    response.headers.update({"x-mns-request-id": request_id, "x-mns-version": version})
    return response


def handle(route_name: str | None, request: HttpRequest, services: Services) -> HttpResponse:
    request_id = new_request_id()
    host = host_id(request.header("host"), request.header("x-forwarded-proto"))
    try:
        if route_name not in ROUTES or _has_empty_segment(request.path):
            raise errors.InvalidRequestURL()
        if len(request.body) > MAX_REQUEST_BYTES:
            raise errors.InvalidArgument(f"The request body should not be larger than {MAX_REQUEST_BYTES} bytes.")
        params = rpc_api.params_of(request) if route_name in rpc_api.RPC_ROUTES else None
        if params is not None:
            return _stamped(rpc_api.handle(request, params, services, request_id, host), request_id)
        route = ROUTES[route_name]
        if route.public:
            call = Call(request, None, "", services)
            response = route.select(call)(call)
        else:
            principal = authenticate(
                request, services.keys, services.clock.now(), services.tokens, region=services.settings.region
            )
            services.limits.admit_request(principal.account_id)
            call = Call(request, principal, request.host_account() or principal.account_id, services)
            services.endpoints.admit(call.owner, request.source_ip)
            if not route.json:
                planes.refuse_on_json(request)
            operation = route.select(call)
            services.authorizer.authorize(principal, _permission(operation, route, call), call.owner)
            response = operation(call)
    except grip.Held as held:  # the wait tier holds the request; this answer is the one it gives at the timeout
        response = _error_answer(held.timeout_answer(), request_id, host, request)
        response.headers.update(held.headers())
    except errors.MnsError as error:
        response = _error_answer(error, request_id, host, request)
    except Exception:
        logger.exception("unhandled error", extra={"request_id": request_id, "route": route_name})
        response = _error_answer(errors.InternalError(), request_id, host, request)
    return _stamped(response, request_id, planes.codec_of(request).version)


def route_path(route_name: str | None) -> str | None:
    """The path template of a route (`/queues/{queue}/messages`), None for the catch-all."""
    return ROUTES[route_name].path if route_name in ROUTES else None


def _has_empty_segment(path: str) -> bool:
    """`//queues`, `/queues//m`, `/queues/`: no resource has an empty name (`/`, the account, is the root)."""
    return path != "/" and "" in path.split("/")[1:]


def _permission(operation: Operation, route: Route, call: Call) -> Permission:
    params = call.request.path_params
    return permission_for(ACTIONS[operation], route.path, params, call.services.settings.region, call.owner)
