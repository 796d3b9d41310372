"""The console's files, answered the same way by the local runtime and by the console's Lambda function.

Only GET /console, /console/ and the files under `static/` are served; they carry no data (every call the
console makes is an MNS request signed in the browser), so no signature is asked for them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

STATIC = Path(__file__).resolve().parent / "static"
PREFIX = "/console"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
# Scripts, styles and calls from this origin only; no framing, no referrer leaving the page.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_RELATIVE = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.-]*/)*[A-Za-z0-9_][A-Za-z0-9_.-]*")

Response = dict[str, Any]  # the HTTP API (payload 2.0) response shape: statusCode, headers, body


def _text(status: int, body: str, headers: dict[str, str] | None = None) -> Response:
    return {
        "statusCode": status,
        "headers": {"Content-Type": "text/plain; charset=utf-8", **SECURITY_HEADERS, **(headers or {})},
        "body": body,
    }


def static_response(path: str) -> Response | None:
    """The answer to `GET path` when the path is the console's, else None (not ours: the API answers)."""
    path = path.partition("?")[0]
    if path == PREFIX:  # relative URLs in the page need a path under /console/ (a redirect to /console/
        # itself could loop where a gateway hands "/console/" over as "/console")
        return _text(301, "", {"Location": PREFIX + "/index.html"})
    if not path.startswith(PREFIX + "/"):
        return None
    relative = path[len(PREFIX) + 1 :] or "index.html"
    file = STATIC / relative
    content_type = CONTENT_TYPES.get(file.suffix)
    if not _RELATIVE.fullmatch(relative) or ".." in relative or content_type is None or not file.is_file():
        return _text(404, "Not found")
    return {
        "statusCode": 200,
        "headers": {"Content-Type": content_type, **SECURITY_HEADERS},
        "body": file.read_text("utf-8"),
    }


def handler(event: dict[str, Any], context: object) -> Response:
    """The console function behind `GET /console`, `/console/` and `/console/{proxy+}`."""
    response = static_response(event.get("rawPath") or "/") or _text(404, "Not found")
    return {**response, "isBase64Encoded": False}
