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
    assert (python / "mnsd" / "routes.py").read_bytes() == (LAYER_SOURCE / "python" / "mnsd" / "routes.py").read_bytes()
    assert not list(python.rglob("mnsd/**/__pycache__"))
    wheel = (python / f"cryptography-{pins['cryptography']}.dist-info" / "WHEEL").read_text()
    assert "manylinux2014_x86_64" in wheel  # Lambda's platform, whatever this machine is
    assert list(python.glob("cryptography/hazmat/bindings/_rust.abi3.so"))
