"""Write DynamoDB exports (log, message and meta tables) in the layout AWS writes, of any size.

    .venv/bin/python -m tests.support.export_generator --out DIR --records 1000000 [--queues 20] [--topics 4]
        [--subscriptions 3] [--messages N] [--files 8] [--seed 7] [--layout aws|moto]

writes `DIR/log`, `DIR/messages`, `DIR/meta`, each `AWSDynamoDB/<export-id>/` with `data/*.json.gz`
(one `{"Item": {...}}` per line) and, for the AWS layout, `manifest-summary.json` and
`manifest-files.json`; the moto layout is one `data/<name>.gz` and no manifest.

The log is simulated message lifecycles over the 24 hours before the export time: queue messages
(send, receives with redeliveries, poison messages received 5-8 times and never deleted, deletes,
expiries) and topic messages (publish, push attempts with retries and drops per subscription).
Lines are in lifecycle order, not time order (every file holds events of every hour), about 0.2 %
are written twice (stream retries), about 1 % lack an optional attribute, and the log TTL is 12
hours, so about half the records are past their TTL and still present, as DynamoDB leaves them.
`write_export` and `ddb_item` are also what tests use to build small exports by hand.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import gzip
import hashlib
import json
import random
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

HOUR_MS = 3_600_000
LOG_TTL_S = 12 * 3600
ACCOUNT_IDS = ("1000000000000001", "1000000000000002")


def ddb_value(value: Any) -> dict[str, Any]:
    """A Python value as DynamoDB JSON: str -> S, int -> N, bool -> BOOL, bytes -> B, list -> L, dict -> M."""
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, int):
        return {"N": str(value)}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, bytes):
        return {"B": base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        return {"L": [ddb_value(v) for v in value]}
    if isinstance(value, dict):
        return {"M": {k: ddb_value(v) for k, v in value.items()}}
    raise TypeError(f"no DynamoDB type for {value!r}")


def ddb_item(record: dict[str, Any]) -> str:
    """One export line; attributes whose value is None are left out (as DynamoDB has no null here)."""
    return json.dumps({"Item": {k: ddb_value(v) for k, v in record.items() if v is not None}})


def iso_ms(epoch_ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(epoch_ms / 1000, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def write_export(
    folder: Path,
    lines: Iterable[str],
    *,
    export_time_ms: int,
    layout: str = "aws",
    files: int = 1,
    export_id: str | None = None,
) -> Path:
    """Write one export of `lines` under `folder/AWSDynamoDB/<export-id>/`; returns that folder.

    `aws`: `files` data files `data/<name>.json.gz` (lines dealt round-robin) plus both manifests.
    `moto`: one `data/<export-id>.gz` (moto names it by a uuid), no manifest."""
    export_id = export_id or f"{export_time_ms:014d}-{hashlib.md5(str(folder).encode()).hexdigest()[:8]}"
    root = folder / "AWSDynamoDB" / export_id
    (root / "data").mkdir(parents=True, exist_ok=True)
    if layout == "moto":
        names = [f"{export_id}.gz"]
    else:
        names = [f"{hashlib.md5(f'{export_id}/{i}'.encode()).hexdigest()[:26]}.json.gz" for i in range(files)]
    streams = [gzip.open(root / "data" / name, "wt", encoding="utf-8", compresslevel=1) for name in names]
    counts = [0] * len(names)
    batch: list[list[str]] = [[] for _ in names]
    for n, line in enumerate(lines):
        slot = n % len(names)
        batch[slot].append(line)
        counts[slot] += 1
        if len(batch[slot]) >= 4096:
            streams[slot].write("\n".join(batch[slot]) + "\n")
            batch[slot] = []
    for stream, pending in zip(streams, batch, strict=True):
        if pending:
            stream.write("\n".join(pending) + "\n")
        stream.close()
    if layout == "aws":
        _write_manifests(root, export_id, names, counts, export_time_ms)
    return root


def _write_manifests(root: Path, export_id: str, names: list[str], counts: list[int], export_time_ms: int) -> None:
    prefix = f"exports/AWSDynamoDB/{export_id}"
    with open(root / "manifest-files.json", "w", encoding="utf-8") as out:
        for name, count in zip(names, counts, strict=True):
            digest = hashlib.md5((root / "data" / name).read_bytes()).hexdigest()
            entry = {
                "itemCount": count,
                "md5Checksum": digest,
                "etag": digest,
                "dataFileS3Key": f"{prefix}/data/{name}",
            }
            out.write(json.dumps(entry) + "\n")
    summary = {
        "version": "2020-06-30",
        "exportArn": f"arn:aws:dynamodb:us-east-1:000000000000:table/t/export/{export_id}",
        "startTime": iso_ms(export_time_ms),
        "endTime": iso_ms(export_time_ms + 300_000),
        "tableArn": "arn:aws:dynamodb:us-east-1:000000000000:table/t",
        "exportTime": iso_ms(export_time_ms),
        "s3Bucket": "analytics-exports",
        "s3Prefix": "exports",
        "s3SseAlgorithm": "AES256",
        "manifestFilesS3Key": f"{prefix}/manifest-files.json",
        "itemCount": sum(counts),
        "outputFormat": "DYNAMODB_JSON",
    }
    (root / "manifest-summary.json").write_text(json.dumps(summary), encoding="utf-8")


class LogSimulator:
    """Operation-log lines of simulated lifecycles, as raw JSON strings (fast enough for 10 M records)."""

    def __init__(self, rng: random.Random, export_time_ms: int, queues: int, topics: int, subscriptions: int):
        self.rng = rng
        self.start_ms = export_time_ms - 24 * HOUR_MS
        self.queues = [(ACCOUNT_IDS[i % 2], f"queue-{i:03d}") for i in range(queues)]
        self.topics = [(ACCOUNT_IDS[i % 2], f"topic-{i:03d}") for i in range(topics)]
        self.subscriptions = [f"sub-{j}" for j in range(subscriptions)]
        self.events = 0
        self.messages = 0

    def _line(self, account: str, kind: str, resource: str, event: str, at: int, message_id: str, extra: str) -> str:
        self.events += 1
        return (
            f'{{"Item": {{"pk": {{"S": "{account}#{kind}#{resource}"}}, "sk": {{"S": "{at:013d}#{self.events:012x}"}}, '
            f'"account": {{"S": "{account}"}}, "kind": {{"S": "{kind}"}}, "resource": {{"S": "{resource}"}}, '
            f'"event": {{"S": "{event}"}}, "time": {{"N": "{at}"}}, "message_id": {{"S": "{message_id}"}}, '
            f'{extra}"x": {{"N": "{at // 1000 + LOG_TTL_S}"}}}}}}'
        )

    def _new_message(self, places: list[tuple[str, str]]) -> tuple[str, str, str, int]:
        """A new message in one of `places`: its account, queue or topic, id, and time sent (within the day)."""
        account, resource = self.rng.choice(places)
        self.messages += 1
        return account, resource, f"{self.messages:032X}", self.start_ms + self.rng.randrange(24 * HOUR_MS - 600_000)

    def queue_lifecycle(self) -> Iterator[str]:
        rng = self.rng
        account, queue, mid, sent = self._new_message(self.queues)
        delay = 30 if rng.random() < 0.1 else 0
        yield self._line(
            account, "queue", queue, "send", sent, mid,
            f'"enqueue_time": {{"N": "{sent}"}}, "priority": {{"N": "8"}}, "delay": {{"N": "{delay}"}}, '
            f'"body_size": {{"N": "{rng.randrange(64, 4096)}"}}, ',
        )  # fmt: skip
        roll = rng.random()
        receives = rng.randrange(5, 9) if roll < 0.01 else (rng.randrange(2, 4) if roll < 0.11 else 1)
        at = sent + delay * 1000 + int(rng.expovariate(1 / 2000))
        first = at
        for count in range(1, receives + 1):
            enqueue = "" if rng.random() < 0.01 else f'"enqueue_time": {{"N": "{sent}"}}, '
            yield self._line(
                account, "queue", queue, "receive", at, mid,
                f'{enqueue}"dequeue_count": {{"N": "{count}"}}, "first_dequeue_time": {{"N": "{first}"}}, ',
            )  # fmt: skip
            at += 30_000 + rng.randrange(1000)
        state = f'"enqueue_time": {{"N": "{sent}"}}, "dequeue_count": {{"N": "{receives}"}}, '
        if receives >= 5:
            return
        if rng.random() < 0.03:
            if sent + 3_600_000 < self.start_ms + 24 * HOUR_MS:  # no event after the export time
                yield self._line(account, "queue", queue, "expire", sent + 3_600_000, mid, state)
        else:
            done = at - 30_000 + rng.randrange(20, 5000)
            yield self._line(
                account, "queue", queue, "delete", done, mid, state + f'"first_dequeue_time": {{"N": "{first}"}}, '
            )

    def topic_lifecycle(self) -> Iterator[str]:
        rng = self.rng
        account, topic, mid, published = self._new_message(self.topics)
        yield self._line(
            account, "topic", topic, "publish", published, mid, f'"body_size": {{"N": "{rng.randrange(64, 4096)}"}}, '
        )
        for sub in self.subscriptions:
            roll = rng.random()
            failures = 0 if roll < 0.9 else (rng.randrange(1, 4) if roll < 0.98 else 4)
            at = published
            for attempt in range(1, failures + 2):
                if attempt > 4:
                    extra = f'"subscription": {{"S": "{sub}"}}, "publish_time": {{"N": "{published}"}}, '
                    yield self._line(account, "topic", topic, "drop", at + 1, mid, extra)
                    break
                at += rng.randrange(20, 400) if attempt == 1 else 10_000 + rng.randrange(10_000)
                ok = attempt > failures
                extra = (
                    f'"subscription": {{"S": "{sub}"}}, "endpoint_kind": {{"S": "http"}}, '
                    f'"attempt": {{"N": "{attempt}"}}, "outcome": {{"S": "{"success" if ok else "failure"}"}}, '
                    f'"status": {{"N": "{200 if ok else 503}"}}, "latency_ms": {{"N": "{at - published}"}}, '
                    f'"publish_time": {{"N": "{published}"}}, '
                )
                yield self._line(account, "topic", topic, "push", at, mid, extra)

    def lines(self, records: int) -> Iterator[str]:
        """At least `records` lines (a lifecycle is never cut); about 0.2 % of them written twice."""
        written = 0
        while written < records:
            lifecycle = self.queue_lifecycle() if self.rng.random() < 0.6 else self.topic_lifecycle()
            for line in lifecycle:
                yield line
                written += 1
                if self.rng.random() < 0.002:
                    yield line
                    written += 1


def message_items(rng: random.Random, export_time_ms: int, queue_ids: list[str], count: int) -> Iterator[str]:
    """Lease items (Active / Inactive / Delayed, about 5 % past their TTL) and some out-of-line body items."""
    for n in range(count):
        queue_id = queue_ids[n % len(queue_ids)]
        mid = f"{n:032X}"
        enqueued = export_time_ms - rng.randrange(1, 6 * HOUR_MS)
        roll = rng.random()
        if roll < 0.6:
            visible, dequeues = enqueued, 0
        elif roll < 0.8:
            visible, dequeues = export_time_ms + rng.randrange(1, 30_000), rng.randrange(1, 4)
        else:
            visible, dequeues = export_time_ms + rng.randrange(1, 60_000), 0
        expiry = export_time_ms // 1000 - rng.randrange(1, 3600) if rng.random() < 0.05 else enqueued // 1000 + 86400
        record = {"pk": queue_id, "sk": f"L08{visible:013d}{mid}", "id": mid, "v": visible, "r": dequeues + 1}
        record |= {"d": dequeues, "e": enqueued, "x": expiry, "m": hashlib.md5(mid.encode()).hexdigest()}
        if dequeues:
            record["f"] = enqueued + 1000
        if n % 10 == 0:
            record["o"] = True
            yield ddb_item({"pk": queue_id, "sk": f"B{mid}", "x": expiry, "b": "x" * 2000})
        else:
            record["b"] = "hello"
        yield ddb_item(record)


def meta_items(queues: list[tuple[str, str]], topics: list[tuple[str, str]], created_ms: int) -> Iterator[str]:
    for account, name in queues:
        yield ddb_item(
            {"pk": f"{account}#queue", "sk": name, "queue_id": f"q-{name}-1", "create_time": created_ms // 1000}
        )
    for account, name in topics:
        yield ddb_item({"pk": f"{account}#topic", "sk": name, "topic_id": f"t-{name}-1"})


def generate(
    out: Path,
    records: int,
    *,
    queues: int = 20,
    topics: int = 4,
    subscriptions: int = 3,
    messages: int | None = None,
    files: int = 8,
    seed: int = 7,
    layout: str = "aws",
    export_time_ms: int = 1_795_600_800_000,
) -> dict[str, int]:
    """Write the three exports under `out`; returns the items written per export (log, messages, meta)."""
    rng = random.Random(seed)
    sim = LogSimulator(rng, export_time_ms, queues, topics, subscriptions)
    counts = {"log": 0, "messages": 0, "meta": 0}

    def counted(name: str, lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            counts[name] += 1
            yield line

    log_lines = counted("log", sim.lines(records))
    write_export(out / "log", log_lines, export_time_ms=export_time_ms, layout=layout, files=files)
    # queue ids of the meta table, plus one orphaned incarnation (a deleted queue awaiting TTL)
    queue_ids = [f"q-{name}-1" for _, name in sim.queues] + ["q-deleted-0"]
    leases = records // 10 if messages is None else messages
    message_lines = counted("messages", message_items(rng, export_time_ms, queue_ids, leases))
    write_export(
        out / "messages", message_lines, export_time_ms=export_time_ms, layout=layout, files=max(1, files // 4)
    )
    meta_lines = counted("meta", meta_items(sim.queues, sim.topics, export_time_ms - 48 * HOUR_MS))
    write_export(out / "meta", meta_lines, export_time_ms=export_time_ms, layout=layout)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description="Write realistic DynamoDB exports of the MNS tables.")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--records", type=int, default=100_000, help="log records (at least; lifecycles are whole)")
    parser.add_argument("--queues", type=int, default=20)
    parser.add_argument("--topics", type=int, default=4)
    parser.add_argument("--subscriptions", type=int, default=3, help="per topic")
    parser.add_argument("--messages", type=int, help="message-table leases (default: records / 10)")
    parser.add_argument("--files", type=int, default=8, help="data files of the log export")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--layout", choices=("aws", "moto"), default="aws")
    started = time.perf_counter()
    counts = generate(**vars(parser.parse_args()))  # the options are named as generate's parameters
    print(
        f"wrote {counts['log']:,} log items, {counts['messages']:,} message items, {counts['meta']} meta items "
        f"in {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
