"""The roles of the synthesized template, their statements resolved to the local resources they name.

The template is the CDK app's own (`infra.nag.build`, synthesized in-process as `cdk synth` does, without bundling
the layer), cached by a hash of what decides the roles (`ROLE_SOURCES` and the context), so a server starts on a
file read. `Roles.load` reads one and binds its resources to the local ones: a resource a function's environment
names (a table, a queue, the state machine, a secret) is bound to the local value of that variable, the key of
`-c createKmsKey=true` to `LOCAL_KEY_ARN`. An intrinsic that resolves to nothing local becomes `UNRESOLVED`, which
no ARN matches: a statement on something the local runtime lacks allows nothing, never everything.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from local_runtime.roles.calls import TASK_TOKENS, Place

ROOT = Path(__file__).resolve().parents[2]
# What the roles are made from: the CDK app, the grants table and the names the functions' environment uses.
ROLE_SOURCES = ("app.py", "cdk.json", "infra", "layers/mnsd/python/mnsd/ground/settings.py")
CACHE = ROOT / ".cache" / "roles"
STACK = "Mns"
TEMPLATE = f"{STACK}.template.json"
# Synthesized without running pip for the layer, with construct paths (the roles are found by them).
SYNTH_CONTEXT = {"aws:cdk:bundling-stacks": [], "aws:cdk:enable-path-metadata": True}
LOCAL_KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-00000000c0de"
UNRESOLVED = "\x00unresolved"


def source_hash(context: Mapping[str, object], root: Path = ROOT) -> str:
    digest = hashlib.sha256(json.dumps(dict(context), sort_keys=True).encode())
    for source in ROLE_SOURCES:
        path = root / source
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def synthesize(outdir: Path, context: Mapping[str, object]) -> Path:
    """The app's template, synthesized in-process into `outdir` (cdk-nag's checks included, as `cdk synth`)."""
    import aws_cdk as cdk

    from infra.nag import build

    app = cdk.App(context={**SYNTH_CONTEXT, **context}, outdir=str(outdir))
    build(app, STACK, env=cdk.Environment(region="us-east-1"))
    app.synth()
    return outdir / TEMPLATE


def cached_template(context: Mapping[str, object] | None = None, cache: Path = CACHE) -> Path:
    """The synthesized template for `context`, made once per `source_hash` (concurrent callers wait for one synth)."""
    context = dict(context or {})
    folder = cache / source_hash(context)
    template = folder / TEMPLATE
    if template.exists():
        return template
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            made = synthesize(folder / "cdk.out", context)
            made.replace(template)
    return template


@dataclass
class Resolver:
    """CloudFormation intrinsics, resolved against `bound` (logical id -> attribute ('Ref' too) -> value)."""

    pseudo: Mapping[str, str]
    bound: dict[str, dict[str, str]] = field(default_factory=dict)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((function, argument),) = value.items()
            if function == "Ref" or function.startswith("Fn::"):
                intrinsic = getattr(self, "_" + function.removeprefix("Fn::").lower(), None)
                return UNRESOLVED if intrinsic is None else intrinsic(argument)
        return {k: self.resolve(v) for k, v in value.items()}

    def _ref(self, name: str) -> Any:
        return self.pseudo.get(name) or self.bound.get(name, {}).get("Ref", UNRESOLVED)

    def _getatt(self, argument: Any) -> Any:
        logical, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
        return self.bound.get(logical, {}).get(attribute, UNRESOLVED)

    def _join(self, argument: Any) -> str:
        separator, parts = argument
        return str(separator).join(str(self.resolve(p)) for p in parts)

    def _select(self, argument: Any) -> Any:
        index, items = argument
        return self.resolve(items)[int(index)]

    def _split(self, argument: Any) -> list[str]:
        separator, text = argument
        return str(self.resolve(text)).split(separator)

    def _sub(self, argument: Any) -> Any:
        if not isinstance(argument, str):
            return UNRESOLVED
        return re.sub(r"\$\{([^}]+)\}", lambda m: str(self._named(m.group(1))), argument)

    def _named(self, name: str) -> str:
        logical, _, attribute = name.partition(".")
        return str(self.resolve({"Fn::GetAtt": [logical, attribute]} if attribute else {"Ref": logical}))


def _derived(kind: str, ref: str, place: Place) -> dict[str, str]:
    """A resource's attributes from its local Ref value (a table's name, a queue's URL, an ARN)."""
    if kind == "AWS::DynamoDB::Table":
        arn = place.arn("dynamodb", f"table/{ref}")
        return {"Ref": ref, "Arn": arn, "StreamArn": f"{arn}/stream/local"}
    if kind == "AWS::SQS::Queue":
        name = ref.rstrip("/").rsplit("/", 1)[-1]
        return {"Ref": ref, "Arn": place.arn("sqs", name), "QueueName": name}
    if kind == "AWS::StepFunctions::StateMachine":
        return {"Ref": ref, "Arn": ref, "Name": ref.rsplit(":", 1)[-1]}
    if kind == "AWS::S3::Bucket":
        return {"Ref": ref, "Arn": f"arn:{place.partition}:s3:::{ref}"}
    return {"Ref": ref, "Arn": ref}


@dataclass(frozen=True)
class Role:
    """One role of the template (`path`: its construct path) and its statements, resolved."""

    path: str
    statements: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Roles:
    """Every role of a template, by construct path; the functions' by their name too (`functions/{name}.py`)."""

    by_path: Mapping[str, Role]
    functions: Mapping[str, Role]
    environments: Mapping[str, Mapping[str, Any]]  # each function's environment, resolved
    place: Place
    resolver: Resolver  # the template's other values (a state machine's definition...)

    @classmethod
    def load(cls, template: Path | Mapping[str, Any], local: Mapping[str, str], place: Place | None = None) -> Roles:
        """The roles of `template`, its resources bound through the functions' environment variables to `local`
        (variable -> local value)."""
        document = json.loads(template.read_text()) if isinstance(template, Path) else template
        resources: Mapping[str, Any] = document["Resources"]
        place = place or Place()
        resolver = Resolver(
            {
                "AWS::Partition": place.partition,
                "AWS::Region": place.region,
                "AWS::AccountId": place.account,
                "AWS::URLSuffix": "amazonaws.com",
                "AWS::StackName": STACK,
                "AWS::NoValue": "",
            }
        )
        functions = {
            logical: resource
            for logical, resource in resources.items()
            if resource["Type"] == "AWS::Lambda::Function"
            and str(resource["Properties"].get("Handler", "")).endswith(".handler")
        }
        for function in functions.values():
            variables = function["Properties"].get("Environment", {}).get("Variables", {})
            for variable, value in variables.items():
                if variable in local and isinstance(value, dict) and set(value) == {"Ref"}:
                    logical = value["Ref"]
                    resolver.bound[logical] = _derived(resources[logical]["Type"], local[variable], place)
        for logical, resource in resources.items():
            if resource["Type"] == "AWS::KMS::Key":
                resolver.bound[logical] = {"Ref": LOCAL_KEY_ARN, "Arn": LOCAL_KEY_ARN}
        place = Place(place.region, place.account, place.partition, encrypted(resources, resolver))
        statements: dict[str, list[Mapping[str, Any]]] = {}
        for resource in resources.values():
            if resource["Type"] != "AWS::IAM::Policy":
                continue
            for role in resource["Properties"].get("Roles", []):
                document_statements = resource["Properties"]["PolicyDocument"]["Statement"]
                statements.setdefault(role["Ref"], []).extend(resolver.resolve(document_statements))
        paths = {
            logical: resource.get("Metadata", {}).get("aws:cdk:path", logical)
            for logical, resource in resources.items()
            if resource["Type"] == "AWS::IAM::Role"
        }
        by_path = {path: Role(path, tuple(statements.get(logical, []))) for logical, path in paths.items()}
        by_function: dict[str, Role] = {}
        environments: dict[str, Mapping[str, Any]] = {}
        for function in functions.values():
            name = function["Properties"]["Handler"].removesuffix(".handler")
            role = function["Properties"]["Role"]["Fn::GetAtt"][0]
            by_function[name] = by_path[paths[role]]
            variables = function["Properties"].get("Environment", {}).get("Variables", {})
            environments[name] = {k: resolver.resolve(v) for k, v in variables.items()}
        return cls(by_path, by_function, environments, place, resolver)

    def role(self, name: str) -> Role:
        """A function's role by its name, else a role by its construct path (or its end)."""
        if name in self.functions:
            return self.functions[name]
        found = [role for path, role in self.by_path.items() if path == name or path.endswith(f"/{name}/Resource")]
        if len(found) != 1:
            raise KeyError(f"no single role named {name!r}: {sorted(self.functions)}")
        return found[0]


def encrypted(resources: Mapping[str, Any], resolver: Resolver) -> dict[str, str]:
    """Resource ARN -> the customer-managed key it is encrypted under (`TASK_TOKENS` for the state machine)."""
    keys: dict[str, str] = {}

    def note(logical: str, attribute: str, key: Any) -> None:
        arn = resolver.bound.get(logical, {}).get(attribute)
        resolved = resolver.resolve(key) if key is not None else None
        if arn and isinstance(resolved, str) and resolved.startswith("arn:"):
            keys[arn] = resolved

    for logical, resource in resources.items():
        properties = resource.get("Properties", {})
        kind = resource["Type"]
        if kind == "AWS::DynamoDB::Table":
            note(logical, "Arn", properties.get("SSESpecification", {}).get("KMSMasterKeyId"))
        elif kind == "AWS::SQS::Queue":
            note(logical, "Arn", properties.get("KmsMasterKeyId"))
        elif kind == "AWS::S3::Bucket":
            rules = properties.get("BucketEncryption", {}).get("ServerSideEncryptionConfiguration", [{}])
            note(logical, "Arn", rules[0].get("ServerSideEncryptionByDefault", {}).get("KMSMasterKeyID"))
        elif kind == "AWS::SecretsManager::Secret":
            note(logical, "Ref", properties.get("KmsKeyId"))
        elif kind == "AWS::StepFunctions::StateMachine":
            key = properties.get("EncryptionConfiguration", {}).get("KmsKeyId")
            note(logical, "Arn", key)
            if key is not None:
                keys[TASK_TOKENS] = resolver.resolve(key)
    return keys


def template_functions(template: Mapping[str, Any]) -> list[str]:
    """The names of the template's functions (`functions/{name}.py`, or the console's package)."""
    return sorted(
        str(r["Properties"]["Handler"]).removesuffix(".handler")
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and str(r["Properties"].get("Handler", "")).endswith(".handler")
    )
