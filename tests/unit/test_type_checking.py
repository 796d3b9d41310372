"""mypy reads of the CDK only the modules our code reaches (pyproject's overrides: every `aws_cdk` module skipped but
those listed). A module of the CDK our code imports and the list lacks would be read as `Any`, its calls unchecked:
each one our checked code imports is listed."""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def followed(package: str) -> set[str]:
    """The modules of `package` an override reads in full although the package's own are skipped."""
    overrides = mypy_config()["overrides"]
    skipped = [o for o in overrides if f"{package}.*" in o["module"] and o.get("follow_imports") == "skip"]
    assert skipped, f"{package}: no override skips its modules"
    return {
        m for o in overrides if o.get("follow_imports") == "normal" for m in o["module"] if m.split(".")[0] == package
    }


def imported(package: str) -> dict[str, str]:
    """Each module of `package` the checked code imports (`from package import module` included) -> where."""
    found: dict[str, str] = {}
    for entry in mypy_config()["files"]:
        path = ROOT / entry
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            for node in ast.walk(ast.parse(file.read_text())):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == package:
                    names = [node.module]
                    names += [
                        f"{node.module}.{alias.name}"
                        for alias in node.names
                        if is_module(f"{node.module}.{alias.name}")
                    ]
                for name in names:
                    if name.split(".")[0] == package:
                        found.setdefault(name, f"{file.relative_to(ROOT)}:{node.lineno}")
    return found


def is_module(name: str) -> bool:
    """Whether `name` is a module of an installed package, found on disk (importing the CDK would start its runtime)."""
    top, *rest = name.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        return False
    for location in spec.submodule_search_locations:
        path = Path(location).joinpath(*rest)
        if (path / "__init__.py").exists() or path.with_suffix(".py").exists():
            return True
    return False


def test_every_cdk_module_our_code_imports_is_read_by_mypy() -> None:
    listed = followed("aws_cdk")
    used = imported("aws_cdk")
    assert {"aws_cdk", "aws_cdk.aws_lambda", "aws_cdk.aws_iam"} <= set(used)  # the walk finds both import forms
    missing = {name: where for name, where in used.items() if name not in listed}
    assert missing == {}, "add these (and the CDK modules they import) to pyproject's list of CDK modules mypy reads"
