"""The admin against a running local server: keys changed in its keys file accepted or refused within the
file's re-read bound, resource policies set and shown through the API, and ListAccessKeys as the console
calls it; a queue's receivers created, listed and deleted. (issue-token is tested against a fake responder in
test_admin_token.py.)"""

from __future__ import annotations

import http.client
import json
import os
import time
from collections.abc import Callable, Iterator
from email.utils import formatdate
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from mns.account import Account
from mns.mns_exception import MNSExceptionBase
from mns.queue import Message, QueueMeta
from mns.topic import TopicMeta

from admin.__main__ import main
from mnsclient.errors import ServiceError
from mnsclient.resources import ResourceClient
from mnsclient.signing import Key
from mnsd.access.authentication import sign, string_to_sign
from mnsd.access.keys import KEYS_FILE_CHECK_SECONDS
from mnsd.ground.http import HttpRequest
from mnsd.model.policy import grant_document
from mnsd.wire import codec
from tests.support.local_server import free_port, start_server, stop_server

OWNER = ("1000000000000001", "OWNERKEY", "OWNERSECRET")
OTHER = ("2000000000000002", "OTHERKEY", "OTHERSECRET")
REGION = "cn-hangzhou"
# The server looks at its keys file once a second; a request or two more on a busy 2-core machine.
BOUND = KEYS_FILE_CHECK_SECONDS + 1.5


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("keys") / "keys.json"  # created by the server at start


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory, keys_file: Path) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "MNS_PORT": str(port),
        "MNS_CREDENTIALS": ",".join(":".join(key) for key in (OWNER, OTHER)),
        "MNS_KEYS_FILE": str(keys_file),
        "MNS_REGION": REGION,
        "MNS_DATA_DIR": str(tmp_path_factory.mktemp("data")),
    }
    for name in ("MNS_ENGINE", "MNS_CREDENTIALS_SECRET_ARN"):
        env.pop(name, None)
    proc = start_server(env, port, tmp_path_factory.mktemp("server") / "server.log")
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


@pytest.fixture(autouse=True)
def local_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The admin's environment as `make run`'s: the server's MNS_CREDENTIALS (their accounts exist)."""
    monkeypatch.delenv("MNS_CREDENTIALS_SECRET_ARN", raising=False)
    monkeypatch.delenv("MNS_KEYS_FILE", raising=False)
    monkeypatch.setenv("MNS_CREDENTIALS", ",".join(":".join(key) for key in (OWNER, OTHER)))


def admin(keys_file: Path, *args: str) -> int:
    return main(["--keys-file", str(keys_file), *args])


def api(endpoint: str, key: tuple[str, ...], *args: str) -> int:
    """An API command of the admin, signed with `key` (account, id, secret)."""
    command, rest = args[0], args[1:]
    return main([command, "--endpoint", endpoint, "--access-key-id", key[1], "--access-key-secret", key[2], *rest])


def created(output: str) -> tuple[str, str, str]:
    new = dict(line.split("=", 1) for line in output.strip().splitlines())
    return new["AccountId"], new["AccessKeyId"], new["AccessKeySecret"]


def refusal(endpoint: str, key: tuple[str, ...]) -> str | None:
    """None when the key may list queues, else the MNS code of the refusal."""
    try:
        Account(endpoint, key[1], key[2]).list_queue()
    except MNSExceptionBase as error:
        return str(error.type)
    return None


def within(bound: float, check: Callable[[], bool], what: str) -> float:
    """Polls `check` until it holds; how long that took (failing past `bound`)."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < bound, f"{what}: not within {bound} s"
        time.sleep(0.05)
    return time.monotonic() - start


def policy_file(tmp_path: Path, document: dict[str, object], name: str = "policy.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def allow(*actions: str, resource: str = "*") -> dict[str, object]:
    return {"Version": "1", "Statement": [{"Effect": "Allow", "Action": list(actions), "Resource": [resource]}]}


def grant_other_account(queue_or_topic: str, action: str = "mns:SendMessage") -> dict[str, object]:
    return grant_document(OTHER[0], [action], [f"acs:mns:*:{OWNER[0]}:/{queue_or_topic}/*"])


def send_to_owners_queue(endpoint: str, queue: str) -> int:
    """OTHER sends to OWNER's queue, naming the owner in the host as MNS endpoints do; the HTTP status."""
    body = codec.encode(codec.Node("Message", [("MessageBody", "from the other account")]))
    date = formatdate(usegmt=True)
    headers = {"x-mns-version": "2015-06-06", "date": date, "content-type": "text/xml;charset=UTF-8"}
    signed = HttpRequest("POST", f"/queues/{queue}/messages", "", headers, body)
    headers["authorization"] = f"MNS {OTHER[1]}:{sign(OTHER[2], string_to_sign(signed, date))}"
    headers["host"] = f"{OWNER[0]}.mns.{REGION}.aliyuncs.com"
    address = urlsplit(endpoint)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    try:
        connection.request("POST", f"/queues/{queue}/messages", body, headers)
        return connection.getresponse().status
    finally:
        connection.close()


def make_queue(endpoint: str, name: str) -> None:
    Account(endpoint, OWNER[1], OWNER[2]).get_queue(name).create(QueueMeta())


# ---------------------------------------------------------------- keys in the keys file, seen by the server


def test_a_created_key_works_a_rotated_secret_replaces_the_old_and_a_revoked_key_is_refused_within_a_second(
    endpoint, keys_file, capsys
) -> None:
    assert admin(keys_file, "create-account") == 0
    new = created(capsys.readouterr().out)
    within(BOUND, lambda: refusal(endpoint, new) is None, "the new key accepted")

    assert admin(keys_file, "rotate-key", new[1]) == 0
    rotated = created(capsys.readouterr().out)
    assert rotated[:2] == new[:2] and rotated[2] != new[2]
    within(BOUND, lambda: refusal(endpoint, new) == "SignatureDoesNotMatch", "the old secret refused")
    assert refusal(endpoint, rotated) is None

    assert admin(keys_file, "revoke-key", new[1]) == 0
    within(BOUND, lambda: refusal(endpoint, rotated) == "InvalidAccessKeyId", "the revoked key refused")
    assert refusal(endpoint, OWNER) is None  # the other keys still work


def test_a_keys_policy_set_and_removed_in_the_file_is_enforced_within_a_second(
    endpoint, keys_file, capsys, tmp_path
) -> None:
    assert admin(keys_file, "create-account") == 0
    account_id, key_id, secret = created(capsys.readouterr().out)
    account = Account(endpoint, key_id, secret)
    within(BOUND, lambda: refusal(endpoint, (account_id, key_id, secret)) is None, "the new key accepted")

    assert admin(keys_file, "set-policy", key_id, policy_file(tmp_path, allow("mns:ListQueue"))) == 0

    def create_refused() -> bool:
        try:
            account.get_queue("made-by-limited-key").create(QueueMeta())
        except MNSExceptionBase as error:
            assert error.type == "AccessDenied" and "mns:CreateQueue" in error.message
            return True
        try:  # made before the policy was read
            account.get_queue("made-by-limited-key").delete()
        except MNSExceptionBase:
            pass  # refused: the policy was read in between (and refuses the next create first)
        return False

    within(BOUND, create_refused, "CreateQueue refused by the key's policy")
    assert refusal(endpoint, (account_id, key_id, secret)) is None  # ListQueue: allowed by it

    assert admin(keys_file, "set-policy", key_id, "--root") == 0
    within(BOUND, lambda: not create_refused(), "CreateQueue allowed to the root key again")


# ---------------------------------------------------------------- resource policies through the API


def test_set_queue_policy_is_returned_by_get_queue_attributes_and_grants_the_other_account(
    endpoint, capsys, tmp_path
) -> None:
    make_queue(endpoint, "shared-orders")
    assert send_to_owners_queue(endpoint, "shared-orders") == 403  # no policy: refused
    document = grant_other_account("queues")
    assert api(endpoint, OWNER, "set-queue-policy", "shared-orders", policy_file(tmp_path, document)) == 0
    assert capsys.readouterr().out.strip() == "queue shared-orders: policy set"

    answer = ResourceClient(endpoint, Key(OWNER[1], OWNER[2])).call(
        "GET", "/queues/shared-orders"
    )  # GetQueueAttributes
    assert answer is not None and json.loads(answer.value("Policy") or "") == document
    assert api(endpoint, OWNER, "show-queue-policy", "shared-orders") == 0
    assert json.loads(capsys.readouterr().out) == document
    assert send_to_owners_queue(endpoint, "shared-orders") == 201  # granted by it

    assert api(endpoint, OWNER, "set-queue-policy", "shared-orders", "--none") == 0
    assert api(endpoint, OWNER, "show-queue-policy", "shared-orders") == 0
    assert capsys.readouterr().out.splitlines() == [
        "queue shared-orders: policy removed",
        "queue shared-orders has no policy",
    ]
    assert send_to_owners_queue(endpoint, "shared-orders") == 403
    queue = Account(endpoint, OWNER[1], OWNER[2]).get_queue("shared-orders")
    queue.set_encoding(False)
    assert queue.receive_message().message_body == "from the other account"  # the one the grant let in


def test_set_topic_policy_is_shown_and_removed(endpoint, capsys, tmp_path) -> None:
    Account(endpoint, OWNER[1], OWNER[2]).get_topic("shared-news").create(TopicMeta())
    document = grant_other_account("topics", "mns:PublishMessage")
    assert api(endpoint, OWNER, "set-topic-policy", "shared-news", policy_file(tmp_path, document)) == 0
    assert api(endpoint, OWNER, "show-topic-policy", "shared-news") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "topic shared-news: policy set" and json.loads(out[1]) == document
    assert api(endpoint, OWNER, "set-topic-policy", "shared-news", "--none") == 0
    assert api(endpoint, OWNER, "show-topic-policy", "shared-news") == 0
    assert capsys.readouterr().out.splitlines()[-1] == "topic shared-news has no policy"


def test_a_resource_policy_without_principal_is_refused_before_any_call(endpoint, capsys, tmp_path) -> None:
    make_queue(endpoint, "unshared")
    path = policy_file(tmp_path, allow("mns:SendMessage"))
    assert api(endpoint, OWNER, "set-queue-policy", "unshared", path) == 1
    assert capsys.readouterr().err.strip() == f"error: the policy {path} is refused: Statement 1: Principal is required"
    assert ResourceClient(endpoint, Key(OWNER[1], OWNER[2])).policy("queues", "unshared") == ""


def test_refusals_are_printed_as_the_mns_code_and_message(endpoint, capsys, tmp_path) -> None:
    assert api(endpoint, OWNER, "show-queue-policy", "no-such-queue") == 1
    assert capsys.readouterr().err.startswith("error: QueueNotExist: The queue name you provided is not exist.")
    assert api(endpoint, (OWNER[0], OWNER[1], "wrong"), "show-queue-policy", "no-such-queue") == 1
    assert capsys.readouterr().err.startswith("error: SignatureDoesNotMatch: ")
    assert main(["show-queue-policy", "q", "--endpoint", endpoint]) == 2  # no key given
    assert "--access-key-id, --access-key-secret" in capsys.readouterr().err


def test_set_queue_policy_needs_set_queue_attributes_on_the_queue(endpoint, keys_file, capsys, tmp_path) -> None:
    make_queue(endpoint, "guarded")
    queue = f"acs:mns:{REGION}:{OWNER[0]}:/queues/guarded"
    keys = {}
    for name, actions in (("reader", ("mns:GetQueueAttributes",)), ("editor", ("mns:SetQueueAttributes",))):
        path = policy_file(tmp_path, allow(*actions, resource=queue), f"{name}.json")
        assert admin(keys_file, "create-key", OWNER[0], "--policy", path) == 0
        keys[name] = created(capsys.readouterr().out)
    document = policy_file(tmp_path, grant_other_account("queues"), "grant.json")

    reader, editor = keys["reader"], keys["editor"]
    within(BOUND, lambda: api(endpoint, reader, "show-queue-policy", "guarded") == 0, "the reader's key read")
    capsys.readouterr()
    assert api(endpoint, reader, "set-queue-policy", "guarded", document) == 1
    assert capsys.readouterr().err.startswith(
        f"error: AccessDenied: You are not authorized to do action mns:SetQueueAttributes on resource {queue}."
    )
    within(BOUND, lambda: api(endpoint, editor, "set-queue-policy", "guarded", document) == 0, "the editor's key read")
    capsys.readouterr()
    assert api(endpoint, reader, "show-queue-policy", "guarded") == 0
    assert "acs:ram::2000000000000002:root" in capsys.readouterr().out


# ---------------------------------------------------------------- ListAccessKeys (the console's Access view)


def access_keys(endpoint: str, key: tuple[str, ...]) -> list[dict[str, str]]:
    answer = ResourceClient(endpoint, Key(key[1], key[2])).call("GET", "/?accesskeys=true")
    assert answer is not None and answer.tag == "AccessKeys"
    return [{child.tag: child.text for child in entry.children} for entry in answer.all("AccessKey")]


def test_a_root_key_lists_its_accounts_keys_and_policies_never_the_secrets(
    endpoint, keys_file, capsys, tmp_path
) -> None:
    document = allow("mns:SendMessage", resource=f"acs:mns:*:{OWNER[0]}:/queues/orders/messages")
    assert admin(keys_file, "create-key", OWNER[0], "--policy", policy_file(tmp_path, document)) == 0
    _, limited_id, limited_secret = created(capsys.readouterr().out)

    def listed() -> list[dict[str, str]]:
        return access_keys(endpoint, OWNER)

    within(BOUND, lambda: limited_id in [k["AccessKeyId"] for k in listed()], "the new key listed")
    keys = {k["AccessKeyId"]: k for k in listed()}
    assert keys[OWNER[1]] == {"AccessKeyId": OWNER[1], "Root": "True"}
    assert keys[limited_id]["Root"] == "False" and json.loads(keys[limited_id]["Policy"]) == document
    assert OTHER[1] not in keys  # another account's key
    raw = ResourceClient(endpoint, Key(OWNER[1], OWNER[2])).call("GET", "/?accesskeys=true")
    assert OWNER[2] not in str(raw) and limited_secret not in str(raw)
    assert [k["AccessKeyId"] for k in access_keys(endpoint, OTHER)] == [OTHER[1]]


def test_only_a_root_key_may_list_keys_whatever_its_policy_allows(endpoint, keys_file, capsys, tmp_path) -> None:
    assert admin(keys_file, "create-key", OWNER[0], "--policy", policy_file(tmp_path, allow("mns:*"))) == 0
    everything = created(capsys.readouterr().out)
    within(BOUND, lambda: refusal(endpoint, everything) is None, "the key accepted")
    with pytest.raises(ServiceError) as refused:
        access_keys(endpoint, everything)
    assert (refused.value.status, refused.value.code) == (403, "AccessDenied")
    assert refused.value.message == (
        f"You are not authorized to do action mns:ListAccessKeys on resource acs:mns:{REGION}:{OWNER[0]}:/: "
        "only a root key of the account may list its keys."
    )


# ---------------------------------------------------------------- a queue's receivers


def test_receivers_are_created_listed_and_deleted_and_the_sdk_reaches_them_by_address(endpoint, capsys) -> None:
    make_queue(endpoint, "receiving")
    make_queue(endpoint, "receiving-dead")
    owner = Account(endpoint, OWNER[1], OWNER[2])
    sender = owner.get_queue("receiving")
    sender.set_encoding(False)
    sender.send_message(Message("before"))
    start = str(int(time.time()) - 5)
    assert api(endpoint, OWNER, "create-receiver", "receiving", "audit", "--visibility-timeout", "7") == 0
    dlq = ["--dlq-target", "receiving-dead", "--max-receive-count", "3"]
    assert api(endpoint, OWNER, "create-receiver", "receiving", "replay", "--start-time", start, *dlq) == 0
    assert api(endpoint, OWNER, "create-receiver", "receiving", "audit", "--visibility-timeout", "7") == 0
    assert capsys.readouterr().out.splitlines() == [
        "receiver receiving.audit: created",
        f"receiver receiving.replay: created, the queue's messages since {start} copied in 1 calls",
        "receiver receiving.audit: already there",
    ]
    sender.send_message(Message("after"))
    replay = owner.get_queue("receiving.replay")
    replay.set_encoding(False)
    assert sorted(m.message_body for m in replay.batch_receive_message(16, 1)) == ["after", "before"]

    listed = {e["ReceiverName"]: e for e in ResourceClient(endpoint, Key(OWNER[1], OWNER[2])).receivers("receiving")}
    assert api(endpoint, OWNER, "list-receivers", "receiving") == 0
    assert capsys.readouterr().out.splitlines() == [
        f"receiving.audit start={listed['audit']['StartTime']} visibility=7 polling=0 dlq=- active=1 inactive=0 "
        "delayed=0",
        f"receiving.replay start={start} visibility=30 polling=0 dlq=receiving-dead:3 active=0 inactive=2 delayed=0",
    ]
    assert api(endpoint, OWNER, "create-receiver", "receiving", "audit", "--visibility-timeout", "8") == 1
    assert capsys.readouterr().err.startswith("error: ReceiverAlreadyExist: ")
    assert api(endpoint, OWNER, "create-receiver", "receiving", "x", "--dlq-target", "dead") == 2
    assert "--dlq-target and --max-receive-count together" in capsys.readouterr().err

    assert api(endpoint, OWNER, "delete-receiver", "receiving", "audit") == 0
    assert api(endpoint, OWNER, "delete-receiver", "receiving", "replay") == 0
    assert api(endpoint, OWNER, "list-receivers", "receiving") == 0
    assert capsys.readouterr().out.splitlines() == [
        "receiver receiving.audit: deleted",
        "receiver receiving.replay: deleted",
        "queue receiving: none",
    ]
    with pytest.raises(MNSExceptionBase) as refused:
        replay.receive_message()
    assert refused.value.type == "ReceiverNotExist"


def test_what_is_monitored_and_alarmed_is_set_and_shown_through_the_api(endpoint, capsys) -> None:
    make_queue(endpoint, "watched")
    Account(endpoint, OWNER[1], OWNER[2]).get_topic("watched-news").create(TopicMeta())
    assert api(endpoint, OWNER, "show-queue-monitoring", "watched") == 0
    assert api(endpoint, OWNER, "set-queue-metrics", "watched", "off") == 0
    assert api(endpoint, OWNER, "set-queue-metrics", "watched", "default") == 0
    assert api(endpoint, OWNER, "set-topic-metrics", "watched-news", "off") == 0
    topic = "arn:aws:sns:us-east-1:123456789012:oncall"
    alarms = ["--oldest-message-age", "600", "--dead-letters", "--minutes", "3", "--topic-arn", topic]
    assert api(endpoint, OWNER, "set-queue-alarms", "watched", *alarms) == 0
    assert api(endpoint, OWNER, "show-queue-monitoring", "watched") == 0
    assert api(endpoint, OWNER, "set-queue-alarms", "watched", "--none") == 0
    asked = f'{{"OldestMessageAge":600,"DeadLetters":true,"Minutes":3,"TopicArn":"{topic}"}}'
    assert capsys.readouterr().out.splitlines() == [
        "queue watched: metrics True, alarms none",  # (the local server's default: every queue)
        "queue watched: metrics off (published: False)",
        "queue watched: metrics default (published: True)",
        "topic watched-news: metrics off (published: False)",
        f"queue watched: alarms {asked}",
        f"queue watched: metrics True, alarms {asked}",
        "queue watched: alarms removed",
    ]
    answer = ResourceClient(endpoint, Key(OWNER[1], OWNER[2])).attributes("queues", "watched")
    assert "Alarms" not in answer and answer["MetricsEnabled"] == "True"


def test_alarms_are_checked_before_any_call_and_refused_with_metrics_off(endpoint, capsys) -> None:
    make_queue(endpoint, "unwatched")
    assert api(endpoint, OWNER, "set-queue-alarms", "unwatched", "--minutes", "3") == 2
    assert api(endpoint, OWNER, "set-queue-alarms", "unwatched", "--visible-messages", "0") == 2
    assert "VisibleMessages should be a whole number" in capsys.readouterr().err
    assert api(endpoint, OWNER, "set-queue-metrics", "unwatched", "off") == 0
    assert api(endpoint, OWNER, "set-queue-alarms", "unwatched", "--dead-letters") == 1
    assert "InvalidArgument: A queue with Alarms publishes the metrics they read" in capsys.readouterr().err
