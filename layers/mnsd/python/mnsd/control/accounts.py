"""An account's own settings (GetAccountAttributes / SetAccountAttributes: its LoggingBucket), kept in the catalog.

Who may act for an account is `mnsd.access` (its keys, policies and tokens); how many requests it may make in a
second is `mnsd.control.limits`.
"""

from __future__ import annotations

from dataclasses import replace

from mnsd.control.catalog import AccountAttributes, Catalog


class AccountService:
    """Account-level settings, read and written through the catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def attributes(self, account_id: str) -> AccountAttributes:
        return self.catalog.account_attributes(account_id)

    def set_logging_bucket(self, account_id: str, bucket: str) -> None:
        current = self.catalog.account_attributes(account_id)
        self.catalog.set_account_attributes(account_id, replace(current, logging_bucket=bucket))

    def set_logging(self, account_id: str, bucket: str, store: str) -> None:
        """The OpenAPI's SetAccountAttributes: the bucket (its ProjectName, "" to stop) and the store name beside it."""
        current = self.catalog.account_attributes(account_id)
        self.catalog.set_account_attributes(account_id, replace(current, logging_bucket=bucket, log_store=store))
