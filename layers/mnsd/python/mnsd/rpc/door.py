"""The Mns-open OpenAPI's front door (`mnsd.pipeline.steps.Door`): the action a request names (`x-acs-action`,
`Action`, as its signature covers them), its signature (ACS3 or v1), the resources the action is authorized on, and
the JSON envelope of its answer or error.

Served at `POST /` (the route that also serves IssueSecurityToken on the XML plane): a request is the OpenAPI's when it
names an action (`x-acs-action`, `Action`) or carries its signature. The core SDK's requests default to GET: one at
`GET /` is refused in the OpenAPI's JSON (`UnsupportedHTTPMethod`), never handed to the XML API's GetAccountAttributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mnsd.access.permissions import permission_for
from mnsd.access.principal import Principal
from mnsd.access.signature_rpc import authenticate_rpc, is_rpc_request, requested
from mnsd.ground import errors
from mnsd.ground.http import HttpRequest, HttpResponse
from mnsd.pipeline.steps import MAX_REQUEST_BYTES, Work
from mnsd.rpc.actions import Action, VersionInvalid, action_of
from mnsd.rpc.call import VERSION, RpcCall, request_params
from mnsd.rpc.envelope import failure, success

if TYPE_CHECKING:
    from mnsd.services import Services

# The routes of `/`: POST serves the OpenAPI; a GET naming an action is answered its refusal in the OpenAPI's JSON.
RPC_ROUTES = ("post_account", "get_account")
# The `x-mns-version` an OpenAPI answer carries, as every answer of the routes it shares with the XML API.
ANSWER_VERSION = "2015-06-06"
MethodNotServed = errors.openapi_error(
    "UnsupportedHTTPMethod", 400, "This http method is not supported: the Mns-open OpenAPI is served to POST /."
)


def params_of(request: HttpRequest) -> dict[str, str] | None:
    """The request's parameters (query and form body merged) when it is the OpenAPI's, else None (read once). A body
    over the size limit is not read: the call is told by its headers and query alone, and the pipeline refuses it."""
    params = request_params(request, read_body=len(request.body) <= MAX_REQUEST_BYTES)
    return params if is_rpc_request(request, params) else None


class OpenApiDoor:
    version = ANSWER_VERSION
    action: Action  # the action the request names, once `read`

    def __init__(self, request: HttpRequest, params: dict[str, str], request_id: str, host: str) -> None:
        self.request = request
        self.params = params
        self.request_id = request_id
        self.host = host
        self.name = ""

    def read(self) -> None:
        if self.request.method.upper() != "POST":
            raise MethodNotServed()
        self.name, version = requested(self.request, self.params)
        if version is not None and version != VERSION:
            raise VersionInvalid(f"Specified parameter Version {version} is not valid: this API is {VERSION}.")
        self.action = action_of(self.name)

    def authenticate(self, services: Services) -> Principal:
        storage = services.storage
        now = services.clock.now()
        return authenticate_rpc(self.request, self.params, services.keys, now, services.tokens, storage.nonces)

    def guards_endpoint(self) -> bool:
        return not self.action.endpoint_control

    def work(self, principal: Principal | None, owner: str, services: Services) -> Work:
        call = RpcCall(self.request, self.params, self.name, principal, owner, services)
        region = services.settings.region
        permissions = [
            permission_for(self.name, path, names, region, owner) for path, names in self.action.resources(call)
        ]
        return Work(permissions, lambda: success(self.request_id, self.action.serve(call)))

    def error(self, error: errors.MnsError) -> HttpResponse:
        return failure(error, self.request_id, self.host)

    def described(self) -> Mapping[str, str]:
        return {"action": self.name}
