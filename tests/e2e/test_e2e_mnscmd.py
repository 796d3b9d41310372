"""The SDK's `mnscmd` CLI against the local server."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

MNSCMD = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "mnscmd"


@pytest.fixture
def cli(tmp_path: Path, endpoint):
    env = dict(os.environ, HOME=str(tmp_path))

    def run(*args: str) -> str:
        proc = subprocess.run([str(MNSCMD), *args], env=env, capture_output=True, text=True, timeout=30)
        out = proc.stdout + proc.stderr
        assert "Traceback" not in out, out
        return out

    out = run("config", f"--mnsendpoint={endpoint}", "--accesskeyid=KEYA", "--accesskeysecret=SECRETA")
    assert (tmp_path / ".mnscredentials").exists(), out
    return run


def test_mnscmd_queue_lifecycle(cli, qname):
    out = cli("createqueue", f"--queuename={qname}")
    assert "createqueue succeed" in out and f"/queues/{qname}" in out
    out = cli("sendmessage", f"--queuename={qname}", "--body=hello-cli")
    assert "sendmessage succeed" in out
    msg_id = re.search(r"MessageID\s*:(\S+)", out).group(1)
    out = cli("receivemessage", f"--queuename={qname}", "--string=true")
    assert "receivemessage succeed" in out, out
    assert re.search(r"MessageBody\s*:hello-cli", out), out
    assert re.search(r"MessageID\s*:" + re.escape(msg_id), out)
    assert re.search(r"DequeueCount\s*:1", out)
    handle = re.search(r"ReceiptHandle\s*:(\S+)", out).group(1)
    out = cli("deletemessage", f"--queuename={qname}", f"--handle={handle}")
    assert "deletemessage succeed" in out, out
    out = cli("receivemessage", f"--queuename={qname}")
    assert "receivemessage fail" in out and "MessageNotExist" in out
    out = cli("listqueue", f"--prefix={qname}")
    assert f"/queues/{qname}" in out and "ListQueueNumber:1" in out
    out = cli("deletequeue", f"--queuename={qname}")
    assert "deletequeue succeed" in out
    out = cli("getqueueattr", f"--queuename={qname}")
    assert "getqueueattr fail" in out and "QueueNotExist" in out
