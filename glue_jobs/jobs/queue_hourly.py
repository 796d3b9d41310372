"""Glue job `queue_hourly`: per queue and hour: sends, receives, deletes, redeliveries, expired, time-to-first-receive and time-in-queue p50/p95/p99. Needs --log_export.

Arguments: see glue_jobs/jobs/entry.py. Ship the `glue_jobs` package with `--extra-py-files`.
"""

from glue_jobs.jobs.entry import main

if __name__ == "__main__":
    main("queue_hourly")
