"""The console on the local runtime: its files, and the default key offered to the page.

The default key is handed out only here (the deployed console has no `config.json`), only to a page
loaded from a loopback host name (a page of another site reaching 127.0.0.1 through DNS rebinding
names its own host) and never to another site's request. It is the key `make run` prints at start.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from console.assets import PREFIX, SECURITY_HEADERS, Response, static_response
from mnsd.access.keys import StaticKeyStore
from mnsd.ground.settings import Settings

CONFIG_PATH = PREFIX + "/config.json"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")

Responder = Callable[[str, str, dict[str, str]], Response | None]


def _loopback(host: str) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name.lower() in LOOPBACK_HOSTS


def console_responder(settings: Settings) -> Responder:
    """`(method, path, headers) -> response`, or None when the request is not the console's."""
    key = StaticKeyStore(settings.credentials).default
    config = {
        "accessKeyId": key.key_id,
        "accessKeySecret": key.secret,
        "accountId": key.account_id,
        "region": settings.region,
    }

    def respond(method: str, path: str, headers: dict[str, str]) -> Response | None:
        if method != "GET":
            return None
        if path.partition("?")[0] != CONFIG_PATH:
            return static_response(path)
        same_site = headers.get("sec-fetch-site", "same-origin") == "same-origin"
        if not (_loopback(headers.get("host", "")) and same_site):
            return {"statusCode": 404, "headers": {"Content-Type": "text/plain", **SECURITY_HEADERS}, "body": ""}
        headers_out = {"Content-Type": "application/json", **SECURITY_HEADERS, "Cache-Control": "no-store"}
        return {"statusCode": 200, "headers": headers_out, "body": json.dumps(config)}

    return respond
