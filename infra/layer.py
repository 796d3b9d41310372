"""The shared layer: our code (`layers/mnsd/python`) plus the packages of `layers/mnsd/requirements.txt`.

The packages are installed at synth time by pip for the functions' platform (`RUNTIME` on `ARCHITECTURE`:
CPython 3.13 on Amazon Linux 2023, arm64 (manylinux2014_aarch64 wheels only)), without Docker. The asset is hashed from its source folder, so a synth whose
`cdk.out` already holds this exact layer skips the install.
"""

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

LAYER_SOURCE = Path(__file__).resolve().parent.parent / "layers" / "mnsd"
IGNORED = ("__pycache__", "*.pyc")
# Every function runs on this runtime and architecture (Amazon Linux 2023; arm64 costs 20% less per GB-second
# than x86_64). The Glue jobs keep Glue 5.1's own Python 3.11.
RUNTIME = lambda_.Runtime.PYTHON_3_13
ARCHITECTURE = lambda_.Architecture.ARM_64
PIP_PLATFORM = {"arm64": "manylinux2014_aarch64", "x86_64": "manylinux2014_x86_64"}[ARCHITECTURE.name]
PYTHON_VERSION = RUNTIME.name.removeprefix("python")


def pip_install_command(requirements: Path, target: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--platform",
        PIP_PLATFORM,
        "--only-binary=:all:",
        # The requirements are the whole closure (cffi and pycparser for cryptography); pynamodb's one dependency,
        # botocore, is the runtime's (a second copy in the layer would shadow it under the runtime's boto3).
        "--no-deps",
        "--python-version",
        PYTHON_VERSION,
        "--implementation",
        "cp",
        "--target",
        str(target),
        "-r",
        str(requirements),
    ]


@jsii.implements(ILocalBundling)
class PipLayerBundling:
    """Builds the layer folder on this machine: a copy of our code, then pip's install of the requirements."""

    def __init__(self, source: Path) -> None:
        self.source = source

    def try_bundle(self, output_dir: str, *args: Any, **options: Any) -> bool:
        target = Path(output_dir) / "python"
        shutil.copytree(self.source / "python", target, ignore=shutil.ignore_patterns(*IGNORED), dirs_exist_ok=True)
        subprocess.run(pip_install_command(self.source / "requirements.txt", target), check=True)
        return True


def shared_layer(scope: Construct, id: str, source: Path = LAYER_SOURCE) -> lambda_.LayerVersion:
    return lambda_.LayerVersion(
        scope,
        id,
        code=lambda_.Code.from_asset(
            str(source),
            exclude=list(IGNORED),
            asset_hash_type=AssetHashType.SOURCE,
            bundling=BundlingOptions(
                # Never pulled: local bundling always succeeds (or fails the synth).
                image=DockerImage.from_registry(f"public.ecr.aws/sam/build-{RUNTIME.name}"),
                local=PipLayerBundling(source),
            ),
        ),
        compatible_runtimes=[RUNTIME],
        compatible_architectures=[ARCHITECTURE],
        description="MNS protocol, domain and storage, with their third-party packages",
    )
