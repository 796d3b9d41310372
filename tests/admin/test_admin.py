"""The admin's key commands against both places keys are kept: a Secrets Manager secret (moto) and a local
keys file; and the functions' key cache reading the secret; and create-receiver going on with a long copy."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from admin.__main__ import main, parser, region_of, run_api_command
from mnsclient.resources import ReceiverSettings
from mnsd.access.keys import KEY_CACHE_SECONDS, NO_KEYS, AccessKey, KeysFileStore, StaticKeyStore, parse_keys
from mnsd.ground.settings import Settings
from mnsd.services import key_store
from tests.support.clocks import ManualClock

ONLY_SEND = {"Version": "1", "Statement": [{"Effect": "Allow", "Action": ["mns:SendMessage"], "Resource": ["*"]}]}
ONLY_LIST = {"Version": "1", "Statement": [{"Effect": "Allow", "Action": "mns:ListQueue", "Resource": "*"}]}


@pytest.fixture(autouse=True)
def no_key_list_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MNS_CREDENTIALS_SECRET_ARN", raising=False)
    monkeypatch.delenv("MNS_KEYS_FILE", raising=False)


@pytest.fixture
def aws(aws_credentials: None) -> Iterator[None]:
    with mock_aws():
        yield


@dataclass
class Keys:
    """One place keys are kept, and the admin command run against it."""

    options: list[str]
    secretsmanager: object | None
    read: Callable[[], str]  # the stored key list

    def admin(self, *args: str) -> int:
        return main([*self.options, *args], secretsmanager=self.secretsmanager)

    def stored(self) -> str:
        return self.read()

    def parsed(self) -> dict[str, AccessKey]:
        return parse_keys(self.stored())


def secret_keys(initial: str = NO_KEYS) -> Keys:
    """A fresh stack's credentials secret: the empty key list, as infra/secrets.py creates it."""
    client = boto3.client("secretsmanager")
    arn = client.create_secret(Name="mns-credentials", SecretString=initial)["ARN"]
    return Keys(["--secret-arn", arn], client, lambda: client.get_secret_value(SecretId=arn)["SecretString"])


def file_keys(path: Path) -> Keys:
    return Keys(["--keys-file", str(path)], None, lambda: path.read_text("utf-8"))


@pytest.fixture(params=["secret", "file"])
def keys(request: pytest.FixtureRequest, tmp_path: Path) -> Keys:
    if request.param == "file":
        return file_keys(tmp_path / "local" / "keys.json")  # its folder does not exist yet
    request.getfixturevalue("aws")
    return secret_keys()


@pytest.fixture
def policy_file(tmp_path: Path):
    def write(document: object, name: str = "policy.json") -> str:
        path = tmp_path / name
        path.write_text(document if isinstance(document, str) else json.dumps(document, indent=2))
        return str(path)

    return write


def created(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.strip().splitlines())


def new_account(keys: Keys, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    assert keys.admin("create-account") == 0
    return created(capsys.readouterr().out)


def test_create_account_stores_a_root_key_the_service_accepts(keys: Keys, capsys) -> None:
    new = new_account(keys, capsys)
    assert len(new["AccountId"]) == 16 and new["AccountId"].isdigit()
    key = StaticKeyStore(keys.stored()).lookup(new["AccessKeyId"])  # as the service reads the list
    assert key is not None and key.policy is None
    assert (key.account_id, key.secret) == (new["AccountId"], new["AccessKeySecret"])


def test_a_key_with_a_policy_is_listed_with_it_and_no_secret_is_ever_listed(keys: Keys, capsys, policy_file) -> None:
    root = new_account(keys, capsys)
    assert keys.admin("create-key", root["AccountId"], "--policy", policy_file(ONLY_SEND)) == 0
    limited = created(capsys.readouterr().out)
    assert limited["AccountId"] == root["AccountId"] and limited["AccessKeyId"] != root["AccessKeyId"]
    stored = keys.parsed()[limited["AccessKeyId"]]
    assert stored.policy is not None and json.loads(stored.policy.document) == ONLY_SEND

    assert keys.admin("list-keys") == 0
    listing = capsys.readouterr().out.splitlines()
    assert listing[0] == f"{root['AccountId']} {root['AccessKeyId']} root"
    account, key_id, kind, policy = listing[1].split(" ", 3)
    assert (account, key_id, kind, json.loads(policy)) == (
        root["AccountId"],
        limited["AccessKeyId"],
        "policy",
        ONLY_SEND,
    )
    assert root["AccessKeySecret"] not in "".join(listing) and limited["AccessKeySecret"] not in "".join(listing)


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("{not json", "not JSON"),
        ({"Version": "2", "Statement": []}, '"Version": "1"'),
        ({"Version": "1", "Statement": [{"Effect": "Maybe", "Action": "*", "Resource": "*"}]}, "Effect must be"),
        (  # a resource policy's shape: not a key's
            {"Version": "1", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*", "Principal": "*"}]},
            "Principal is only for resource policies",
        ),
    ],
)
def test_a_bad_policy_is_refused_with_what_is_wrong_and_nothing_changes(
    keys: Keys, capsys, policy_file, document, said
) -> None:
    root = new_account(keys, capsys)
    before = keys.stored()
    path = policy_file(document)
    assert keys.admin("create-key", root["AccountId"], "--policy", path) == 1
    assert keys.admin("set-policy", root["AccessKeyId"], path) == 1
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and all(e.startswith(f"error: the policy {path} is refused: ") for e in errors)
    assert said in errors[0]
    assert keys.stored() == before


def test_a_missing_policy_file_is_refused(keys: Keys, capsys, tmp_path) -> None:
    root = new_account(keys, capsys)
    assert keys.admin("set-policy", root["AccessKeyId"], str(tmp_path / "nowhere.json")) == 1
    assert "cannot read the policy" in capsys.readouterr().err


def test_set_policy_attaches_replaces_and_removes_a_keys_policy(keys: Keys, capsys, policy_file) -> None:
    root = new_account(keys, capsys)
    key_id = root["AccessKeyId"]
    assert keys.admin("set-policy", key_id, policy_file(ONLY_SEND)) == 0
    assert capsys.readouterr().out.strip() == f"{key_id} of account {root['AccountId']}: policy set"
    assert json.loads(keys.parsed()[key_id].policy.document) == ONLY_SEND  # type: ignore[union-attr]

    assert keys.admin("set-policy", key_id, policy_file(ONLY_LIST, "list.json")) == 0
    assert json.loads(keys.parsed()[key_id].policy.document) == ONLY_LIST  # type: ignore[union-attr]

    assert keys.admin("set-policy", key_id, "--root") == 0
    assert capsys.readouterr().out.strip().endswith(": a root key")
    assert keys.parsed()[key_id].policy is None
    assert keys.parsed()[key_id].secret == root["AccessKeySecret"]  # only the policy changed


def test_set_policy_takes_a_file_or_root_not_both_nor_neither(keys: Keys, capsys, policy_file) -> None:
    root = new_account(keys, capsys)
    for args in ([], [policy_file(ONLY_SEND), "--root"]):
        with pytest.raises(SystemExit) as exited:
            keys.admin("set-policy", root["AccessKeyId"], *args)
        assert exited.value.code == 2


def test_rotate_key_gives_the_key_a_new_secret_shown_once(keys: Keys, capsys, policy_file) -> None:
    root = new_account(keys, capsys)
    assert keys.admin("create-key", root["AccountId"], "--policy", policy_file(ONLY_SEND)) == 0
    limited = created(capsys.readouterr().out)

    assert keys.admin("rotate-key", limited["AccessKeyId"]) == 0
    rotated = created(capsys.readouterr().out)
    assert rotated["AccessKeyId"] == limited["AccessKeyId"] and rotated["AccountId"] == limited["AccountId"]
    assert rotated["AccessKeySecret"] != limited["AccessKeySecret"] and len(rotated["AccessKeySecret"]) == 32
    key = keys.parsed()[limited["AccessKeyId"]]
    assert key.secret == rotated["AccessKeySecret"] and limited["AccessKeySecret"] not in keys.stored()
    assert key.policy is not None and json.loads(key.policy.document) == ONLY_SEND  # the policy stays
    assert keys.parsed()[root["AccessKeyId"]].secret == root["AccessKeySecret"]  # the other key is untouched


def test_keys_are_revoked(keys: Keys, capsys) -> None:
    first = new_account(keys, capsys)
    assert keys.admin("create-key", first["AccountId"]) == 0
    second = created(capsys.readouterr().out)
    assert keys.admin("revoke-key", first["AccessKeyId"]) == 0
    assert capsys.readouterr().out.strip() == f"revoked {first['AccessKeyId']} of account {first['AccountId']}"
    assert list(keys.parsed()) == [second["AccessKeyId"]]
    assert keys.admin("revoke-key", second["AccessKeyId"]) == 0
    assert keys.parsed() == {}


def test_unknown_accounts_and_keys_are_refused_without_changing_anything(keys: Keys, capsys) -> None:
    root = new_account(keys, capsys)
    before = keys.stored()
    assert keys.admin("create-key", "1234567890123456") == 1
    for command in ("revoke-key", "rotate-key"):
        assert keys.admin(command, "NOSUCHKEY") == 1
    assert keys.admin("set-policy", "NOSUCHKEY", "--root") == 1
    errors = capsys.readouterr().err.splitlines()
    assert errors == ["error: no account 1234567890123456"] + ["error: no key NOSUCHKEY"] * 3
    assert keys.stored() == before
    assert root["AccessKeySecret"] in before  # (the list still holds the account's key)


def test_old_triples_are_read_and_the_document_is_written(aws, capsys) -> None:
    keys = secret_keys("1000000000000001:OLDKEY:OLDSECRET,2000000000000002:OTHER:OTHERSECRET")
    assert keys.admin("list-keys") == 0
    assert capsys.readouterr().out.splitlines() == ["1000000000000001 OLDKEY root", "2000000000000002 OTHER root"]
    assert keys.admin("create-key", "1000000000000001") == 0
    new = created(capsys.readouterr().out)
    document = json.loads(keys.stored())
    assert [entry["id"] for entry in document["keys"]] == ["OLDKEY", "OTHER", new["AccessKeyId"]]
    assert keys.parsed()["OLDKEY"] == AccessKey("1000000000000001", "OLDKEY", "OLDSECRET")


def test_the_keys_file_is_created_for_its_owner_only_and_read_by_the_local_server(tmp_path, capsys) -> None:
    path = tmp_path / "new" / "keys.json"
    keys = file_keys(path)
    assert keys.admin("list-keys") == 0 and capsys.readouterr().out == ""
    assert json.loads(path.read_text()) == {"keys": []}
    new = new_account(keys, capsys)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # still after the atomic replace
    assert KeysFileStore(str(path), lambda: 0.0).lookup(new["AccessKeyId"]) is not None
    assert [p.name for p in path.parent.iterdir()] == ["keys.json"]  # no temporary file left behind


def test_an_unreadable_keys_file_is_refused_and_left_alone(tmp_path, capsys) -> None:
    path = tmp_path / "keys.json"
    path.write_text('{"keys": [{"account": "1"}]}')
    assert file_keys(path).admin("create-account") == 1
    assert "the key list cannot be read" in capsys.readouterr().err
    assert path.read_text() == '{"keys": [{"account": "1"}]}'


def test_the_key_list_comes_from_the_options_else_the_environment(tmp_path, monkeypatch, capsys) -> None:
    assert main(["list-keys"]) == 2
    assert "CredentialsSecretArn" in capsys.readouterr().err

    path = tmp_path / "keys.json"
    monkeypatch.setenv("MNS_KEYS_FILE", str(path))
    assert main(["create-account"]) == 0
    assert created(capsys.readouterr().out)["AccessKeyId"] in path.read_text()

    monkeypatch.setenv("MNS_CREDENTIALS_SECRET_ARN", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:mns")
    before = path.read_text()
    assert main(["create-account"]) == 2  # which one? neither is guessed
    assert "give --secret-arn or --keys-file" in capsys.readouterr().err
    assert main(["--keys-file", str(path), "list-keys"]) == 0
    assert path.read_text() == before

    with pytest.raises(SystemExit) as exited:
        main(["--keys-file", str(path), "--secret-arn", "arn", "list-keys"])
    assert exited.value.code == 2


def test_a_revoked_key_stops_working_once_the_cache_expires_without_a_redeploy(aws, capsys) -> None:
    keys = secret_keys()
    key_id = new_account(keys, capsys)["AccessKeyId"]
    arn = keys.options[1]
    clock = ManualClock()
    store = key_store(Settings(credentials_secret_arn=arn), lambda name: keys.secretsmanager, clock)
    assert store.lookup(key_id) is not None

    assert keys.admin("revoke-key", key_id) == 0
    clock.sleep(KEY_CACHE_SECONDS - 1)
    assert store.lookup(key_id) is not None  # still cached
    clock.sleep(1)
    assert store.lookup(key_id) is None


def test_a_rotated_secret_replaces_the_old_one_once_the_cache_expires(aws, capsys) -> None:
    keys = secret_keys()
    old = new_account(keys, capsys)
    clock = ManualClock()
    store = key_store(Settings(credentials_secret_arn=keys.options[1]), lambda name: keys.secretsmanager, clock)
    assert store.lookup(old["AccessKeyId"]).secret == old["AccessKeySecret"]  # type: ignore[union-attr]
    assert keys.admin("rotate-key", old["AccessKeyId"]) == 0
    new = created(capsys.readouterr().out)
    clock.sleep(KEY_CACHE_SECONDS - 1)
    assert store.lookup(old["AccessKeyId"]).secret == old["AccessKeySecret"]  # type: ignore[union-attr]
    clock.sleep(1)
    assert store.lookup(old["AccessKeyId"]).secret == new["AccessKeySecret"]  # type: ignore[union-attr]


def test_a_key_created_after_the_functions_started_works_within_the_cache_time(aws, capsys) -> None:
    keys = secret_keys()
    clock = ManualClock()
    store = key_store(Settings(credentials_secret_arn=keys.options[1]), lambda name: keys.secretsmanager, clock)
    assert store.lookup("anything") is None  # a fresh stack: no key at all
    key_id = new_account(keys, capsys)["AccessKeyId"]
    clock.sleep(KEY_CACHE_SECONDS)
    assert store.lookup(key_id) is not None


def test_the_region_comes_from_the_secret_arn() -> None:
    assert region_of("arn:aws:secretsmanager:eu-west-1:123456789012:secret:mns-AbCdEf") == "eu-west-1"
    assert region_of("mns-credentials") is None


def test_locally_the_accounts_of_mns_credentials_take_keys_too(aws, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("MNS_CREDENTIALS", "3000000000000003:SERVERKEY:SERVERSECRET")
    local = file_keys(tmp_path / "keys.json")
    assert local.admin("create-key", "3000000000000003") == 0  # the server's account: not in the file
    assert created(capsys.readouterr().out)["AccountId"] == "3000000000000003"
    assert "SERVERSECRET" not in local.stored()  # the server's own keys stay where they are
    assert secret_keys().admin("create-key", "3000000000000003") == 1  # a deployed stack knows no such account


@dataclass
class CopyingClient:
    """CreateReceiver answers as the service gives them while a long copy of earlier messages goes on."""

    answers: list[tuple[bool, bool]]
    calls: list[tuple[str, str, ReceiverSettings]]

    def create_receiver(self, queue: str, name: str, settings: ReceiverSettings) -> tuple[bool, bool]:
        self.calls.append((queue, name, settings))
        return self.answers[len(self.calls) - 1]


def test_create_receiver_creates_again_while_the_queues_earlier_messages_are_still_being_copied() -> None:
    given = ["--start-time", "100", "--dlq-target", "dead", "--max-receive-count", "3"]
    args = parser({}).parse_args(["create-receiver", "q", "r", *given])
    client = CopyingClient([(True, True), (False, True), (False, False)], [])
    output = run_api_command(args, client)  # type: ignore[arg-type]
    assert output == "receiver q.r: created, the queue's messages since 100 copied in 3 calls"
    assert client.calls == [("q", "r", ReceiverSettings(100, None, None, "dead", 3))] * 3
