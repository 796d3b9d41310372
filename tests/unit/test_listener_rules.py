"""The route table as the load balancer's listener rules (`mnsd.request.listener`): every path of a route reaches
that route's rule, within ALB's limits, the message routes among the first 10 rules (the ones not billed)."""

import itertools
import re

import pytest

from mnsd.request.listener import fits, listener_rules, path_pattern, rule_for
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
