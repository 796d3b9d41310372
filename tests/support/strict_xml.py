"""Error bodies read as strictly as the Java SDK reads them.

The Java SDK (2.0.0) unmarshals an error with JAXB into `ErrorMessage`, bound to the root element `Error` and its
fields `Code`, `Message`, `RequestId`, `HostId` (and `Method`) in the namespace `http://mns.aliyuncs.com/doc/v1`
(`MNSConstants.DEFAULT_XML_NAMESPACE`): a root of another name or namespace is no `ErrorMessage` at all (the SDK
throws "Failed to parse the response result"), and a field in another namespace is left null.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

JAVA_SDK_NAMESPACE = "http://mns.aliyuncs.com/doc/v1"
FIELDS = ("Code", "Message", "RequestId", "HostId")


class NotAnErrorMessage(Exception):
    """What JAXB's unmarshaller refuses."""


@dataclass(frozen=True)
class ErrorMessage:
    code: str
    message: str
    request_id: str
    host_id: str


def parse_error(body: bytes) -> ErrorMessage:
    """The error as JAXB binds it, with every field the SDK reports present and non-empty."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError as error:
        raise NotAnErrorMessage(f"not XML: {error}") from error
    if root.tag != f"{{{JAVA_SDK_NAMESPACE}}}Error":
        raise NotAnErrorMessage(f"root element {root.tag}, not {{{JAVA_SDK_NAMESPACE}}}Error")
    values = {}
    for name in FIELDS:
        found = root.findall(f"{{{JAVA_SDK_NAMESPACE}}}{name}")
        if len(found) != 1 or not (found[0].text or "").strip():
            raise NotAnErrorMessage(f"{name}: {len(found)} elements in the namespace, text {found[:1]}")
        values[name] = found[0].text or ""
    return ErrorMessage(values["Code"], values["Message"], values["RequestId"], values["HostId"])
