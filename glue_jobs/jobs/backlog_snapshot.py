"""Glue job `backlog_snapshot`: per queue: Active / Inactive / Delayed messages and the oldest message's age. Needs
--backlog_export (the daily snapshot of each queue's counts), or --messages_export and --meta_export (full exports).

Arguments: see glue_jobs/jobs/entry.py. Ship the `glue_jobs` package with `--extra-py-files`.
"""

from glue_jobs.jobs.entry import main

if __name__ == "__main__":
    main("backlog_snapshot")
