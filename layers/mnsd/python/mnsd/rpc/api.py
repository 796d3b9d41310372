"""The OpenAPI's request path: parameters, action, signature (ACS3 or v1), the account's limits and endpoint,
authorization per resource, the action, and the JSON answer or error.

Served at `POST /` (the route that also serves IssueSecurityToken on the XML plane): a request is the OpenAPI's when it
names an action (`x-acs-action`, `Action`) or carries its signature. The core SDK's requests default to GET: one at
`GET /` is refused in the OpenAPI's JSON (`UnsupportedHTTPMethod`), never handed to the XML API's GetAccountAttributes.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger

from mnsd import errors
from mnsd.access.permissions import permission_for
from mnsd.access.signature_rpc import authenticate_rpc, is_rpc_request, requested
from mnsd.http import HttpRequest, HttpResponse
from mnsd.rpc.actions import VersionInvalid, action_of
from mnsd.rpc.call import VERSION, RpcCall, request_params
from mnsd.rpc.envelope import failure, success
from mnsd.services import Services

# The routes of `/`: POST serves the OpenAPI; a GET naming an action is answered its refusal in the OpenAPI's JSON.
RPC_ROUTES = ("post_account", "get_account")
MethodNotServed = errors.openapi_error(
    "UnsupportedHTTPMethod", 400, "This http method is not supported: the Mns-open OpenAPI is served to POST /."
)

logger = Logger(service="mns")


def params_of(request: HttpRequest) -> dict[str, str] | None:
    """The request's parameters (query and form body merged) when it is the OpenAPI's, else None (read once)."""
    params = request_params(request)
    return params if is_rpc_request(request, params) else None


def handle(
    request: HttpRequest, params: dict[str, str], services: Services, request_id: str, host_id: str
) -> HttpResponse:
    try:
        if request.method.upper() != "POST":
            raise MethodNotServed()
        name, version = requested(request, params)
        if version is not None and version != VERSION:
            raise VersionInvalid(f"Specified parameter Version {version} is not valid: this API is {VERSION}.")
        action = action_of(name)
        principal = authenticate_rpc(
            request, params, services.keys, services.clock.now(), services.tokens, services.storage.nonces
        )
        services.limits.admit_request(principal.account_id)
        owner = request.host_account() or principal.account_id
        call = RpcCall(request, params, name, principal, owner, services)
        if not action.endpoint_control:
            services.endpoints.admit(owner, request.source_ip)
        region = services.settings.region
        for path, names in action.resources(call):
            services.authorizer.authorize(principal, permission_for(name, path, names, region, owner), owner)
        return success(request_id, action.serve(call))
    except errors.MnsError as error:
        return failure(error, request_id, host_id)
    except Exception:
        logger.exception("unhandled error", extra={"request_id": request_id, "action": request.header("x-acs-action")})
        return failure(errors.InternalError(), request_id, host_id)
