"""Daily (EventBridge, beside the table exports): every queue's counts to S3 for the analytics job `backlog_snapshot`."""

from mnsd.entry.snapshot import make_snapshot_handler

handler = make_snapshot_handler()
