"""Glue job `subscription_hourly`: per subscription and hour: deliveries, first-try successes, retries, drops, delivery latency p50/p95/p99. Needs --log_export.

Arguments: see glue_jobs/jobs/entry.py. Ship the `glue_jobs` package with `--extra-py-files`.
"""

from glue_jobs.jobs.entry import main

if __name__ == "__main__":
    main("subscription_hourly")
