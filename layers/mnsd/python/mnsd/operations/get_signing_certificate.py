from mnsd.calls.call import Call
from mnsd.ground import errors
from mnsd.ground.http import HttpResponse


def get_signing_certificate(call: Call) -> HttpResponse:
    """The public certificate HTTP endpoints verify push signatures with (no authentication: it is public)."""
    certificate = call.services.settings.signing_certificate
    if not certificate:
        raise errors.InvalidRequestURL()
    return HttpResponse(200, certificate.encode("ascii"), {"Content-Type": "application/x-pem-file"})
