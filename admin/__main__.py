"""python -m admin [--secret-arn ARN] {create-account | create-key ACCOUNT | revoke-key KEYID | list-keys}"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from admin.keys import AdminError, KeyAdmin
from mnsd.accounts import AccessKey
from mnsd.settings import CREDENTIALS_SECRET_ARN


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(prog="python -m admin", description="Manage the access keys of a deployed stack.")
    cli.add_argument(
        "--secret-arn",
        default=os.environ.get(CREDENTIALS_SECRET_ARN),
        help=f"the stack's CredentialsSecretArn output (default: ${CREDENTIALS_SECRET_ARN})",
    )
    cli.add_argument("--region", default=None, help="AWS region of the secret (default: the one its ARN names)")
    commands = cli.add_subparsers(dest="command", required=True)
    commands.add_parser("create-account", help="a new account with its first access key")
    create_key = commands.add_parser("create-key", help="another access key for an account")
    create_key.add_argument("account_id")
    revoke_key = commands.add_parser("revoke-key", help="remove an access key (refused within a minute)")
    revoke_key.add_argument("key_id")
    commands.add_parser("list-keys", help="accounts and key ids (never the secrets)")
    return cli


def region_of(arn: str) -> str | None:
    """`arn:aws:secretsmanager:<region>:<account>:secret:<name>` -> region (None for a bare secret name)."""
    parts = arn.split(":")
    return parts[3] if len(parts) > 3 and parts[0] == "arn" else None


def show_new(key: AccessKey) -> str:
    return f"AccountId={key.account_id}\nAccessKeyId={key.key_id}\nAccessKeySecret={key.secret}"


def run(args: argparse.Namespace, admin: KeyAdmin) -> str:
    if args.command == "create-account":
        return show_new(admin.create_account())
    if args.command == "create-key":
        return show_new(admin.create_key(args.account_id))
    if args.command == "revoke-key":
        key = admin.revoke_key(args.key_id)
        return f"revoked {key.key_id} of account {key.account_id}"
    return "\n".join(f"{key.account_id} {key.key_id}" for key in admin.keys())


def main(argv: list[str] | None = None, secretsmanager: Any = None) -> int:
    args = parser().parse_args(argv)
    if not args.secret_arn:
        print(f"give --secret-arn or set {CREDENTIALS_SECRET_ARN} (the stack's CredentialsSecretArn output)")
        return 2
    if secretsmanager is None:
        import boto3

        secretsmanager = boto3.client("secretsmanager", region_name=args.region or region_of(args.secret_arn))
    try:
        output = run(args, KeyAdmin(secretsmanager, args.secret_arn))
    except AdminError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if output:
        print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
