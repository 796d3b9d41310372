"""IssueSecurityToken (`POST /?securitytoken=true`): temporary credentials for the calling key."""

from mnsd.calls.call import Call, xml_response
from mnsd.ground import errors
from mnsd.ground.http import HttpResponse
from mnsd.wire import requests, responses


def issue_security_token(call: Call) -> HttpResponse:
    principal = call.principal
    if principal is None or principal.token:
        raise errors.AccessDenied("A security token cannot be used to issue security tokens.")
    request = requests.security_token_request(call.xml_if_any())
    parent = call.services.keys.lookup(principal.key_id)
    if parent is None:  # revoked since the request was authenticated
        raise errors.InvalidAccessKeyId()
    credentials = call.services.tokens.issue(parent, call.services.clock.now(), request)
    response = xml_response(responses.credentials_node(credentials))
    response.headers["Cache-Control"] = "no-store"  # it carries a secret
    return response
