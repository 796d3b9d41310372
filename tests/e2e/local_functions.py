"""Lambda functions for the local runtime's stand-in (`MNS_LOCAL_FUNCTIONS=name=tests.e2e.local_functions:record`):
each appends what it was invoked with to the file `MNS_E2E_FUNCTION_LOG` names (when set), one JSON line per call, which the
end-to-end tests read."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

FUNCTION_LOG = "MNS_E2E_FUNCTION_LOG"
_lock = threading.Lock()


def _log(context: Any, event: Any) -> None:
    if FUNCTION_LOG not in os.environ:
        return
    line = json.dumps({"function": context.function_name, "arn": context.invoked_function_arn, "event": event})
    with _lock, open(os.environ[FUNCTION_LOG], "a", encoding="utf-8") as file:
        file.write(line + "\n")


def record(event: Any, context: Any) -> dict[str, bool]:
    """Succeeds."""
    _log(context, event)
    return {"ok": True}


def echo(event: Any, context: Any) -> dict[str, Any]:
    """Answers with its event and name."""
    return {"echo": event, "name": context.function_name}


def fail(event: Any, context: Any) -> None:
    """Fails every time (Lambda reports it as `FunctionError: Unhandled`)."""
    _log(context, event)
    raise RuntimeError("this function always fails")


def calls(log: Path) -> list[dict[str, Any]]:
    """Every call recorded in `log` so far."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
