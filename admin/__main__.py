"""python -m admin: access keys and policies of a deployed stack or of the local runtime, and the calls made with a
key against an endpoint (resource policies, queues' receivers, tokens, what is monitored and alarmed on AWS). `python -m admin --help` lists the commands."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from admin.keys import AdminError, KeyBook, KeyList, KeysFile, SecretKeys, read_policy
from mnsclient.errors import ServiceError
from mnsclient.resources import Credentials, ReceiverSettings, ResourceClient
from mnsclient.signing import Key
from mnsd.access.keys import KEY_CACHE_SECONDS, KEYS_FILE_CHECK_SECONDS, AccessKey, parse_keys
from mnsd.ground.errors import MnsError
from mnsd.ground.settings import (
    ACCESS_KEY_ID,
    ACCESS_KEY_SECRET,
    CREDENTIALS_SECRET_ARN,
    KEYS_FILE,
    credentials_from_env,
)
from mnsd.model.alarms import QueueAlarms

ENDPOINT = "MNS_ENDPOINT"
BOUND = f"within {KEY_CACHE_SECONDS:.0f} s on AWS, {KEYS_FILE_CHECK_SECONDS:.0f} s locally"
KEY_COMMANDS = ("create-account", "create-key", "list-keys", "rotate-key", "revoke-key", "set-policy")
MONITORING_COMMANDS = ("set-queue-metrics", "set-topic-metrics", "set-queue-alarms", "show-queue-monitoring")


def _key_commands(commands: Any) -> None:
    commands.add_parser("create-account", help="a new account with its first access key, a root key")
    create_key = commands.add_parser("create-key", help="another access key for an account")
    create_key.add_argument("account_id")
    create_key.add_argument("--policy", metavar="FILE", help="a RAM policy limiting the key (else a root key)")
    commands.add_parser("list-keys", help="accounts, key ids, and root or the key's policy (never the secrets)")
    rotate = commands.add_parser(
        "rotate-key", help=f"a new secret for a key, printed once; the old secret stops working {BOUND}"
    )
    rotate.add_argument("key_id")
    revoke = commands.add_parser("revoke-key", help=f"remove an access key (refused {BOUND})")
    revoke.add_argument("key_id")
    set_policy = commands.add_parser(
        "set-policy", help=f"attach or replace a key's policy, or make it a root key again (in effect {BOUND})"
    )
    set_policy.add_argument("key_id")
    choice = set_policy.add_mutually_exclusive_group(required=True)
    choice.add_argument("policy_file", nargs="?", metavar="FILE", help="the RAM policy (JSON)")
    choice.add_argument("--root", action="store_true", help="remove the policy: a root key of its account")


def _api_commands(commands: Any, environ: Mapping[str, str]) -> None:
    api = argparse.ArgumentParser(add_help=False)
    group = api.add_argument_group("endpoint and key")
    group.add_argument("--endpoint", default=environ.get(ENDPOINT), help=f"the MNS endpoint (default: ${ENDPOINT})")
    group.add_argument("--access-key-id", default=environ.get(ACCESS_KEY_ID), help=f"(default: ${ACCESS_KEY_ID})")
    group.add_argument(
        "--access-key-secret", default=environ.get(ACCESS_KEY_SECRET), help=f"(default: ${ACCESS_KEY_SECRET})"
    )
    token = commands.add_parser(
        "issue-token", parents=[api], help="temporary credentials of the key's account (a security token)"
    )
    token.add_argument("--duration", type=int, metavar="SECONDS", help="how long they last (the service's default)")
    token.add_argument("--policy", metavar="FILE", help="a RAM policy narrowing what the token may do")
    for kind in ("queue", "topic"):
        setter = commands.add_parser(
            f"set-{kind}-policy", parents=[api], help=f"set or remove the {kind}'s resource policy (other accounts)"
        )
        setter.add_argument("name", metavar=kind.upper())
        choice = setter.add_mutually_exclusive_group(required=True)
        choice.add_argument("policy_file", nargs="?", metavar="FILE", help="the resource policy (JSON, with Principal)")
        choice.add_argument("--none", action="store_true", help="remove the policy")
        shower = commands.add_parser(f"show-{kind}-policy", parents=[api], help=f"the {kind}'s resource policy")
        shower.add_argument("name", metavar=kind.upper())
    _receiver_commands(commands, api)
    _monitoring_commands(commands, api)


METRICS_CHOICES = {"on": "True", "off": "False", "default": ""}


def _monitoring_commands(commands: Any, api: argparse.ArgumentParser) -> None:
    for kind in ("queue", "topic"):
        metrics = commands.add_parser(
            f"set-{kind}-metrics",
            parents=[api],
            help=f"whether the {kind}'s CloudWatch metrics are published on AWS (MetricsEnabled; default: the stack's)",
        )
        metrics.add_argument("name", metavar=kind.upper())
        metrics.add_argument("choice", choices=sorted(METRICS_CHOICES), help="on, off, or the stack's default")
    alarms = commands.add_parser(
        "set-queue-alarms",
        parents=[api],
        help="the CloudWatch alarms of a queue on AWS (its Alarms attribute; the stack's sampler makes them)",
    )
    alarms.add_argument("name", metavar="QUEUE")
    alarms.add_argument("--oldest-message-age", type=int, metavar="SECONDS", help="alarm when the oldest is this old")
    alarms.add_argument("--visible-messages", type=int, metavar="N", help="alarm when this many are visible")
    alarms.add_argument(
        "--dead-letters", action="store_true", help="alarm when a message reaches the dead-letter queue"
    )
    alarms.add_argument("--minutes", type=int, metavar="N", help="for this many minutes running (default 5)")
    alarms.add_argument("--topic-arn", metavar="ARN", help="the SNS topic notified (default: the stack's alarm topic)")
    alarms.add_argument("--none", action="store_true", help="remove the queue's alarms")
    shower = commands.add_parser(
        "show-queue-monitoring", parents=[api], help="whether a queue's metrics are published, and its alarms"
    )
    shower.add_argument("name", metavar="QUEUE")


def _receiver_commands(commands: Any, api: argparse.ArgumentParser) -> None:
    create = commands.add_parser(
        "create-receiver",
        parents=[api],
        help="a receiver of a queue: it gets every message sent to the queue, reached as the queue QUEUE.NAME",
    )
    create.add_argument("queue", metavar="QUEUE")
    create.add_argument("name", metavar="NAME")
    create.add_argument(
        "--start-time",
        type=int,
        metavar="SECONDS",
        help="also the queue's messages enqueued since then (Unix seconds, within its retention; default: now)",
    )
    create.add_argument("--visibility-timeout", type=int, metavar="SECONDS", help="its own (default: the queue's)")
    create.add_argument("--polling-wait-seconds", type=int, metavar="SECONDS", help="its own (default: the queue's)")
    create.add_argument("--dlq-target", metavar="QUEUE", help="its own dead-letter queue (default: the queue's)")
    create.add_argument("--max-receive-count", type=int, metavar="N", help="receives before a message goes there")
    lister = commands.add_parser("list-receivers", parents=[api], help="a queue's receivers, with their counts")
    lister.add_argument("queue", metavar="QUEUE")
    delete = commands.add_parser("delete-receiver", parents=[api], help="delete a receiver and its messages")
    delete.add_argument("queue", metavar="QUEUE")
    delete.add_argument("name", metavar="NAME")


def parser(environ: Mapping[str, str] = os.environ) -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog="python -m admin",
        description=(
            "Manage access keys and policies: of a deployed stack (its credentials secret) or of the local "
            "runtime (its keys file), and the policies of queues and topics and the receivers of queues through an "
            "endpoint. Changes to keys "
            f"take effect {BOUND}, without a restart."
        ),
    )
    where = cli.add_mutually_exclusive_group()
    where.add_argument(
        "--secret-arn",
        help=f"the deployed stack's CredentialsSecretArn output (default: ${CREDENTIALS_SECRET_ARN})",
    )
    where.add_argument(
        "--keys-file",
        metavar="PATH",
        help=f"the local runtime's keys file, created if missing (default: ${KEYS_FILE})",
    )
    cli.add_argument("--region", default=None, help="AWS region of the secret (default: the one its ARN names)")
    commands = cli.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _key_commands(commands)
    _api_commands(commands, environ)
    return cli


def region_of(arn: str) -> str | None:
    """`arn:aws:secretsmanager:<region>:<account>:secret:<name>` -> region (None for a bare secret name)."""
    parts = arn.split(":")
    return parts[3] if len(parts) > 3 and parts[0] == "arn" else None


def show_new(key: AccessKey) -> str:
    """A created or rotated key: the only time its secret is shown."""
    return f"AccountId={key.account_id}\nAccessKeyId={key.key_id}\nAccessKeySecret={key.secret}"


def show_key(key: AccessKey) -> str:
    if key.policy is None:
        return f"{key.account_id} {key.key_id} root"
    compact = json.dumps(json.loads(key.policy.document), separators=(",", ":"))
    return f"{key.account_id} {key.key_id} policy {compact}"


def show_credentials(credentials: Credentials) -> str:
    return "\n".join(
        (
            f"AccessKeyId={credentials.access_key_id}",
            f"AccessKeySecret={credentials.access_key_secret}",
            f"SecurityToken={credentials.security_token}",
            f"Expiration={credentials.expiration}",
        )
    )


def run_key_command(args: argparse.Namespace, book: KeyBook) -> str:
    if args.command == "create-account":
        return show_new(book.create_account())
    if args.command == "create-key":
        return show_new(book.create_key(args.account_id, read_policy(args.policy) if args.policy else None))
    if args.command == "rotate-key":
        return show_new(book.rotate_key(args.key_id))
    if args.command == "revoke-key":
        key = book.revoke_key(args.key_id)
        return f"revoked {key.key_id} of account {key.account_id}"
    if args.command == "set-policy":
        key = book.set_policy(args.key_id, None if args.root else read_policy(args.policy_file))
        return f"{key.key_id} of account {key.account_id}: " + ("a root key" if key.policy is None else "policy set")
    return "\n".join(show_key(key) for key in book.keys())


def show_receiver(entry: Mapping[str, str]) -> str:
    """One receiver of `list-receivers`: its address, start, attributes and counts."""
    dlq = entry.get("DlqPolicy")
    policy = json.loads(dlq) if dlq else None
    parts = [
        entry.get("Address", ""),
        f"start={entry.get('StartTime')}",
        f"visibility={entry.get('VisibilityTimeout')}",
        f"polling={entry.get('PollingWaitSeconds')}",
        f"dlq={policy['DeadLetterTargetQueue']}:{policy['MaxReceiveCount']}" if policy else "dlq=-",
        f"active={entry.get('ActiveMessages')}",
        f"inactive={entry.get('InactiveMessages')}",
        f"delayed={entry.get('DelayMessages')}",
    ]
    return " ".join(parts) + (" copying" if entry.get("CopyPending") == "True" else "")


def run_receiver_command(args: argparse.Namespace, client: ResourceClient) -> str:
    address = f"{args.queue}.{getattr(args, 'name', '')}"
    if args.command == "list-receivers":
        return "\n".join(show_receiver(entry) for entry in client.receivers(args.queue)) or f"queue {args.queue}: none"
    if args.command == "delete-receiver":
        client.delete_receiver(args.queue, args.name)
        return f"receiver {address}: deleted"
    if (args.dlq_target is None) != (args.max_receive_count is None):
        raise UsageError("give --dlq-target and --max-receive-count together")
    settings = ReceiverSettings(
        args.start_time, args.visibility_timeout, args.polling_wait_seconds, args.dlq_target, args.max_receive_count
    )
    created, copying = client.create_receiver(args.queue, args.name, settings)
    calls = 1
    while copying:  # a long copy of the queue's earlier messages goes on with each identical create
        _, copying = client.create_receiver(args.queue, args.name, settings)
        calls += 1
    copied = f", the queue's messages since {args.start_time} copied in {calls} calls" if args.start_time else ""
    return f"receiver {address}: " + ("created" if created else "already there") + copied


def alarms_text(args: argparse.Namespace) -> str:
    """The Alarms document the options ask for ("" removes the alarms); checked as the service checks it."""
    if args.none:
        return ""
    asked = {
        "OldestMessageAge": args.oldest_message_age,
        "VisibleMessages": args.visible_messages,
        "DeadLetters": True if args.dead_letters else None,
        "Minutes": args.minutes,
        "TopicArn": args.topic_arn,
    }
    document = json.dumps({key: value for key, value in asked.items() if value is not None})
    try:
        text = QueueAlarms.parse(document).document()
    except MnsError as error:
        raise UsageError(error.message) from None
    if not text:
        raise UsageError("give --oldest-message-age, --visible-messages or --dead-letters (or --none)")
    return text


def run_monitoring_command(args: argparse.Namespace, client: ResourceClient) -> str:
    if args.command == "show-queue-monitoring":
        found = client.attributes("queues", args.name)
        return f"queue {args.name}: metrics {found.get('MetricsEnabled', '?')}, alarms {found.get('Alarms') or 'none'}"
    if args.command == "set-queue-alarms":
        text = alarms_text(args)
        client.set_attributes("queues", args.name, [("Alarms", text)])
        return f"queue {args.name}: " + (f"alarms {text}" if text else "alarms removed")
    kind = "queues" if args.command == "set-queue-metrics" else "topics"
    client.set_attributes(kind, args.name, [("MetricsEnabled", METRICS_CHOICES[args.choice])])
    shown = client.attributes(kind, args.name).get("MetricsEnabled", "?")
    return f"{kind[:-1]} {args.name}: metrics {args.choice} (published: {shown})"


def run_api_command(args: argparse.Namespace, client: ResourceClient) -> str:
    if args.command in MONITORING_COMMANDS:
        return run_monitoring_command(args, client)
    if args.command == "issue-token":
        return show_credentials(client.issue_token(args.duration, read_policy(args.policy) if args.policy else None))
    if "receiver" in args.command:
        return run_receiver_command(args, client)
    kind = "queues" if "-queue-" in args.command else "topics"
    if args.command.startswith("show-"):
        return client.policy(kind, args.name) or f"{kind[:-1]} {args.name} has no policy"
    policy = None if args.none else read_policy(args.policy_file, resource_policy=True)
    client.set_policy(kind, args.name, policy)
    return f"{kind[:-1]} {args.name}: " + ("policy removed" if policy is None else "policy set")


def key_book(args: argparse.Namespace, environ: Mapping[str, str], secretsmanager: Any) -> KeyBook:
    """The key book over the key list chosen; locally the accounts of `MNS_CREDENTIALS` (as the environment
    gives them to `make run`, default 1000000000000001) exist too, so keys can be added to them."""
    keys = key_list(args, environ, secretsmanager)
    if not isinstance(keys, KeysFile):
        return KeyBook(keys)
    local = parse_keys(credentials_from_env(dict(environ))).values()
    return KeyBook(keys, {key.account_id for key in local})


def key_list(args: argparse.Namespace, environ: Mapping[str, str], secretsmanager: Any) -> KeyList:
    """The secret or the keys file the options name, else the one the environment names (not both)."""
    arn, path = args.secret_arn, args.keys_file
    if not arn and not path:
        arn, path = environ.get(CREDENTIALS_SECRET_ARN), environ.get(KEYS_FILE)
        if arn and path:
            raise UsageError(
                f"both ${CREDENTIALS_SECRET_ARN} and ${KEYS_FILE} are set: give --secret-arn or --keys-file"
            )
    if path:
        return KeysFile(path)
    if not arn:
        raise UsageError(
            f"give --secret-arn (the stack's CredentialsSecretArn output) or --keys-file, "
            f"or set {CREDENTIALS_SECRET_ARN} or {KEYS_FILE}"
        )
    if secretsmanager is None:
        import boto3

        secretsmanager = boto3.client("secretsmanager", region_name=args.region or region_of(arn))
    return SecretKeys(secretsmanager, arn)


def api_client(args: argparse.Namespace) -> ResourceClient:
    missing = [
        option
        for option, value in (
            ("--endpoint", args.endpoint),
            ("--access-key-id", args.access_key_id),
            ("--access-key-secret", args.access_key_secret),
        )
        if not value
    ]
    if missing:
        raise UsageError(f"give {', '.join(missing)} (or set {ENDPOINT}, {ACCESS_KEY_ID}, {ACCESS_KEY_SECRET})")
    return ResourceClient(args.endpoint, Key(args.access_key_id, args.access_key_secret))


class UsageError(Exception):
    """Options missing or contradicting each other (exit status 2, as argparse's own)."""


def execute(args: argparse.Namespace, environ: Mapping[str, str], secretsmanager: Any) -> str:
    if args.command in KEY_COMMANDS:
        return run_key_command(args, key_book(args, environ, secretsmanager))
    return run_api_command(args, api_client(args))


def main(
    argv: list[str] | None = None,
    secretsmanager: Any = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    environ = os.environ if environ is None else environ
    args = parser(environ).parse_args(argv)
    try:
        output = execute(args, environ, secretsmanager)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (AdminError, ServiceError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if output:
        print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
