"""Glue job `poison_messages`: messages received at least --poison_threshold times (default 5) and never deleted. Needs --log_export.

Arguments: see glue_jobs/jobs/entry.py. Ship the `glue_jobs` package with `--extra-py-files`.
"""

from glue_jobs.jobs.entry import main

if __name__ == "__main__":
    main("poison_messages")
