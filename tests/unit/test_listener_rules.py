"""The route table as the load balancer's listener rules (`mnsd.request.listener`): every path of a route reaches
that route's rule, within ALB's limits, the message routes among the first 10 rules (the ones not billed)."""

import itertools
import re

import pytest

from mnsd.request.listener import fits, listener_rules, path_pattern, pattern_matches, rule_for
from mnsd.request.routes import ROUTES

# Names a queue, topic, receiver or subscription may have that are also literal segments of other routes.
NAMES = ["q", "messages", "receivers", "subscriptions", "queues", "topics", "m.1-2_3"]
MAX_RULES_PER_LISTENER = 100
MAX_WILDCARDS_PER_RULE = 5
FREE_RULE_EVALUATIONS = 10


def sample_paths(route_path: str) -> list[str]:
    slots = re.findall(r"\{\w+\}", route_path)
    paths = []
    for names in itertools.product(NAMES, repeat=len(slots)):
        path = route_path
        for name in names:
            path = re.sub(r"\{\w+\}", name, path, count=1)
        paths.append(path)
    return paths


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_every_path_of_a_route_reaches_its_rule_first(name) -> None:
    route = ROUTES[name]
    for path in sample_paths(route.path):
        rule = rule_for(route.method, path)
        assert rule is not None and rule.route == name, (path, rule)
        assert fits(route.path, path)


def test_the_rules_are_within_albs_limits_and_the_message_routes_are_unbilled() -> None:
    rules = listener_rules()
    assert len(rules) == len(ROUTES) <= MAX_RULES_PER_LISTENER
    assert [rule.priority for rule in rules] == list(range(1, len(rules) + 1))
    assert all(rule.path_pattern.count("*") <= MAX_WILDCARDS_PER_RULE for rule in rules)
    messages = {"post_messages", "get_messages", "delete_messages", "put_messages"}
    assert {rule.route for rule in rules[:FREE_RULE_EVALUATIONS]} >= messages


@pytest.mark.parametrize(
    ("route_path", "path", "expected"),
    [
        ("/queues/{queue}/messages", "/queues/q/messages", True),
        ("/queues/{queue}/messages", "/queues/a/b/messages", False),
        ("/queues/{queue}/messages", "/queues//messages", False),
        ("/queues/{queue}/messages", "/queues/q/messages/", False),
        ("/queues/{queue}", "/queues/..", True),  # a name like any other to the route; the names' rules refuse it
        ("/", "/", True),
        ("/", "//", False),
    ],
)
def test_a_path_fits_a_route_as_api_gateway_matches_it(route_path, path, expected) -> None:
    assert fits(route_path, path) is expected


def test_alb_wildcards_take_more_than_the_route() -> None:
    assert path_pattern("/topics/{topic}/subscriptions/{subscription}") == "/topics/*/subscriptions/*"
    rule = rule_for("GET", "/queues/a/b/messages")
    assert (
        rule is not None
        and rule.route == "get_messages"
        and not fits(ROUTES["get_messages"].path, "/queues/a/b/messages")
    )
    assert rule_for("PATCH", "/queues/q") is None
    assert rule_for("GET", "/Queues") is None  # case-sensitive, as API Gateway


def first_rule_in_the_safe_order(method: str, path: str) -> str | None:
    """The route the rules in their safe order (more segments first, queues before the rest: the order before the
    message routes were moved up) send a request to."""

    def order(route):
        segments = route.path.count("/")
        return (0 if route.path.startswith("/queues/{queue}") and segments >= 3 else 1), -segments, route.path

    for route in sorted(ROUTES.values(), key=order):
        if route.method == method and pattern_matches(path_pattern(route.path), path):
            return route.name
    return None


ODD_PATHS = ["/queues/a/b/messages", "/queues/q/messages/", "/queues//messages", "/queues/q/x/y/history", "/", "//"]


def test_every_request_goes_to_the_rule_it_went_to_before_the_message_routes_moved_up() -> None:
    methods = sorted({route.method for route in ROUTES.values()} | {"PATCH"})
    paths = [path for route in ROUTES.values() for path in sample_paths(route.path)] + ODD_PATHS
    for method, path in itertools.product(methods, paths):
        rule = rule_for(method, path)
        assert (rule.route if rule else None) == first_rule_in_the_safe_order(method, path), (method, path)


# The message routes (send, delete, receive, ChangeMessageVisibility; single and batch forms share each route) and the
# rules each must follow: a rule its pattern would take requests of, and so on.
MUST_FOLLOW = {
    "post_messages": [],
    "delete_messages": ["delete_receiver"],
    "get_messages": ["get_queue_message_history", "get_receiver"],
    "put_messages": ["put_receiver"],
}


def test_the_message_routes_come_first_each_after_only_the_rules_it_would_take_requests_of() -> None:
    expected = [name for route, follows in MUST_FOLLOW.items() for name in (*follows, route)]
    assert [rule.route for rule in listener_rules()][: len(expected)] == expected
    # a request stops at the first rule that matches: a send goes through 1 rule, a delete 3, a receive 6
    assert [rule_for(ROUTES[name].method, "/queues/q/messages").priority for name in MUST_FOLLOW] == [1, 3, 6, 8]
    for route, follows in MUST_FOLLOW.items():
        assert ROUTES[route].path == "/queues/{queue}/messages"
        chain = [*follows, route]
        for earlier, later in itertools.pairwise(chain):
            pattern = path_pattern(ROUTES[later].path)
            assert any(pattern_matches(pattern, p) for p in sample_paths(ROUTES[earlier].path)), (later, earlier)
