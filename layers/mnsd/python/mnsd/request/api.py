"""The request pipeline every route shares: request id, authentication, dispatch, error rendering."""

from __future__ import annotations

import secrets

from aws_lambda_powertools import Logger

from mnsd import errors
from mnsd.access.authentication import authenticate
from mnsd.access.permissions import Permission, permission_for
from mnsd.http import HttpRequest, HttpResponse
from mnsd.request.call import Call, xml_response
from mnsd.request.routes import ACTIONS, ROUTES, Operation, Route
from mnsd.rpc import api as rpc_api
from mnsd.services import Services
from mnsd.wire import responses

MNS_VERSION = "2015-06-06"
MAX_REQUEST_BYTES = 256 * 1024

logger = Logger(service="mns")


def new_request_id() -> str:
    return secrets.token_hex(12).upper()


def error_response(error: errors.MnsError, request_id: str, host_id: str, accept: str | None = None) -> HttpResponse:
    """The error in XML, or in JSON to a client that accepts JSON and not XML (Alibaba's Tea gateway for MNS sends
    `accept: application/json` and reads a JSON error's `Code`; no MNS SDK sends an Accept header)."""
    if accept and "json" in accept and "xml" not in accept:
        body = responses.error_json(error, request_id, host_id)
        return HttpResponse(error.status, body, {"Content-Type": "application/json;charset=utf-8"})
    return xml_response(responses.error_node(error, request_id, host_id), status=error.status)


def host_id(host: str | None, forwarded_proto: str | None = None) -> str:
    """The HostId of error bodies: the endpoint the client called, with its scheme (as MNS writes it)."""
    return f"{forwarded_proto or 'http'}://{host or 'mns'}"


def refuse(error: errors.MnsError, host: str | None = None) -> HttpResponse:
    """The MNS answer to a request refused before it reached a route (by the HTTP front end)."""
    request_id = new_request_id()
    return _stamped(error_response(error, request_id, host_id(host)), request_id)


def _stamped(response: HttpResponse, request_id: str) -> HttpResponse:
    response.headers.update({"x-mns-request-id": request_id, "x-mns-version": MNS_VERSION})
    return response


def handle(route_name: str | None, request: HttpRequest, services: Services) -> HttpResponse:
    request_id = new_request_id()
    host = host_id(request.header("host"), request.header("x-forwarded-proto"))
    try:
        if route_name not in ROUTES or _has_empty_segment(request.path):
            raise errors.InvalidRequestURL()
        if len(request.body) > MAX_REQUEST_BYTES:
            raise errors.InvalidArgument(f"The request body should not be larger than {MAX_REQUEST_BYTES} bytes.")
        if route_name in rpc_api.RPC_ROUTES and rpc_api.serves(request):
            return _stamped(rpc_api.handle(request, services, request_id, host), request_id)
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
            operation = route.select(call)
            services.authorizer.authorize(principal, _permission(operation, route, call), call.owner)
            response = operation(call)
    except errors.MnsError as error:
        response = error_response(error, request_id, host, request.header("accept"))
    except Exception:
        logger.exception("unhandled error", extra={"request_id": request_id, "route": route_name})
        response = error_response(errors.InternalError(), request_id, host, request.header("accept"))
    return _stamped(response, request_id)


def _has_empty_segment(path: str) -> bool:
    """`//queues`, `/queues//m`, `/queues/`: no resource has an empty name (`/`, the account, is the root)."""
    return path != "/" and "" in path.split("/")[1:]


def _permission(operation: Operation, route: Route, call: Call) -> Permission:
    params = call.request.path_params
    return permission_for(ACTIONS[operation], route.path, params, call.services.settings.region, call.owner)
