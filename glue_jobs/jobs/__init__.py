"""Glue entry scripts: one per job, each a thin `main()`; `awsglue` is imported only here."""
