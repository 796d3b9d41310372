"""`make run WAIT_TIER=holder`: the local server behind the wait tier (the holder, `wait_tier/`, in a process of its
own), as on AWS with `-c waitTier=grip`: clients call the holder (`MNS_PORT`, 8080), which holds the receives that
find nothing; the server itself answers on `MNS_ORIGIN_PORT` (8081: the direct route, no hold). The tier's key is
made fresh for each run; the holder takes wakes on `MNS_WAKE_PORT` (8082, loopback)."""

from __future__ import annotations

import os
import runpy
import secrets

from mnsd.ground.settings import WAIT_TIER_KEY, WAIT_TIER_WAKE_URL
from mnsd.waiting.contract import WAKE_PATH
from wait_tier.tier import Tier, local_url


def main() -> None:
    env = os.environ
    public = int(env.get("MNS_PORT", "8080"))
    origin = int(env.get("MNS_ORIGIN_PORT", str(public + 1)))
    wakes = int(env.get("MNS_WAKE_PORT", str(public + 2)))
    key = secrets.token_urlsafe(32)
    tier = Tier(f"http://127.0.0.1:{origin}", public, wakes, key)
    env.update({WAIT_TIER_KEY: key, WAIT_TIER_WAKE_URL: local_url(wakes, WAKE_PATH), "MNS_PORT": str(origin)})
    tier.start()
    print(f"wait tier on {tier.url}: call this; the server answers directly on port {origin}", flush=True)
    try:
        runpy.run_module("local_runtime", run_name="__main__")  # `make run`'s server, until Ctrl-C
    finally:
        tier.stop()


if __name__ == "__main__":
    main()
