import os

# Lambda's structured logs and metrics go to CloudWatch; locally the server prints one line per request.
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")

from local_runtime.startup import main  # noqa: E402

main()
