"""The console's files as the local runtime and the console function answer them, and the local-only key."""

import json

import pytest

from console import handler
from console.assets import static_response
from local_runtime.console import CONFIG_PATH, console_responder
from mnsd.ground.settings import Settings


def test_the_page_and_its_modules_are_served_with_a_strict_policy() -> None:
    page = static_response("/console/")
    assert page["statusCode"] == 200 and page["headers"]["Content-Type"] == "text/html; charset=utf-8"
    assert '<script type="module" src="app.js">' in page["body"]
    policy = page["headers"]["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy
    module = static_response("/console/vendor/preact.mjs?v=1")
    assert module["statusCode"] == 200 and module["headers"]["Content-Type"] == "text/javascript; charset=utf-8"
    assert static_response("/console/index.html")["body"] == page["body"]


def test_console_without_slash_redirects_into_the_folder() -> None:
    response = static_response("/console")
    assert (response["statusCode"], response["headers"]["Location"]) == (301, "/console/index.html")


@pytest.mark.parametrize(
    "path",
    [
        "/console/../pyproject.toml",
        "/console/%2e%2e/assets.py",
        "/console/assets.py",  # not under static/, and not a served type
        "/console/vendor/VERSIONS",
        "/console/.hidden.js",
        "/console/missing.js",
        "/console//etc/passwd.js",
    ],
)
def test_nothing_else_is_served(path: str) -> None:
    response = static_response(path)
    assert response["statusCode"] == 404 and response["body"] == "Not found"


def test_other_paths_are_not_the_consoles() -> None:
    assert static_response("/queues") is None
    assert static_response("/consoles/x.js") is None


def test_the_function_answers_the_http_api_event() -> None:
    response = handler({"rawPath": "/console/app.js", "requestContext": {"http": {"method": "GET"}}}, None)
    assert response["statusCode"] == 200 and response["isBase64Encoded"] is False
    assert handler({"rawPath": "/console/nope.css"}, None)["statusCode"] == 404


SETTINGS = Settings(credentials="1000000000000009:KEYID:SECRET,2000000000000002:OTHER:OTHERSECRET", region="cn-test")


def test_the_local_runtime_offers_its_default_key_to_its_own_page() -> None:
    respond = console_responder(SETTINGS)
    response = respond("GET", CONFIG_PATH, {"host": "127.0.0.1:8080", "sec-fetch-site": "same-origin"})
    assert response["statusCode"] == 200 and response["headers"]["Cache-Control"] == "no-store"
    assert json.loads(response["body"]) == {
        "accessKeyId": "KEYID",
        "accessKeySecret": "SECRET",
        "accountId": "1000000000000009",
        "region": "cn-test",
    }
    assert respond("GET", CONFIG_PATH, {"host": "localhost:9000"})["statusCode"] == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"host": "evil.example:8080"},  # a rebound DNS name reaching 127.0.0.1
        {"host": "127.0.0.1.evil.example"},
        {"host": "127.0.0.1:8080", "sec-fetch-site": "cross-site"},  # another site's request
        {"host": "127.0.0.1:8080", "sec-fetch-site": "same-site"},
        {},
    ],
)
def test_the_default_key_is_refused_to_other_sites(headers: dict[str, str]) -> None:
    response = console_responder(SETTINGS)("GET", CONFIG_PATH, headers)
    assert response["statusCode"] == 404 and "SECRET" not in response["body"]


def test_the_deployed_console_has_no_key_to_offer() -> None:
    assert static_response(CONFIG_PATH)["statusCode"] == 404


def test_only_gets_are_the_consoles() -> None:
    respond = console_responder(SETTINGS)
    assert respond("PUT", "/console/index.html", {}) is None
    assert respond("GET", "/queues/q", {}) is None


def test_the_console_reads_answers_in_the_namespace_the_server_writes() -> None:
    """The console's client looks elements up by namespace (`getElementsByTagNameNS`): the wire's one constant."""
    from mnsd.wire.codec import XMLNS

    client = static_response("/console/mns.js")["body"]
    assert f'const NS = "{XMLNS}";' in client
