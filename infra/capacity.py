"""How much of the account's Lambda concurrency each class of function may take, and the receive route's size.

Every waiting ReceiveMessage holds one execution of `get_messages` for up to 28 s, so without a bound a few
hundred consumer threads would take the whole account pool and throttle sends, deletes and push. So:

- `get_messages` (receive and peek) has `receiveConcurrency` reserved: at most that many polls run at once,
  and they always can (a burst of sends cannot throttle consumers either);
- the fan-out has `fanoutConcurrency` reserved, the push worker `pushConcurrency` and the first-attempt function
  `firstAttemptConcurrency` (each also its queue's maximum concurrency, so its SQS pollers never run into
  throttles);
- every other function (sends, deletes, the control plane) shares what is left, which AWS keeps at 100 at least.

A reservation is taken from the account's pool whether used or not, so the sum must leave AWS's minimum
unreserved: the synth refuses a configuration that would not deploy in an account of `accountConcurrency`.

An account whose quota is at most that minimum (a new account starts at 10) can reserve nothing: there, and
wherever `reservedConcurrency` is false, no function has reserved concurrency. Every function then draws on
the one pool; long polls are bounded in time by the application (`MNS_MAX_POLL_SECONDS`) and in number only by
the pool itself. The push worker's queue keeps `pushConcurrency` as its maximum concurrency (SQS's own bound,
not a reservation). All values are CDK context (cdk.json or `-c name=value`). Sizing rule: README,
"Lambda concurrency".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

# AWS keeps this much of a Region's concurrency unreserved; a reservation that would go below is refused.
MIN_UNRESERVED = 100
POLL_MEMORY_SIZES = (128, 256, 512, 1024)
ROUTE_MEMORY = 256  # MB of every API route's function but the long-poll one's (`receive_memory`)
# The least and greatest maximum concurrency of an SQS event source.
SQS_MAXIMUM_CONCURRENCY = (2, 1000)


def context_key(name: str) -> str:
    """`receive_concurrency` -> `receiveConcurrency`."""
    return "".join(part if i == 0 else part.title() for i, part in enumerate(name.split("_")))


def flag(value: object) -> bool:
    """A boolean context value: cdk.json gives `false`, `-c name=false` the string "false"."""
    text = str(value).lower()
    if text not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")
    return text == "true"


@dataclass(frozen=True)
class Capacity:
    account_concurrency: int = 1000  # the account's concurrency quota in the Region (the AWS default)
    receive_concurrency: int = 100  # concurrent receives and peeks (long polls) at most
    fanout_concurrency: int = 20  # >= stream shards x fanout_parallelization, or fan-out waits for its turn
    fanout_parallelization: int = 4  # concurrent batches per stream shard (1..10)
    push_concurrency: int = 10  # push worker: concurrent retry attempts (batches) at most
    # First attempts to HTTP, mail and SMS endpoints: concurrent batches at most. A subscription whose endpoint
    # hangs holds one of them 5 s a batch: keep it above the number of endpoints that may hang at once.
    first_attempt_concurrency: int = 10
    receive_memory: int = 256  # MB of the receive route, which waits most of its billed time
    # Reserve the four concurrencies above. None: reserve unless the account can reserve nothing at all.
    reserved_concurrency: bool | None = None

    @classmethod
    def from_context(cls, context: Callable[[str], object]) -> Capacity:
        """From the CDK context keys `accountConcurrency`, `receiveConcurrency`, ... (camelCase field names)."""
        values: dict[str, int | bool] = {}
        for field in fields(cls):
            value = context(context_key(field.name))
            if value is None:
                continue
            values[field.name] = flag(value) if field.name == "reserved_concurrency" else int(str(value))
        return cls(**values)  # type: ignore[arg-type]

    @property
    def reserves(self) -> bool:
        """Whether the four function classes get reserved concurrency."""
        if self.reserved_concurrency is None:
            return self.account_concurrency > MIN_UNRESERVED
        return self.reserved_concurrency

    @property
    def reserved(self) -> int:
        """The concurrency taken from the account's pool by reservations."""
        if not self.reserves:
            return 0
        return (
            self.receive_concurrency + self.fanout_concurrency + self.push_concurrency + self.first_attempt_concurrency
        )

    def reservation(self, concurrency: int) -> int | None:
        """A function's reserved concurrency: `concurrency`, or none when nothing is reserved."""
        return concurrency if self.reserves else None

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name != "reserved_concurrency" and value < 1:
                raise ValueError(f"{context_key(field.name)} must be at least 1")
        if not 1 <= self.fanout_parallelization <= 10:
            raise ValueError("fanoutParallelization must be between 1 and 10")
        least, most = SQS_MAXIMUM_CONCURRENCY
        for name in ("push_concurrency", "first_attempt_concurrency"):
            if not least <= getattr(self, name) <= most:
                raise ValueError(
                    f"{context_key(name)} must be between {least} and {most} (the maximum concurrency SQS allows)"
                )
        if self.receive_memory not in POLL_MEMORY_SIZES:
            raise ValueError(f"receiveMemory must be one of {POLL_MEMORY_SIZES}")
        if self.reserves and self.account_concurrency - self.reserved < MIN_UNRESERVED:
            raise ValueError(
                "receiveConcurrency + fanoutConcurrency + pushConcurrency + firstAttemptConcurrency = "
                f"{self.reserved} would leave less than "
                f"{MIN_UNRESERVED} of accountConcurrency ({self.account_concurrency}) unreserved: Lambda refuses "
                "that deployment. Lower them, raise the account's quota and set accountConcurrency, or deploy "
                "without reservations (-c reservedConcurrency=false)."
            )
