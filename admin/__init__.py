"""Access key administration of a deployed stack: `python -m admin --help`."""
