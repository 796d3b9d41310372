"""How much of the account's Lambda concurrency each class of function may take, and the receive route's size.

Every waiting ReceiveMessage holds one execution of `get_messages` for up to 28 s, so without a bound a few
hundred consumer threads would take the whole account pool and throttle sends, deletes and push. So:

- `get_messages` (receive and peek) has `receiveConcurrency` reserved: at most that many polls run at once,
  and they always can (a burst of sends cannot throttle consumers either);
- the fan-out has `fanoutConcurrency` reserved, the push worker `pushConcurrency` (also its queue's maximum
  concurrency, so its SQS pollers never run into throttles);
- every other function (sends, deletes, the control plane) shares what is left, which AWS keeps at 100 at least.

A reservation is taken from the account's pool whether used or not, so the sum must leave AWS's minimum
unreserved: the synth refuses a configuration that would not deploy in an account of `accountConcurrency`.
All values are CDK context (cdk.json or `-c name=value`). Sizing rule: README, "Lambda concurrency".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

# AWS keeps this much of a Region's concurrency unreserved; a reservation that would go below is refused.
MIN_UNRESERVED = 100
POLL_MEMORY_SIZES = (128, 256, 512, 1024)


@dataclass(frozen=True)
class Capacity:
    account_concurrency: int = 1000  # the account's concurrency quota in the Region (the AWS default)
    receive_concurrency: int = 100  # concurrent receives and peeks (long polls) at most
    fanout_concurrency: int = 20  # >= stream shards x fanout_parallelization, or fan-out waits for its turn
    fanout_parallelization: int = 4  # concurrent batches per stream shard (1..10)
    push_concurrency: int = 10  # push worker: concurrent retry attempts (batches) at most
    receive_memory: int = 256  # MB of the receive route, which waits most of its billed time

    @classmethod
    def from_context(cls, context: Callable[[str], object]) -> Capacity:
        """From the CDK context keys `accountConcurrency`, `receiveConcurrency`, ... (camelCase field names)."""
        values = {}
        for field in fields(cls):
            key = "".join(part if i == 0 else part.title() for i, part in enumerate(field.name.split("_")))
            value = context(key)
            if value is not None:
                values[field.name] = int(str(value))
        return cls(**values)

    @property
    def reserved(self) -> int:
        return self.receive_concurrency + self.fanout_concurrency + self.push_concurrency

    def __post_init__(self) -> None:
        for field in fields(self):
            if getattr(self, field.name) < 1:
                raise ValueError(f"{field.name} must be at least 1")
        if not 1 <= self.fanout_parallelization <= 10:
            raise ValueError("fanoutParallelization must be between 1 and 10")
        if self.push_concurrency < 2:
            raise ValueError("pushConcurrency must be at least 2 (the least maximum concurrency SQS allows)")
        if self.receive_memory not in POLL_MEMORY_SIZES:
            raise ValueError(f"receiveMemory must be one of {POLL_MEMORY_SIZES}")
        if self.account_concurrency - self.reserved < MIN_UNRESERVED:
            raise ValueError(
                f"receiveConcurrency + fanoutConcurrency + pushConcurrency = {self.reserved} would leave less than "
                f"{MIN_UNRESERVED} of accountConcurrency ({self.account_concurrency}) unreserved: Lambda refuses "
                "that deployment. Lower them, or raise the account's quota and set accountConcurrency."
            )
