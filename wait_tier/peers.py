"""The other instances of the tier, which a wake is passed on to: a fixed list, or the instances Cloud Map knows
of the tier's ECS service (re-read every few seconds; botocore, from Debian's python3-botocore in the image)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from mnsd.waiting import contract

REFRESH_SECONDS = 30.0  # (Cloud Map bills lookups: two tasks every 30 s is $0.17 a month)


def fixed(urls: str) -> Callable[[], list[str]]:
    found = [u.strip() for u in urls.split(",") if u.strip()]
    return lambda: found


def cloud_map(namespace: str, service: str, port: int, region: str) -> Callable[[], list[str]]:
    import botocore.session

    client: Any = botocore.session.get_session().create_client("servicediscovery", region_name=region)
    own = socket.gethostbyname(socket.gethostname())
    cache: dict[str, Any] = {"at": 0.0, "urls": []}

    def peers() -> list[str]:
        if time.monotonic() - cache["at"] > REFRESH_SECONDS:
            try:
                found = client.discover_instances(NamespaceName=namespace, ServiceName=service)["Instances"]
                cache["urls"] = wake_urls(found, port, own)
            except Exception:  # noqa: BLE001 (keep the last list: a wake not relayed only waits longer)
                pass
            cache["at"] = time.monotonic()
        return list(cache["urls"])

    return peers


def wake_urls(instances: list[dict[str, Any]], port: int, own: str) -> list[str]:
    """The wake URLs (the wake port's `contract.WAKE_PATH`) of the tasks Cloud Map lists, but this one's."""
    ips = [i.get("Attributes", {}).get("AWS_INSTANCE_IPV4") for i in instances]
    return [f"http://{ip}:{port}{contract.WAKE_PATH}" for ip in ips if ip and ip != own]
