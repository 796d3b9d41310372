"""A function URL's event (the wait tier asks the receive function through its URL): path parameters from the
route's path, the client's host from X-Forwarded-Host; an HTTP API event is read as before."""

from mnsd.entry.lambda_handler import path_parameters, request_from_event, routed_request
from mnsd.waiting import contract

URL = "abc.lambda-url.us-east-1.on.aws"


def event(domain: str, **extra: object) -> dict:
    return {
        "rawPath": "/queues/q%2D1/messages",
        "rawQueryString": "waitseconds=20",
        "headers": {"Host": domain, "X-Forwarded-Host": "123.mns.example.com"},
        "requestContext": {"http": {"method": "GET"}, "domainName": domain, "timeEpoch": 1_800_000_000_000},
        **extra,
    }


def test_a_function_url_event_gets_the_routes_parameters_and_the_clients_host() -> None:
    request = request_from_event(event("abc.lambda-url.us-east-1.on.aws"), "/queues/{queue}/messages")
    assert request.path_params == {"queue": "q-1"}
    assert request.header("host") == "123.mns.example.com"
    assert request.received_at == 1_800_000_000


def test_an_http_api_event_is_read_as_it_comes() -> None:
    request = request_from_event(event("api.example.com", pathParameters={"queue": "q-1"}), "/queues/{queue}/messages")
    assert request.path_params == {"queue": "q-1"}
    assert request.header("host") == "api.example.com"  # X-Forwarded-Host is not trusted here


def test_path_parameters_match_the_template_segment_by_segment() -> None:
    assert path_parameters("/queues/{queue}/messages", "/queues/a/messages") == {"queue": "a"}
    assert path_parameters("/queues/{queue}/messages", "/queues/a/b/messages") == {}
    assert path_parameters("/queues/{queue}/messages", "/topics/a/messages") == {}


def url_event(method: str, path: str, domain: str = URL) -> dict:
    return {**event(domain), "rawPath": path, "requestContext": {"http": {"method": method}, "domainName": domain}}


def test_a_function_url_serves_its_routes_requests_and_the_tiers_batch_and_nothing_else_as_its_route() -> None:
    # The tier passes paths on as sent, and the load balancer's `*` takes more than a route's paths: what is not the
    # route's is served as the catch-all serves it (InvalidRequestURL), as the load balancer's door does.
    assert routed_request("post_messages", url_event("POST", "/queues/a/messages"))[0] == "post_messages"
    assert routed_request("post_messages", url_event("POST", contract.BATCH_PATH))[0] == "post_messages"
    assert routed_request("post_messages", url_event("POST", "/queues/a/b/messages"))[0] is None
    assert routed_request("post_messages", url_event("GET", "/queues/a/messages"))[0] is None
    assert routed_request("delete_messages", url_event("DELETE", "/queues//messages"))[0] is None
    assert routed_request("get_messages", url_event("GET", "/queues/a/receivers/messages"))[0] is None
    # (an HTTP API event is the route API Gateway matched)
    assert (
        routed_request("post_messages", url_event("GET", "/queues/a/b", domain="api.example.com"))[0] == "post_messages"
    )
