"""The local runtime with the roles enforced (`MNS_ROLES`): each function in a container of its own, as on Lambda
(its services and caches, cold at first; its boto3 clients), every AWS call it makes checked against its role in
the synthesized template.

MNS_ROLES   unset or `off`: one warm set of services for every function, nothing checked (the default);
            `enforce`: the CDK app's template, synthesized once per change of what makes the roles (cached);
            a path: that synthesized template (`cdk synth`'s `cdk.out/Mns.template.json`).
Only the moto engine's tables are DynamoDB: on SQLite there is nothing to check, and the setting is ignored.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from local_runtime.engine import MOTO, EngineChoice
from local_runtime.moto_client import SerializedClient, local_client
from local_runtime.roles.calls import Place
from local_runtime.roles.enforce import Guard
from local_runtime.roles.template import Roles, cached_template
from mnsd.ground import settings as names
from mnsd.ground.settings import Settings
from mnsd.services import Services

ROLES = "MNS_ROLES"
OFF = ("", "off", "false", "0")


def function_environment(settings: Settings) -> dict[str, str]:
    """The local values of the variables through which the template's functions name the resources."""
    return {
        names.META_TABLE: settings.meta_table,
        names.MESSAGE_TABLE: settings.message_table,
        names.TOPIC_MESSAGE_TABLE: settings.topic_message_table,
        names.LOG_TABLE: settings.log_table,
        names.PUSH_STATE_MACHINE_ARN: settings.push_state_machine_arn,
        names.PUSH_QUEUE_URL: settings.push_queue_url,
    }


def enforced_roles(
    engine: EngineChoice, env: Mapping[str, str], local: Mapping[str, str], say: Callable[[str], Any]
) -> Roles | None:
    """The roles `MNS_ROLES` asks for, bound to the local resources (`local`); None when nothing is enforced."""
    choice = env.get(ROLES, "").strip()
    if choice.lower() in OFF:
        return None
    if engine.engine != MOTO:
        say(f"{ROLES}: the SQLite engine makes no AWS call, nothing to enforce (MNS_ENGINE=moto enforces the roles)")
        return None
    template = cached_template() if choice.lower() == "enforce" else Path(choice)
    say(f"  roles:             enforced, from {template}")
    return Roles.load(template, local, Place(region=env.get("AWS_DEFAULT_REGION", "us-east-1")))


class FunctionServices:
    """Each function's services, made on its first call with clients of its own, guarded by its role."""

    def __init__(
        self,
        build: Callable[[Callable[[str], Any]], Services],
        lock: threading.Lock,
        region: str,
        roles: Roles | None,
        stand_ins: Mapping[str, Any] | None = None,
    ) -> None:
        self._build = build
        self._stand_ins = dict(stand_ins or {})
        self._lock = lock
        self._region = region
        self.roles = roles
        self._made: dict[str, Services] = {}
        self._making = threading.Lock()

    def of(self, function: str, shared: Services) -> Services:
        if self.roles is None:
            return shared
        with self._making:
            if function not in self._made:
                self._made[function] = self._build(self._clients(function))
            return self._made[function]

    def _clients(self, function: str) -> Callable[[str], Any]:
        assert self.roles is not None
        guard = Guard(function, self.roles.role(function), self.roles.place)
        made: dict[str, Any] = {}
        making = threading.Lock()

        def client(name: str) -> Any:
            with making:
                if name not in made:
                    stand_in = self._stand_ins.get(name)
                    made[name] = (
                        GuardedStandIn(guard, name, stand_in)
                        if stand_in is not None
                        else SerializedClient(guard.attach(local_client(name, self._region)), self._lock)
                    )
                return made[name]

        return client


class GuardedStandIn:
    """A local stand-in for a service's client (`local_runtime.cloud_targets.LocalLambda`: moto's Lambda needs
    Docker), its calls decided under the function's role as a client's are: `invoke(...)` is `lambda` `Invoke`."""

    def __init__(self, guard: Guard, service: str, stand_in: Any) -> None:
        self._guard = guard
        self._service = service
        self._stand_in = stand_in

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._stand_in, name)
        operation = "".join(part.title() for part in name.split("_"))

        def call(**params: Any) -> Any:
            refused = self._guard.refusal(self._service, operation, params)
            if refused is not None:
                from botocore.exceptions import ClientError

                message = f"{self._guard.name} is not authorized to perform: {refused.action} on {refused.resource}"
                raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": message}}, operation)
            return method(**params)

        return call
