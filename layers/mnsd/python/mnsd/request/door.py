"""The XML and JSON planes' front door (`mnsd.pipeline.steps.Door`): a route of the table (`routes`), the MNS
signature (V2 or V4), the operation the route selects and the RAM action it is authorized as; errors in XML, or in
JSON on the JSON plane or to a client that accepts JSON and not XML."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mnsd.access.authentication import authenticate
from mnsd.access.permissions import Permission, permission_for
from mnsd.access.principal import Principal
from mnsd.calls import planes
from mnsd.calls.call import Call, xml_response
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.jsonwire import responses as json_responses
from mnsd.pipeline.steps import Work
from mnsd.request.routes import ACTIONS, ROUTES, Operation, Route
from mnsd.wire import responses

if TYPE_CHECKING:
    from mnsd.services import Services


def new_request_id() -> str:
    return secrets.token_hex(12).upper()


def host_id(host: str | None, forwarded_proto: str | None = None) -> str:
    """The HostId of error bodies: the endpoint the client called, with its scheme (as MNS writes it)."""
    return f"{forwarded_proto or 'http'}://{host or 'mns'}"


def error_response(error: errors.MnsError, request_id: str, host_id: str, accept: str | None = None) -> HttpResponse:
    """The error in XML, or in JSON to a client that accepts JSON and not XML (Alibaba's Tea gateway for MNS sends
    `accept: application/json` and reads a JSON error's `Code`; no MNS SDK sends an Accept header)."""
    if accept and "json" in accept and "xml" not in accept:
        body = json_responses.error(error, request_id, host_id)
        return HttpResponse(error.status, body, {"Content-Type": json_responses.CONTENT_TYPE})
    return xml_response(responses.error_node(error, request_id, host_id), status=error.status)


def error_answer(error: errors.MnsError, request_id: str, host: str, request: HttpRequest) -> HttpResponse:
    """A call's error: in JSON on the JSON plane (`mnsd.calls.planes`), else as `error_response` says."""
    accept = "application/json" if planes.is_json(request) else request.header("accept")
    return error_response(error, request_id, host, accept)


class RouteDoor:
    def __init__(self, route_name: str | None, request: HttpRequest, request_id: str, host: str) -> None:
        self.route_name = route_name
        self.request = request
        self.request_id = request_id
        self.host = host
        self.version = planes.codec_of(request).version

    def read(self) -> None:
        if self.route_name not in ROUTES or _has_empty_segment(self.request.path):
            raise errors.InvalidRequestURL()

    @property
    def route(self) -> Route:
        return ROUTES[self.route_name or ""]

    def authenticate(self, services: Services) -> Principal | None:
        if self.route.public:
            return None
        now = services.clock.now()
        return authenticate(self.request, services.keys, now, services.tokens, region=services.settings.region)

    def guards_endpoint(self) -> bool:
        return True

    def work(self, principal: Principal | None, owner: str, services: Services) -> Work:
        call = Call(self.request, principal, owner, services, self.error)
        if principal is None:
            public = self.route.select(call)
            return Work((), lambda: public(call))
        if not self.route.json:
            planes.refuse_on_json(self.request)
        operation = self.route.select(call)
        return Work([_permission(operation, self.route, call)], lambda: self.serve(operation, call))

    def serve(self, operation: Operation, call: Call) -> HttpResponse:
        """The operation on its call, authorized (a door of requests the wait tier coalesced serves some together:
        `mnsd.request.coalesced`)."""
        return operation(call)

    def error(self, error: errors.MnsError) -> HttpResponse:
        return error_answer(error, self.request_id, self.host, self.request)

    def described(self) -> Mapping[str, str]:
        return {"route": self.route_name or ""}


def _has_empty_segment(path: str) -> bool:
    """`//queues`, `/queues//m`, `/queues/`: no resource has an empty name (`/`, the account, is the root)."""
    return path != "/" and "" in path.split("/")[1:]


def _permission(operation: Operation, route: Route, call: Call) -> Permission:
    params = call.request.path_params
    return permission_for(ACTIONS[operation], route.path, params, call.services.settings.region, call.owner)
