"""Request limits, answered as MNS answers them (`QpsLimitExceeded`, 400).

- A queue's `TenantRateLimitPolicy` (`MaxReceivesPerSecond`): receive requests (ReceiveMessage and
  BatchReceiveMessage) of the queue past it in one second are refused.
- `MNS_ACCOUNT_REQUESTS_PER_SECOND` (0: none): authenticated requests of one account (the caller's) past it
  in one second are refused, before anything of the request is read beyond its signature.

Counting is the engine's (`RateCounter`): exact in the embedded engine's one process, and a conditional
counter on DynamoDB shared by every container (one write unit per counted request, only where a limit is set).
"""

from __future__ import annotations

from mnsd.ground import errors
from mnsd.ground.clock import Clock
from mnsd.model.ports import RateCounter


class Limits:
    def __init__(self, counter: RateCounter, clock: Clock, account_requests_per_second: int = 0) -> None:
        self.counter = counter
        self.clock = clock
        self.account_requests_per_second = account_requests_per_second

    def _second(self) -> int:
        return int(self.clock.now())

    def admit_request(self, account_id: str) -> None:
        limit = self.account_requests_per_second
        if limit and not self.counter.take(f"account:{account_id}", self._second(), limit):
            raise errors.QpsLimitExceeded("The qps limit of the account is exceeded.")

    def admit_receive(self, queue_id: str, max_receives_per_second: int) -> None:
        if max_receives_per_second and not self.counter.take(
            f"queue:{queue_id}", self._second(), max_receives_per_second
        ):
            raise errors.QpsLimitExceeded()
