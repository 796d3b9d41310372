"""Access keys and policies of a deployed stack or of the local runtime: `python -m admin --help`."""
