"""The tool's own error; the clients' (`mnsclient.errors.ServiceError`) is an endpoint's answer."""

from __future__ import annotations


class MigrationError(Exception):
    """A problem the user must fix before the command can run (credentials, endpoints, arguments)."""
