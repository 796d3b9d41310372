"""The one error the clients raise: an answer of refusal, or no answer at all; whose fault it is and whether it is
worth trying again."""

from __future__ import annotations

NETWORK = "NetworkError"
# Refusals worth trying again after a pause: the service is busy or throttling, or did not answer.
RETRYABLE = {NETWORK, "QpsLimitExceeded", "Throttling", "Throttling.User", "ServiceUnavailable", "InternalError"}
CLIENT, SERVER = "client", "server"


class ServiceError(Exception):
    """A refusal (`code`, `message`, HTTP `status`) or no answer (status 0, `NetworkError`) from an endpoint."""

    def __init__(self, status: int, code: str, message: str, request_id: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.answered_by = ""  # the name a tool gives the endpoint ("source", "target"), where it knows which answered

    @property
    def fault(self) -> str:
        """`client` when the request was refused for what it asked (a 4xx: a missing queue, a bad signature, ...),
        `server` when the endpoint failed or did not answer (a 5xx, an answer it cannot read, no answer)."""
        return CLIENT if 400 <= self.status < 500 else SERVER

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE or self.status >= 500

    def __str__(self) -> str:
        suffix = f" (request id {self.request_id})" if self.request_id else ""
        return f"{self.code}: {self.message}{suffix}"
