"""The migration tool's parts that need no server: credentials as Alibaba's tools take them, what a plan says the
target cannot hold or cannot change, how endpoints are compared, the progress shown on a terminal."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest

from migrate.credentials import openapi_endpoint_for, resolve_side
from migrate.errors import MigrationError
from migrate.estate import QUEUE, SUBSCRIPTION, TOPIC, Estate, Resource, endpoint_of, subscription_resource
from migrate.moving import QueueStats
from migrate.planning import CONFLICT, CREATE, NOT_CARRIED, TARGET_ONLY, UNCHANGED, UPDATE, make_plan
from migrate.progress import Progress
from migrate.rendering import as_json, human
from mnsclient.messages import Message, copy_xml

PROFILES = {
    "current": "prod",
    "profiles": [
        {
            "name": "prod",
            "mode": "AK",
            "access_key_id": "LTAIprod",
            "access_key_secret": "prod-secret",
            "region_id": "cn-shanghai",
        },
        {"name": "sts", "mode": "StsToken", "access_key_id": "STS.x", "access_key_secret": "s", "sts_token": "tok"},
        {"name": "role", "mode": "RamRoleArn", "access_key_id": "a", "access_key_secret": "b"},
    ],
}


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(PROFILES))
    return path


def test_the_aliyun_cli_current_profile_is_taken_when_no_key_is_in_the_environment(config):
    live = "https://1234567890.mns.cn-shanghai.aliyuncs.com"
    side = resolve_side("source", {"ALIBABA_CLOUD_ENDPOINT": live}, config_file=config)
    assert (side.access_key_id, side.access_key_secret, side.region) == ("LTAIprod", "prod-secret", "cn-shanghai")
    assert side.openapi_endpoint == "https://mns-open.cn-shanghai.aliyuncs.com"
    assert "prod-secret" not in repr(side)


def test_a_named_profile_of_mode_sts_token_carries_its_token(config):
    side = resolve_side("target", {}, endpoint="http://127.0.0.1:8080", profile="sts", config_file=config)
    assert (side.access_key_id, side.security_token) == ("STS.x", "tok")
    assert side.openapi_endpoint == "http://127.0.0.1:8080"  # any other server answers both APIs on one endpoint


def test_the_environment_comes_before_the_profile_file(config):
    env = {
        "MNS_ENDPOINT": "http://h:1",
        "MNS_ACCESS_KEY_ID": "K",
        "MNS_ACCESS_KEY_SECRET": "S",
        "MNS_SECURITY_TOKEN": "T",
    }
    side = resolve_side("target", env, config_file=config)
    assert (side.access_key_id, side.access_key_secret, side.security_token) == ("K", "S", "T")


@pytest.mark.parametrize(
    ("profile", "environ", "said"),
    [
        ("role", {}, "profile role of"),
        ("missing", {}, "no profile named missing"),
        (None, {"MNS_ACCESS_KEY_ID": "K"}, "no target access key: set MNS_ACCESS_KEY_ID and MNS_ACCESS_KEY_SECRET"),
    ],
)
def test_credentials_that_cannot_be_used_are_refused_saying_why(config, tmp_path, profile, environ, said):
    file = config if profile else tmp_path / "none.json"
    with pytest.raises(MigrationError, match=said) as refused:
        resolve_side("target", {"MNS_ENDPOINT": "http://h:1", **environ}, profile=profile, config_file=file)
    assert "secret" not in str(refused.value).replace("ACCESS_KEY_SECRET", "")


def test_a_live_endpoint_names_its_openapi_endpoint_and_others_answer_both_planes():
    assert (
        openapi_endpoint_for("https://1.mns.ap-southeast-1-internal.aliyuncs.com")
        == "https://mns-open.ap-southeast-1.aliyuncs.com"
    )
    assert openapi_endpoint_for("http://10.0.0.1:8080/") == "http://10.0.0.1:8080"


def test_queue_endpoints_are_compared_by_queue_name_whatever_account_and_region_wrote_them():
    assert endpoint_of("acs:mns:cn-hangzhou:1000:queues/orders") == "queue:orders"
    assert endpoint_of("acs:mns:us-west-1:2000:queues/orders") == "queue:orders"
    assert endpoint_of("mail:directmail:ops@example.com") == "email:ops@example.com"
    assert endpoint_of("sms:directsms:13800000000") == "alisms:13800000000"
    assert endpoint_of("https://hooks.example.com/mns") == "https://hooks.example.com/mns"


def test_a_bare_subscription_endpoint_is_read_in_full_and_one_in_full_is_not_read_again():
    full = {("t", "s-queue"): "acs:mns:cn-hangzhou:1000:queues/orders", ("t", "s-mail"): "mail:directmail:a@b.c"}
    asked: list[tuple[str, str]] = []

    def read(topic: str, name: str) -> str:
        asked.append((topic, name))
        return full[(topic, name)]

    def endpoint(name: str, given: str) -> str:
        return subscription_resource({"SubscriptionName": name, "Endpoint": given}, "t", read).settings["Endpoint"]

    assert endpoint("s-queue", "orders") == "queue:orders"
    assert endpoint("s-mail", "a@b.c") == "email:a@b.c"
    assert endpoint("s-http", "https://hooks.example.com/mns") == "https://hooks.example.com/mns"
    assert endpoint("s-sms", "sms:directsms:138") == "alisms:138"
    assert asked == [("t", "s-queue"), ("t", "s-mail")]


def queue(name: str, **settings: object) -> Resource:
    base = {"QueueType": "normal", "DelaySeconds": 0, "VisibilityTimeout": 30, "EnableSSE": False}
    return Resource(QUEUE, name, {**base, **settings}, {})


def estate(*resources: Resource) -> Estate:
    return Estate({r.key: r for r in resources})


def test_what_a_target_other_than_alibabas_cannot_hold_is_named_with_why():
    source = estate(
        queue("sealed", EnableSSE=True),
        Resource(TOPIC, "ordered", {"TopicType": "fifo", "EnableSSE": False}),
        Resource(SUBSCRIPTION, "ordered/s", {"Endpoint": "queue:sealed"}),
        Resource(TOPIC, "events", {"TopicType": "normal", "EnableSSE": False}),
        Resource(SUBSCRIPTION, "events/fc", {"Endpoint": "acs:fc:cn-hangzhou:1:services/s/functions/f"}),
    )
    plan = make_plan(source, estate(), "https://1.mns.cn-hangzhou.aliyuncs.com", "http://127.0.0.1:8080")
    by_name = {c.name: c for c in plan.changes}
    assert by_name["sealed"].action == CREATE and "EnableSSE" not in by_name["sealed"].wanted.settings
    ((setting, why),) = by_name["sealed"].not_carried
    assert setting == "EnableSSE" and "encrypts its tables as a whole" in why
    assert (by_name["ordered"].action, by_name["ordered"].reason) == (
        NOT_CARRIED,
        "FIFO topics are not offered by the target",
    )
    assert (by_name["ordered/s"].action, by_name["ordered/s"].reason) == (
        NOT_CARRIED,
        "its topic ordered is not carried",
    )
    assert by_name["events/fc"].action == NOT_CARRIED and "--map-endpoint OLD=NEW" in by_name["events/fc"].reason
    text = human(plan)
    assert "not carried: FIFO topics are not offered by the target" in text
    assert "EnableSSE not carried:" in text
    assert json.loads(as_json(plan))["summary"]["not-carried"] == 3


def test_alibabas_service_as_target_holds_everything():
    source = estate(queue("sealed", EnableSSE=True), Resource(TOPIC, "ordered", {"TopicType": "fifo"}))
    plan = make_plan(source, estate(), "http://127.0.0.1:8080", "https://1.mns.cn-hangzhou.aliyuncs.com")
    assert [c.action for c in plan.changes] == [CREATE, CREATE]


def test_a_setting_fixed_at_creation_is_a_conflict_others_are_changes_and_target_only_is_left_alone():
    source = estate(queue("a", QueueType="fifo"), queue("b", VisibilityTimeout=60), queue("c"))
    target = estate(queue("a"), queue("b"), queue("c"), queue("d"))
    plan = make_plan(source, target, "http://s", "http://t")
    actions = {c.name: c.action for c in plan.changes}
    assert actions == {"a": CONFLICT, "b": UPDATE, "c": UNCHANGED, "d": TARGET_ONLY}
    conflict = next(c for c in plan.changes if c.name == "a")
    assert "QueueType is 'normal' on the target and 'fifo' on the source" in conflict.reason
    assert plan.drift


def test_tags_added_changed_and_removed_make_an_update():
    source = estate(Resource(QUEUE, "q", {"QueueType": "normal"}, {"team": "a", "env": "prod"}))
    target = estate(Resource(QUEUE, "q", {"QueueType": "normal"}, {"team": "b", "old": "x"}))
    (change,) = make_plan(source, target, "http://s", "http://t").changes
    assert (change.action, change.tags_added, change.tags_removed) == (UPDATE, {"team": "a", "env": "prod"}, ["old"])


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_per_queue_redrawn_in_place_and_a_pipe_one_line_per_queue_done():
    moving, done = QueueStats("orders", waiting_at_start=100, moved=50), QueueStats("audit", 10, 10, finished=True)
    terminal, pipe = Terminal(), io.StringIO()
    shown = Progress(terminal, [moving, done])
    shown.draw()
    shown.draw()
    assert "[############............] 50/100 moving" in terminal.getvalue()
    assert "\x1b[2F" in terminal.getvalue()  # the second drawing went back up over the first
    Progress(pipe, [moving, done]).draw()
    assert pipe.getvalue() == f"{'audit':32} [########################] 10/10 done\n"


def test_a_copy_is_written_so_an_xml_reader_gets_its_body_back_exactly():
    """A carriage return is written as a reference (raw, an XML reader would read a newline); a FIFO copy carries its
    group and neither delay nor priority (a FIFO queue refuses them); another copy is sent with no delay left."""
    fifo = copy_xml(Message("id", "h", "a\r\nb <&>", priority=3, group="g1"))
    assert (
        fifo
        == "<Message><MessageBody>a&#13;\nb &lt;&amp;&gt;</MessageBody><MessageGroupId>g1</MessageGroupId></Message>"
    )
    assert ET.fromstring(fifo).findtext("MessageBody") == "a\r\nb <&>"
    plain = copy_xml(Message("id", "h", "x", priority=3))
    assert (
        plain == "<Message><MessageBody>x</MessageBody><DelaySeconds>0</DelaySeconds><Priority>3</Priority></Message>"
    )
