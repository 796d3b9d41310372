"""What the XML data plane (MNS 2015-06-06) adds to `requests` and `responses` to serve a message call
(`mnsd.calls.planes`): the body parsed, its root element checked, an element answered."""

from __future__ import annotations

from mnsd.ground import errors
from mnsd.ground.http import HttpResponse
from mnsd.wire import codec


def xml_response(root: codec.Node, status: int = 200) -> HttpResponse:
    return HttpResponse(status, codec.encode(root), {"Content-Type": "text/xml;charset=utf-8"})


def parsed_body(body: bytes) -> codec.Element:
    """A request body, parsed (an empty one is malformed)."""
    if not body.strip():
        raise errors.MalformedXML()
    return codec.parse(body)


def root(body: codec.Element, expected: tuple[str, ...]) -> str:
    """The body's root element, which must be one the operation defines (the spec's schema)."""
    if body.tag not in expected:
        raise errors.InvalidArgument(
            f"The XML you provided did not validate against our published schema, cause by Element {body.tag}."
        )
    return body.tag
