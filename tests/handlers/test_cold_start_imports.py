"""Cold start: what importing a function module loads.

A route function's import is its cold start's fixed cost. boto3 (≈200 ms) and the X-Ray SDK (≈200 ms,
through Powertools' Tracer) are loaded on first use, not at import: this asserts what is imported (the
cause of the cost); `bench/import_time.py` measures the milliseconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from mnsd.entry import lambda_handler
from mnsd.metrics import NoMetrics
from mnsd.request.routes import ROUTES

ROOT = Path(__file__).resolve().parents[2]
# The API's route functions (one per route, as the CDK app builds them), the catch-all, and the stream
# and queue consumers of push and logging.
FUNCTIONS = [*ROUTES, "not_found", "fanout", "first_attempt", "push_worker", "oplog"]
# What a function must not load at import. (Powertools imports the bare `botocore` package for its
# user-agent hook, ≈1 ms; botocore's session and client machinery is what costs.)
HEAVY = ("boto3", "botocore.session", "botocore.client", "aws_xray_sdk")

PROBE = """
import importlib, json, sys
heavy = {heavy!r}
loaded = {{}}
for name in {modules!r}:
    importlib.import_module("functions." + name)
    loaded[name] = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
print(json.dumps(loaded))
"""


@pytest.fixture(scope="module")
def loaded_after_import() -> dict[str, list[str]]:
    """Each function module imported in turn in one fresh interpreter, and what was loaded after each.

    (sys.modules only grows: a module that pulled in a heavy one shows it from its own import on.)
    """
    env = {"PATH": "/usr/bin:/bin", "POWERTOOLS_TRACE_DISABLED": "false", "AWS_LAMBDA_FUNCTION_NAME": "mns-probe"}
    probe = PROBE.format(heavy=HEAVY, modules=FUNCTIONS)
    finished = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(finished.stdout)


@pytest.mark.parametrize("function", FUNCTIONS)
def test_importing_a_function_loads_neither_boto3_nor_the_xray_sdk(loaded_after_import, function):
    assert loaded_after_import[function] == []


def test_tracing_is_made_on_first_use_where_enabled(monkeypatch):
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "mns-test")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "false")
    assert lambda_handler.tracing_enabled()
    for disabled in ("true", "TRUE", "1"):
        assert not lambda_handler.tracing_enabled(
            {"AWS_LAMBDA_FUNCTION_NAME": "f", "POWERTOOLS_TRACE_DISABLED": disabled}
        )
    assert not lambda_handler.tracing_enabled({})  # outside Lambda (tests, the local server)


def test_an_enabled_tracer_wraps_the_handler_on_its_first_call(monkeypatch):
    wrapped = []

    class RecordingTracer:
        def capture_lambda_handler(self, handler, capture_response=True):
            def traced(event, context):
                wrapped.append(capture_response)
                return handler(event, context)

            return traced

    monkeypatch.setattr(lambda_handler, "tracer", lambda: RecordingTracer())
    # The $default route uses no service (its counts, none, are flushed all the same).
    services = SimpleNamespace(metrics=NoMetrics())
    handler = lambda_handler.make_handler(None, services=lambda: services)
    event = {"requestContext": {"http": {"method": "GET"}}, "rawPath": "/nothing"}

    class Context:
        function_name, memory_limit_in_mb, aws_request_id = "f", 128, "r"
        invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:f"

    for _ in range(2):
        assert handler(event, Context())["statusCode"] == 400  # InvalidRequestURL, the $default route's answer
    assert wrapped == [False, False]
