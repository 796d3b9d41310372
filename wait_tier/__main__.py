"""`python -m wait_tier`: one holder, as the container runs it (settings from the environment): WAIT_TIER_ORIGIN
(and WAIT_TIER_ORIGIN_<METHOD>, the origin of that method's requests: on AWS the send and delete functions' URLs),
WAIT_TIER_KEY, WAIT_TIER_PORT (7999: clients), WAIT_TIER_WAKE_PORT (7990: wakes, counters), WAIT_TIER_BIND
(127.0.0.1), and the other instances: WAIT_TIER_PEERS (wake URLs) or WAIT_TIER_CLOUDMAP_NAMESPACE with
WAIT_TIER_CLOUDMAP_SERVICE (and AWS_REGION); WAIT_TIER_DRAIN_SECONDS (0) between SIGTERM and the stop;
WAIT_TIER_COALESCE_MS (`coalesce.WINDOW_MS`; 0: off), the window single requests of a queue are coalesced in."""

from __future__ import annotations

import os

# aiohttp's Python HTTP parser, not its C one: it passes any method and a path with UTF-8 in it on to the server, which
# answers them (the C parser refuses both itself). Set before aiohttp is imported.
os.environ.setdefault("AIOHTTP_NO_EXTENSIONS", "1")

import asyncio
import logging
import resource
import signal

from aiohttp import web

from wait_tier import peers
from wait_tier.coalesce import WINDOW_MS, Coalescing
from wait_tier.holder import Holder, client_server, wake_application

BACKLOG = 4096  # (a fleet's consumers connect at once)
ORIGIN_OF = "WAIT_TIER_ORIGIN_"  # + a method: that method's origin


async def serve(env: dict[str, str]) -> None:
    wake_port = int(env.get("WAIT_TIER_WAKE_PORT", "7990"))
    if env.get("WAIT_TIER_CLOUDMAP_NAMESPACE"):
        found = peers.cloud_map(
            env["WAIT_TIER_CLOUDMAP_NAMESPACE"], env["WAIT_TIER_CLOUDMAP_SERVICE"], wake_port, env["AWS_REGION"]
        )
    else:
        found = peers.fixed(env.get("WAIT_TIER_PEERS", ""))
    window = float(env.get("WAIT_TIER_COALESCE_MS", str(WINDOW_MS)))
    by_method = {name.removeprefix(ORIGIN_OF): url for name, url in env.items() if name.startswith(ORIGIN_OF)}
    origin = Coalescing(env["WAIT_TIER_ORIGIN"], env["WAIT_TIER_KEY"], window, by_method=by_method)
    holder = Holder(origin, found)
    bind = env.get("WAIT_TIER_BIND", "127.0.0.1")
    runners: list[web.BaseRunner] = [
        web.ServerRunner(client_server(holder), access_log=None),
        web.AppRunner(wake_application(holder), access_log=None),
    ]
    for runner, port in zip(runners, (int(env.get("WAIT_TIER_PORT", "7999")), wake_port), strict=True):
        await runner.setup()
        await web.TCPSite(runner, bind, port, backlog=BACKLOG, reuse_address=True).start()
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, done.set)
    logging.getLogger("wait_tier").info(
        "holding on %s:%s, origin %s (by method: %s), coalescing window %s ms",
        bind,
        env.get("WAIT_TIER_PORT"),
        holder.origin.url,
        origin.by_method,
        window,
    )
    await done.wait()
    # In-flight answers of the origin finish; what is held is dropped (its clients poll again).
    await asyncio.sleep(float(env.get("WAIT_TIER_DRAIN_SECONDS", "0")))
    for runner in runners:
        await runner.cleanup()
    await holder.close()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # a connection held per waiting client
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    asyncio.run(serve(dict(os.environ)))


if __name__ == "__main__":
    main()
