"""`python -m wait_tier`: one tier instance, as the container runs it (settings from the environment):
WAIT_TIER_ORIGIN, WAIT_TIER_KEY, WAIT_TIER_PORT (7999), WAIT_TIER_WAKER_PORT (7990), WAIT_TIER_CONTROL_PORT (5561),
WAIT_TIER_BIND (127.0.0.1), WAIT_TIER_DIR, and the peers: WAIT_TIER_PEERS (wake URLs) or
WAIT_TIER_CLOUDMAP_NAMESPACE with WAIT_TIER_CLOUDMAP_SERVICE (and AWS_REGION); WAIT_TIER_DRAIN_SECONDS (0) between
SIGTERM and the stop."""

from __future__ import annotations

import logging
import os
import signal
import tempfile
import threading
import time
from pathlib import Path

from wait_tier import peers
from wait_tier.tier import Tier


def main() -> None:
    env = os.environ
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    waker_port = int(env.get("WAIT_TIER_WAKER_PORT", "7990"))
    if env.get("WAIT_TIER_CLOUDMAP_NAMESPACE"):
        found = peers.cloud_map(
            env["WAIT_TIER_CLOUDMAP_NAMESPACE"], env["WAIT_TIER_CLOUDMAP_SERVICE"], waker_port, env["AWS_REGION"]
        )
    else:
        found = peers.fixed(env.get("WAIT_TIER_PEERS", ""))
    tier = Tier(
        origin=env["WAIT_TIER_ORIGIN"],
        port=int(env.get("WAIT_TIER_PORT", "7999")),
        control_port=int(env.get("WAIT_TIER_CONTROL_PORT", "5561")),
        waker_port=waker_port,
        key=env["WAIT_TIER_KEY"],
        directory=Path(env.get("WAIT_TIER_DIR") or tempfile.mkdtemp(prefix="wait-tier-")),
        bind=env.get("WAIT_TIER_BIND", "127.0.0.1"),
        peers=found,
    ).start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    logging.getLogger("wait_tier").info("holding on %s, origin %s", tier.url, tier.origin)
    done.wait()
    # In-flight answers of the origin finish; what is held is dropped (its clients poll again).
    time.sleep(float(env.get("WAIT_TIER_DRAIN_SECONDS", "0")))
    tier.stop()


if __name__ == "__main__":
    main()
