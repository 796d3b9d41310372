"""Where each side's endpoint and key come from, as Alibaba's tools take them: a profile of the `aliyun` CLI's file
(`~/.aliyun/config.json`: `{"current": ..., "profiles": [{"name", "mode", "access_key_id", "access_key_secret",
"sts_token", "region_id"}]}`, modes `AK` and `StsToken`), or environment variables under a prefix (`ALIBABA_CLOUD_`
for the source by default, `MNS_` for the target: what `make run` prints). A secret is never part of a repr or a
message."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from migrate.errors import MigrationError
from mnsclient.messages import MessageClient
from mnsclient.openapi import OpenApiClient
from mnsclient.resources import ResourceClient
from mnsclient.signing import Key

DEFAULT_PREFIX = {"source": "ALIBABA_CLOUD_", "target": "MNS_"}
CONFIG_FILE = Path("~/.aliyun/config.json")
_LIVE_HOST = re.compile(r"^(?P<account>\d+)\.mns\.(?P<region>[a-z0-9-]+?)(-internal(-vpc)?)?\.aliyuncs\.com$")
_KEY_MODES = ("AK", "StsToken")


@dataclass(frozen=True)
class Side:
    """One end of a migration: its classic (XML) endpoint, its Mns-open endpoint and the key used on both."""

    name: str  # "source" or "target"
    endpoint: str
    openapi_endpoint: str
    access_key_id: str
    access_key_secret: str = field(repr=False)
    security_token: str = field(default="", repr=False)
    region: str = ""

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self.access_key_secret, self.security_token) if s)

    @property
    def key(self) -> Key:
        return Key(self.access_key_id, self.access_key_secret, self.security_token)

    def messages(self) -> MessageClient:
        """The side's message calls (its classic endpoint)."""
        return MessageClient(self.endpoint, self.key)

    def resources(self) -> ResourceClient:
        """The side's resource calls on its classic endpoint (a subscription's endpoint in full)."""
        return ResourceClient(self.endpoint, self.key)

    def openapi(self) -> OpenApiClient:
        """The side's Mns-open calls (its configuration)."""
        return OpenApiClient(self.openapi_endpoint, self.key, self.region)


def openapi_endpoint_for(endpoint: str) -> str:
    """Alibaba's Mns-open endpoint of a live account endpoint (`https://{account}.mns.{region}.aliyuncs.com`:
    `https://mns-open.{region}.aliyuncs.com`); any other server answers both APIs on its own endpoint."""
    parts = urlsplit(endpoint)
    live = _LIVE_HOST.match(parts.hostname or "")
    if live:
        return f"https://mns-open.{live['region']}.aliyuncs.com"
    return endpoint.rstrip("/")


def region_of(endpoint: str) -> str:
    live = _LIVE_HOST.match(urlsplit(endpoint).hostname or "")
    return live["region"] if live else ""


def _profile(path: Path, name: str | None) -> dict[str, str]:
    try:
        config = json.loads(path.expanduser().read_text())
    except FileNotFoundError:
        raise MigrationError(f"no aliyun CLI configuration at {path}") from None
    except (OSError, ValueError) as error:
        raise MigrationError(f"the aliyun CLI configuration {path} cannot be read: {type(error).__name__}") from None
    wanted = name or config.get("current") or "default"
    for profile in config.get("profiles") or []:
        if profile.get("name") == wanted:
            mode = profile.get("mode") or "AK"
            if mode not in _KEY_MODES:
                raise MigrationError(
                    f"profile {wanted} of {path} is of mode {mode}: give a profile of mode AK or StsToken "
                    "(or the key in environment variables)"
                )
            return {k: str(v) for k, v in profile.items() if isinstance(v, str | int)}
    raise MigrationError(f"no profile named {wanted} in {path}")


def resolve_side(
    name: str,
    environ: Mapping[str, str],
    *,
    endpoint: str | None = None,
    openapi: str | None = None,
    profile: str | None = None,
    prefix: str | None = None,
    config_file: Path = CONFIG_FILE,
) -> Side:
    """The side `name` from the options given, else its profile, else its environment variables (`{prefix}ENDPOINT`,
    `{prefix}ACCESS_KEY_ID`, `{prefix}ACCESS_KEY_SECRET`, `{prefix}SECURITY_TOKEN`, `{prefix}REGION`); with no key
    there either, the aliyun CLI's current profile when its file exists (as Alibaba's credential chain does)."""
    prefix = DEFAULT_PREFIX[name] if prefix is None else prefix
    endpoint = endpoint or environ.get(f"{prefix}ENDPOINT")
    if not endpoint:
        raise MigrationError(f"no {name} endpoint: give --{name}-endpoint or set {prefix}ENDPOINT")
    key_id = environ.get(f"{prefix}ACCESS_KEY_ID", "")
    secret = environ.get(f"{prefix}ACCESS_KEY_SECRET", "")
    token = environ.get(f"{prefix}SECURITY_TOKEN", "")
    region = environ.get(f"{prefix}REGION", "")
    if profile is not None or (not key_id and config_file.expanduser().exists()):
        found = _profile(config_file, profile)
        key_id, secret = found.get("access_key_id", ""), found.get("access_key_secret", "")
        token, region = found.get("sts_token", ""), found.get("region_id", "") or region
    if not key_id or not secret:
        raise MigrationError(
            f"no {name} access key: set {prefix}ACCESS_KEY_ID and {prefix}ACCESS_KEY_SECRET, "
            f"or give --{name}-profile (a profile of {config_file})"
        )
    endpoint = endpoint.rstrip("/")
    return Side(
        name,
        endpoint,
        (openapi or openapi_endpoint_for(endpoint)).rstrip("/"),
        key_id,
        secret,
        token,
        region or region_of(endpoint),
    )
