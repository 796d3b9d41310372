"""`make run WAIT_TIER=pushpin`: the local server behind the wait tier (Debian's Pushpin and the waker,
`wait_tier/`), as on AWS with `-c waitTier=grip`: clients call Pushpin (`MNS_PORT`, 8080), which holds the
receives that find nothing; the server itself answers on `MNS_ORIGIN_PORT` (8081: the direct route, no hold).
The Grip-Sig key is made fresh for each run; the waker and Pushpin's control API listen on loopback ports beside
(`MNS_WAKER_PORT`, 8082; `MNS_PUSHPIN_CONTROL_PORT`, 8083)."""

from __future__ import annotations

import os
import runpy
import secrets
import tempfile
from pathlib import Path

from mnsd.settings import GRIP_KEY, WAIT_TIER_WAKE_URL
from wait_tier import pushpin
from wait_tier.tier import Tier


def main() -> None:
    env = os.environ
    public = int(env.get("MNS_PORT", "8080"))
    origin = int(env.get("MNS_ORIGIN_PORT", str(public + 1)))
    waker = int(env.get("MNS_WAKER_PORT", str(public + 2)))
    control = int(env.get("MNS_PUSHPIN_CONTROL_PORT", str(public + 3)))
    if not pushpin.installed():
        raise SystemExit("pushpin is not installed: `make pushpin` installs Debian's")
    key = secrets.token_urlsafe(32)
    directory = Path(env.get("MNS_PUSHPIN_DIR") or tempfile.mkdtemp(prefix="mns-pushpin-"))
    tier = Tier(f"http://127.0.0.1:{origin}", public, control, waker, key, directory).start()
    env.update({GRIP_KEY: key, WAIT_TIER_WAKE_URL: tier.wake_url, "MNS_PORT": str(origin)})
    print(f"wait tier (Pushpin) on {tier.url}: call this; the server answers directly on port {origin}", flush=True)
    try:
        runpy.run_module("local_runtime", run_name="__main__")  # `make run`'s server, until Ctrl-C
    finally:
        tier.stop()


if __name__ == "__main__":
    main()
