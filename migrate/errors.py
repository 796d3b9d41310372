"""The one error the tool's clients raise: an answer of refusal, or no answer at all."""

from __future__ import annotations

NETWORK = "NetworkError"
# Refusals worth trying again after a pause: the service is busy or throttling, or did not answer.
RETRYABLE = {NETWORK, "QpsLimitExceeded", "Throttling", "Throttling.User", "ServiceUnavailable", "InternalError"}


class ServiceError(Exception):
    """A refusal (`code`, `message`, HTTP `status`) or no answer (status 0, `NetworkError`) from one side."""

    def __init__(self, status: int, code: str, message: str, request_id: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.side = ""  # "source" or "target", where the tool knows which answered

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE or self.status >= 500

    def __str__(self) -> str:
        suffix = f" (request id {self.request_id})" if self.request_id else ""
        return f"{self.code}: {self.message}{suffix}"


class MigrationError(Exception):
    """A problem the user must fix before the command can run (credentials, endpoints, arguments)."""
