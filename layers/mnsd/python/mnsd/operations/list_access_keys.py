"""ListAccessKeys (`GET /?accesskeys=true`, an extension for the console): the account's keys and their policies.

Only a root key of the account may list them: any other caller (a key with a policy, even one allowing
`mns:ListAccessKeys`, a security token, another account) is refused with AccessDenied. Secrets never leave.
"""

from mnsd.access.authorizer import denied
from mnsd.access.permissions import permission_for
from mnsd.calls.call import Call, xml_response
from mnsd.ground.http import HttpResponse
from mnsd.wire import responses


def list_access_keys(call: Call) -> HttpResponse:
    principal = call.principal
    if principal is None or not principal.is_root or principal.account_id != call.account_id:
        permission = permission_for("ListAccessKeys", "/", {}, call.services.settings.region, call.account_id)
        raise denied(permission, "only a root key of the account may list its keys")
    return xml_response(responses.access_keys(call.services.keys.keys_of(call.account_id)))
