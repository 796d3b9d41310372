"""The catch-all ($default) route: anything no MNS route matches gets an MNS error, not a platform one."""

from mnsd.entry.lambda_handler import make_handler

handler = make_handler(None)
