"""The layer's local bundling: our code plus the pinned packages, built for Lambda (needs PyPI, not Docker)."""

from pathlib import Path

from infra.layer import LAYER_SOURCE, PipLayerBundling


def test_the_layer_carries_our_code_and_linux_wheels_of_its_requirements(tmp_path: Path) -> None:
    pins = dict(
        line.split("==")
        for line in (LAYER_SOURCE / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    )

    assert PipLayerBundling(LAYER_SOURCE).try_bundle(str(tmp_path))

    python = tmp_path / "python"
    assert (python / "mnsd" / "request" / "routes.py").read_bytes() == (
        LAYER_SOURCE / "python" / "mnsd" / "request" / "routes.py"
    ).read_bytes()
    assert not list(python.rglob("mnsd/**/__pycache__"))
    wheel = (python / f"cryptography-{pins['cryptography']}.dist-info" / "WHEEL").read_text()
    assert "manylinux2014_aarch64" in wheel  # the functions' platform (arm64), whatever this machine is
    assert list(python.glob("cryptography/hazmat/bindings/_rust.abi3.so"))
    # cffi has one build per CPython version: the runtime's (3.13), not this interpreter's.
    assert [p.name for p in python.glob("_cffi_backend.*.so")] == ["_cffi_backend.cpython-313-aarch64-linux-gnu.so"]
    # The item models' package, without a botocore of its own (the runtime's serves it and boto3 alike).
    assert (python / f"pynamodb-{pins['pynamodb']}.dist-info").is_dir()
    assert not list(python.glob("botocore*"))
