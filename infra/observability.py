"""What the stack writes to CloudWatch Logs and X-Ray, chosen for a busy estate, and the context that changes it.

CloudWatch Logs bills every byte ingested ($0.50 per GB) and X-Ray every trace recorded ($5 per million): at a
message's three requests, the old defaults (Lambda's platform lines, a log line per request beside the access log,
active tracing at X-Ray's default 5 %) cost more than DynamoDB's writes of a single message (bench/results/
message_cost.md). The defaults:

- functions log in JSON with Lambda's system log level WARN: no START / END / REPORT lines (Lambda's Duration,
  Errors, Throttles metrics are unaffected); the application log level INFO, since Lambda gives a line without a
  level (each EMF metric line) the level INFO and a higher level would drop the metrics; Powertools' own logger at
  WARNING: no per-request "request" line (the access log names each request), warnings and errors kept.
  `-c functionLogs=verbose` brings the platform lines and the per-request line back;
- the HTTP API's access log in a trimmed format (`ACCESS_LOG_FIELDS["trimmed"]`); `-c accessLogFields=full` the
  previous one (route key, integration status, the time as text);
- no X-Ray tracing; `-c tracing=active` traces the functions and the push retry workflow at X-Ray's sampling rules
  (the default rule: the first request each second and 5 % of the others).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

FUNCTION_LOGS = ("quiet", "verbose")
TRACING = ("off", "active")
ACCESS_LOG_FIELDS = ("trimmed", "full")


@dataclass(frozen=True)
class LogSettings:
    """The functions' logging configuration, the access log's format and whether X-Ray traces."""

    log_format: str = "JSON"  # (Lambda filters levels of JSON logs only)
    system_log_level: str = "WARN"  # START / END / REPORT are INFO
    tracing: bool = False
    application_log_level: str = "INFO"  # an EMF line has no level: Lambda takes it for INFO
    access_log: bool = True
    powertools_log_level: str = "WARNING"  # the per-request "request" line is INFO
    access_log_fields: str = "trimmed"

    @classmethod
    def previous(cls) -> LogSettings:
        """The stack's settings before these defaults: text logs, every platform line, a line per request, the full
        access log format, active tracing."""
        return cls(
            log_format="Text",
            system_log_level="INFO",
            tracing=True,
            powertools_log_level="INFO",
            access_log_fields="full",
        )

    @classmethod
    def from_context(cls, context: Callable[[str], object]) -> LogSettings:
        """`functionLogs` (quiet | verbose), `accessLogFields` (trimmed | full), `tracing` (off | active)."""
        logs = choice(context("functionLogs"), FUNCTION_LOGS, "functionLogs")
        fields = choice(context("accessLogFields"), ACCESS_LOG_FIELDS, "accessLogFields")
        tracing = choice(context("tracing"), TRACING, "tracing") == "active"
        chosen = cls(access_log_fields=fields, tracing=tracing)
        if logs == "verbose":  # Lambda's platform lines and the per-request line
            return dataclasses.replace(chosen, system_log_level="INFO", powertools_log_level="INFO")
        return chosen


def choice(value: object, allowed: tuple[str, ...], name: str) -> str:
    """A context value among `allowed` (the first when not given)."""
    text = allowed[0] if value is None else str(value).strip().lower()
    if text not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return text
