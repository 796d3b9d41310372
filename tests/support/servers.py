"""The local runtime for end-to-end tests: its two accounts, its environment, a server of a test's own.

A server on the moto engine always runs with the roles enforced (`local_runtime.roles`): each function with its own
services and clients, every AWS call checked against its role in the synthesized template. `local_server` fails the
test when a function made a call its role refused, or one that could not be decided (`roles_refusals`).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from local_runtime.cloud_targets import LOCAL_EVENT_BUSES, LOCAL_FUNCTIONS, bus_arn, function_arn, registered_buses
from local_runtime.roles.containers import ROLES
from local_runtime.roles.enforce import LOG as ROLES_LOG
from local_runtime.roles.enforce import read_log
from local_runtime.roles.template import cached_template
from mnsd.ground.settings import META_CACHE_SECONDS
from mnsd.waiting.contract import WAKE_PATH
from tests.support.local_server import ServerClock, free_port, start_server, stop_server
from wait_tier.tier import Tier, local_url

ACCOUNT_A = ("1000000000000001", "KEYA", "SECRETA")
ACCOUNT_B = ("2000000000000002", "KEYB", "SECRETB")


def server_env(port: int, **extra: str) -> dict[str, str]:
    """A server's environment; on the moto engine, with the roles enforced (the template synthesized once per change
    of the stack, `cached_template`)."""
    env = dict(os.environ)
    if extra.get("MNS_ENGINE") == "moto":
        env[ROLES] = str(cached_template(deployed_targets({**env, **extra})))
        # Each function's container reads the meta table on every call (no record cached across calls): every
        # call takes the cold path its role must allow, and a change made through one route is seen at once
        # through another, as the suite expects (on AWS, another container sees it within `meta_cache_seconds`).
        env[META_CACHE_SECONDS] = "0"
    env.update(
        MNS_PORT=str(port),
        MNS_CREDENTIALS=",".join(":".join(a) for a in (ACCOUNT_A, ACCOUNT_B)),
        MNS_ACCOUNT_ID=ACCOUNT_A[0],
        MNS_ACCESS_KEY_ID=ACCOUNT_A[1],
        MNS_ACCESS_KEY_SECRET=ACCOUNT_A[2],
        MNS_PUSH_ALLOWED_NETWORKS="127.0.0.0/8,::1/128",  # the test push endpoints listen on 127.0.0.1
        **extra,
    )
    return env


# Every e2e test runs against each storage engine of the local runtime (MNS_E2E_ENGINES narrows it).
ENGINES = os.environ.get("MNS_E2E_ENGINES", "sqlite,moto").split(",")
# `MNS_E2E_THROUGH=holder`: each server of the suite behind the wait tier's holder, as `make run WAIT_TIER=holder` runs
# it (the clients call the holder: its passing on, holding and coalescing, `wait_tier/`); empty: the server alone.
THROUGH = os.environ.get("MNS_E2E_THROUGH", "")


@contextmanager
def local_server(
    tmp_path_factory, engine: str, name: str, clock: ServerClock | None = None, **extra: str
) -> Iterator[str]:
    """A server of its own on `engine` (its data and log in fresh folders named after `name`), for the block:
    its endpoint URL. `extra` is added to its environment; with `clock` the server runs on it."""
    port = free_port()
    data = str(tmp_path_factory.mktemp(f"{name}-data-{engine}"))
    tier = None
    if THROUGH == "holder":
        tier = Tier(f"http://127.0.0.1:{port}", free_port(), free_port(), secrets.token_urlsafe(24))
        extra = {"MNS_WAIT_TIER_KEY": tier.key, "MNS_WAIT_TIER_WAKE_URL": local_url(tier.wake_port, WAKE_PATH), **extra}
    logs = tmp_path_factory.mktemp(f"{name}-server")
    roles_log = str(logs / "roles.jsonl")
    env = server_env(
        port, MNS_ENGINE=engine, MNS_DATA_DIR=data, **{ROLES_LOG: roles_log}, **(clock.env() if clock else {}), **extra
    )
    proc = start_server(env, port, logs / "server.log")
    try:
        if tier is None:
            yield f"http://127.0.0.1:{port}"
        else:
            with open(logs / "tier.log", "wb") as tier.log:
                tier.start()
                try:
                    yield tier.url
                finally:
                    tier.stop()
    finally:
        stop_server(proc)
    refused = roles_refusals(roles_log)
    assert not refused, f"calls the functions' roles refuse ({len(refused)}):\n" + "\n".join(refused[:20])


def deployed_targets(env: dict[str, str]) -> dict[str, str]:
    """The context a deployer gives for the push targets a server stands in for (`-c pushLambdaArns`, `-c
    pushEventBusArns`, `infra.push`): the synthesized roles then allow exactly the functions and buses it registers."""
    region = env.get("AWS_DEFAULT_REGION", "us-east-1")
    functions = [part.split("=", 1)[0].strip() for part in env.get(LOCAL_FUNCTIONS, "").split(",") if part.strip()]
    buses = registered_buses(env.get(LOCAL_EVENT_BUSES, ""))
    context = {}
    if functions:
        context["pushLambdaArns"] = ",".join(
            f"{function_arn(region, f)},{function_arn(region, f)}:*" for f in functions
        )
    if buses:
        context["pushEventBusArns"] = ",".join(bus_arn(region, b) for b in buses)
    return context


def roles_refusals(log: str) -> list[str]:
    """The calls of a server's functions that their roles refused or that could not be decided, one line each."""
    return sorted(
        {
            f"{r['function']}: {r['call']}: {r.get('refused') or r.get('undecidable')}"
            for r in read_log(log)
            if r.get("refused") or r.get("undecidable")
        }
    )
