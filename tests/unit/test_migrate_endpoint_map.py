"""`python -m migrate --map-endpoint OLD=NEW`: Alibaba Cloud functions and buses (`acs:fc:...`, `acs:eventbridge:...`)
carried to the Lambda functions and EventBridge buses the user names; any left unmapped listed as not carried, saying
how to carry it."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from migrate.applying import Applier
from migrate.cli import USAGE, endpoint_map, main
from migrate.errors import MigrationError
from migrate.estate import SUBSCRIPTION, TOPIC, Estate, Resource
from migrate.planning import CREATE, NOT_CARRIED, UNCHANGED, make_plan
from migrate.rendering import as_json

FC = "acs:fc:cn-hangzhou:1:services/orders/functions/on-order"
BUS = "acs:eventbridge:cn-hangzhou:1:eventbus/orders"
LAMBDA = "arn:aws:lambda:us-east-1:123456789012:function:on-order"
EVENT_BUS = "arn:aws:events:us-east-1:123456789012:event-bus/orders"
SOURCE, TARGET = "https://1.mns.cn-hangzhou.aliyuncs.com", "http://127.0.0.1:8080"


def subscription(name: str, endpoint: str) -> Resource:
    settings = {
        "Endpoint": endpoint,
        "FilterTag": "",
        "NotifyStrategy": "BACKOFF_RETRY",
        "NotifyContentFormat": "JSON",
        "DlqPolicy": None,
    }
    return Resource(SUBSCRIPTION, f"events/{name}", settings)


def estate(*resources: Resource) -> Estate:
    return Estate({r.key: r for r in resources})


TOPIC_EVENTS = Resource(TOPIC, "events", {"TopicType": "normal", "EnableSSE": False})
SOURCE_ESTATE = estate(TOPIC_EVENTS, subscription("fc", FC), subscription("bus", BUS), subscription("left", FC + "2"))


def test_mapped_functions_and_buses_are_created_with_their_new_endpoint_and_the_rest_named_not_carried():
    plan = make_plan(SOURCE_ESTATE, estate(), SOURCE, TARGET, {FC: LAMBDA, BUS: EVENT_BUS})
    by_name = {c.name: c for c in plan.changes}
    assert by_name["events/fc"].action == CREATE and by_name["events/fc"].wanted.settings["Endpoint"] == LAMBDA
    assert by_name["events/bus"].action == CREATE and by_name["events/bus"].wanted.settings["Endpoint"] == EVENT_BUS
    left = by_name["events/left"]
    assert left.action == NOT_CARRIED and "--map-endpoint OLD=NEW" in left.reason and FC + "2" in left.reason
    assert json.loads(as_json(plan))["summary"]["not-carried"] == 1


def test_without_a_map_every_function_and_bus_is_listed_as_not_carried():
    plan = make_plan(SOURCE_ESTATE, estate(), SOURCE, TARGET)
    assert [c.action for c in plan.changes if c.kind == SUBSCRIPTION] == [NOT_CARRIED] * 3


def test_a_mapped_subscription_already_on_the_target_is_unchanged():
    target = estate(TOPIC_EVENTS, subscription("fc", LAMBDA))
    plan = make_plan(estate(TOPIC_EVENTS, subscription("fc", FC)), target, SOURCE, TARGET, {FC: LAMBDA})
    assert {c.name: c.action for c in plan.changes} == {"events": UNCHANGED, "events/fc": UNCHANGED}


def test_a_map_to_something_the_target_does_not_deliver_to_is_not_carried():
    plan = make_plan(estate(TOPIC_EVENTS, subscription("fc", FC)), estate(), SOURCE, TARGET, {FC: "acs:fc:x"})
    assert next(c for c in plan.changes if c.name == "events/fc").action == NOT_CARRIED


class RecordingApi:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, action: str, params: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((action, params))
        return {}


def test_apply_subscribes_a_lambda_function_as_fc_and_a_bus_as_eventbus_by_their_arns():
    plan = make_plan(
        estate(subscription("fc", FC), subscription("bus", BUS)),
        estate(),
        SOURCE,
        TARGET,
        {
            FC: LAMBDA,
            BUS: EVENT_BUS,
        },
    )
    api = RecordingApi()
    assert Applier(api, retry_seconds=0).apply(plan).ok  # type: ignore[arg-type]
    subscribed = {p["SubscriptionName"]: (p["PushType"], p["Endpoint"]) for a, p in api.calls if a == "Subscribe"}
    assert subscribed == {"fc": ("fc", LAMBDA), "bus": ("eventbus", EVENT_BUS)}


@pytest.mark.parametrize("given", [["no-equals"], ["=new"], ["old="], [f"{FC}={LAMBDA}", f"{FC}={EVENT_BUS}"]])
def test_a_malformed_map_is_a_usage_error_before_any_side_is_read(given):
    with pytest.raises(MigrationError):
        endpoint_map(given)
    err = io.StringIO()
    argv = ["plan", *(arg for pair in given for arg in ("--map-endpoint", pair))]
    assert main(argv, environ={}, out=io.StringIO(), err=err) == USAGE
    assert "--map-endpoint" in err.getvalue()


def test_the_same_pair_twice_is_one_mapping():
    assert endpoint_map([f"{FC}={LAMBDA}", f" {FC} = {LAMBDA} "]) == {FC: LAMBDA}
