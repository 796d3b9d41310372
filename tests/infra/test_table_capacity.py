"""Provisioned capacity as a stack option (`-c capacity=provisioned`, infra/table_capacity.py): every table and the
ready index provisioned at their minimum with target-tracking auto-scaling of reads and writes, cdk-nag and cfn-lint
clean; without the flag (or with `capacity=onDemand`) the template is the on-demand one, and the flag changes
nothing but the tables' billing and the scaling it adds."""

import copy
import json
from pathlib import Path

import pytest
from aws_cdk.assertions import Template

from infra.lint import findings
from infra.table_capacity import Provisioned
from mnsd.storage.dynamodb.items import layout
from mnsd.storage.dynamodb.tables.oplog import MESSAGE_INDEX
from tests.support.stack import synthesized

CONTEXT = {
    "capacity": "provisioned",
    "capacityMaxWrite": "2000",
    "capacityMinRead": "10",
    "capacityTargetPercent": "60",
}
TABLES = 4
SCALABLE = "AWS::ApplicationAutoScaling::ScalableTarget"
POLICY = "AWS::ApplicationAutoScaling::ScalingPolicy"
TABLE = "AWS::DynamoDB::Table"


@pytest.fixture(scope="module")
def both() -> tuple[Template, Template, Path]:
    """(on demand, provisioned, the provisioned synth's cdk.out)."""
    provisioned = synthesized(**CONTEXT)
    return synthesized().template, provisioned.template, provisioned.outdir


def test_on_demand_is_the_default_and_the_flag_takes_two_values():
    def context_of(values: dict[str, str]):
        return values.get

    assert Provisioned.from_context(context_of({})) is None
    assert Provisioned.from_context(context_of({"capacity": "onDemand"})) is None
    assert Provisioned.from_context(context_of({"capacity": "on-demand"})) is None
    assert Provisioned.from_context(context_of({"capacity": "provisioned"})) == Provisioned()
    with pytest.raises(ValueError):
        Provisioned.from_context(context_of({"capacity": "reserved"}))
    with pytest.raises(ValueError):
        Provisioned.from_context(context_of({"capacity": "provisioned", "capacityMinWrite": "0"}))
    with pytest.raises(ValueError):
        Provisioned.from_context(
            context_of({"capacity": "provisioned", "capacityMinRead": "50", "capacityMaxRead": "9"})
        )


def test_with_provisioned_capacity_synth_passes_cdk_nag_and_cfn_lint(both: tuple[Template, Template, Path]) -> None:
    _, _, outdir = both  # (the synth itself fails on an unreviewed cdk-nag finding)
    assert findings(outdir / "Mns.template.json") == []


def test_every_table_and_index_are_provisioned_at_their_minimum(both) -> None:
    _, provisioned, _ = both
    tables = provisioned.find_resources(TABLE)
    assert len(tables) == TABLES
    minimum = {"ReadCapacityUnits": 10, "WriteCapacityUnits": Provisioned().min_write}  # (writes: the default)
    for table in tables.values():
        properties = table["Properties"]
        assert properties.get("BillingMode", "PROVISIONED") == "PROVISIONED"
        assert properties["ProvisionedThroughput"] == minimum
        for index in properties.get("GlobalSecondaryIndexes", []):
            assert index["IndexName"] in (layout.READY_INDEX, MESSAGE_INDEX)
            assert index["ProvisionedThroughput"] == minimum


def test_reads_and_writes_of_each_table_and_index_scale_by_target_tracking(both) -> None:
    _, provisioned, _ = both
    targets = provisioned.find_resources(SCALABLE)
    dimensions = sorted(t["Properties"]["ScalableDimension"] for t in targets.values())
    assert dimensions == sorted(
        [f"dynamodb:table:{kind}CapacityUnits" for kind in ("Read", "Write")] * TABLES
        + [f"dynamodb:index:{kind}CapacityUnits" for kind in ("Read", "Write")] * 2  # the ready and message indexes
    )
    for target in targets.values():
        properties = target["Properties"]
        writes = properties["ScalableDimension"].endswith("WriteCapacityUnits")
        expected = (Provisioned().min_write, 2000) if writes else (10, 4000)
        assert (properties["MinCapacity"], properties["MaxCapacity"]) == expected
    policies = provisioned.find_resources(POLICY)
    assert len(policies) == len(targets)
    for policy in policies.values():
        tracking = policy["Properties"]["TargetTrackingScalingPolicyConfiguration"]
        assert policy["Properties"]["PolicyType"] == "TargetTrackingScaling" and tracking["TargetValue"] == 60
        metric = tracking["PredefinedMetricSpecification"]["PredefinedMetricType"]
        assert metric in ("DynamoDBReadCapacityUtilization", "DynamoDBWriteCapacityUtilization")


def test_without_bounds_every_table_and_index_keeps_one_unit_each_way_at_least() -> None:
    """The default minimum is 1 unit of reads and 1 of writes (it was 5): what an unused table or index costs, $0.57
    a month rather than $2.85 (an estate of queues leaves the topic message table, the log table and its index, and
    the ready index of quiet queues at their minimum)."""
    template = synthesized(capacity="provisioned").template
    tables = template.find_resources(TABLE)
    assert len(tables) == TABLES
    for table in tables.values():
        properties = table["Properties"]
        throughputs = [properties["ProvisionedThroughput"]]
        throughputs += [index["ProvisionedThroughput"] for index in properties.get("GlobalSecondaryIndexes", [])]
        assert throughputs and all(t == {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1} for t in throughputs)
    targets = template.find_resources(SCALABLE)
    assert len(targets) == 2 * (TABLES + 2)
    assert {(t["Properties"]["MinCapacity"], t["Properties"]["MaxCapacity"]) for t in targets.values()} == {(1, 4000)}


def _without_billing(resources: dict) -> dict:
    """The resources with the tables' billing (mode, throughput, the index's throughput) taken out."""
    stripped = copy.deepcopy(resources)
    for resource in stripped.values():
        if resource["Type"] != TABLE:
            continue
        properties = resource["Properties"]
        properties.pop("BillingMode", None)
        properties.pop("ProvisionedThroughput", None)
        for index in properties.get("GlobalSecondaryIndexes", []):
            index.pop("ProvisionedThroughput", None)
    return stripped


def test_the_flag_changes_only_the_tables_billing_and_adds_their_scaling(both) -> None:
    on_demand, provisioned, _ = both
    before, after = on_demand.to_json()["Resources"], provisioned.to_json()["Resources"]
    assert not on_demand.find_resources(SCALABLE) and not on_demand.find_resources(POLICY)
    for table in on_demand.find_resources(TABLE).values():
        assert table["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
        assert "ProvisionedThroughput" not in json.dumps(table)
    added = {name: r for name, r in after.items() if name not in before}
    assert {r["Type"] for r in added.values()} == {SCALABLE, POLICY}
    assert set(before) <= set(after)
    kept = {name: r for name, r in after.items() if name in before}
    assert _without_billing(kept) == _without_billing(before)
