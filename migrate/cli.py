"""python -m migrate: copy an MNS estate from a source service to a target one and move its waiting messages.

    plan     what apply would create, change or leave alone on the target (--json for scripts)
    apply    make the target match (run it again: nothing changes; stopped half-way: run it again)
    drain    move every waiting message once, then stop
    bridge   move messages as they arrive, until stopped (Ctrl-C, or --for SECONDS)
    verify   configuration drift and messages still on the source; exit 1 on a difference

Exit status: 0 done and nothing differs; 1 a difference, a failure or messages left (each named); 2 a usage or
credentials problem; 130 interrupted. Secrets are never printed.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TextIO

from migrate import rendering, verifying
from migrate.applying import Applier
from migrate.credentials import CONFIG_FILE, DEFAULT_PREFIX, Side, resolve_side
from migrate.errors import MigrationError
from migrate.estate import QUEUE, Estate, read_estate
from migrate.journal import Journal
from migrate.moving import Options, QueueMove
from migrate.planning import NOT_CARRIED, TARGET_ONLY, Plan, make_plan
from migrate.progress import Progress, summary, summary_json
from mnsclient.errors import ServiceError
from mnsclient.retrying import retrying

OK, DIFFERENT, USAGE, INTERRUPTED = 0, 1, 2, 130
DONE = {"create": "created", "update": "changed"}
STATE = Path(".mns-migrate")


def _parser(environ: Mapping[str, str]) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    for side in ("source", "target"):
        group = common.add_argument_group(f"{side} (default: ${DEFAULT_PREFIX[side]}ENDPOINT, ...ACCESS_KEY_ID, ...)")
        group.add_argument(f"--{side}-endpoint", metavar="URL", help="the account's MNS endpoint")
        group.add_argument(f"--{side}-openapi-endpoint", metavar="URL", help="its Mns-open endpoint (default: derived)")
        group.add_argument(f"--{side}-profile", metavar="NAME", help="a profile of the aliyun CLI's configuration")
        group.add_argument(
            f"--{side}-env", metavar="PREFIX", help=f"environment prefix (default {DEFAULT_PREFIX[side]})"
        )
    common.add_argument(
        "--aliyun-config", type=Path, default=CONFIG_FILE, metavar="FILE", help=f"(default {CONFIG_FILE})"
    )
    common.add_argument("--prefix", default="", help="only the queues and topics whose names start so")
    common.add_argument("--json", action="store_true", help="the result as JSON on stdout")
    common.add_argument(
        "--map-endpoint",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="subscribe NEW where the source's subscription pushes to OLD, e.g. an acs:fc:... function to a Lambda "
        "function's ARN, an acs:eventbridge:... bus to an EventBridge bus's ARN (repeatable)",
    )
    common.add_argument("--parallel", type=int, default=4, metavar="N", help="queues read or moved at once (default 4)")
    common.add_argument(
        "--retry-for",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="how long a side may throttle or be unreachable before giving up (default 300)",
    )
    parser = argparse.ArgumentParser(
        prog="python -m migrate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    plan = commands.add_parser("plan", parents=[common], help="what apply would do")
    plan.add_argument("--all", action="store_true", help="list unchanged resources too")
    commands.add_parser("apply", parents=[common], help="make the target match the source")
    for name, text in (("drain", "move waiting messages once"), ("bridge", "move messages until stopped")):
        mover = commands.add_parser(name, parents=[common], help=text)
        mover.add_argument("--queue", action="append", default=[], metavar="NAME", help="only this queue (repeatable)")
        mover.add_argument(
            "--state",
            type=Path,
            default=STATE,
            metavar="DIR",
            help=f"where copied message ids are kept for a rerun (default {STATE})",
        )
        mover.add_argument(
            "--settle",
            type=float,
            default=120.0,
            metavar="SECONDS",
            help="drain: how long to wait for delayed and in-flight messages (default 120)",
        )
        mover.add_argument("--for", dest="for_seconds", type=float, metavar="SECONDS", help="bridge: stop after")
    commands.add_parser("verify", parents=[common], help="compare the target with the source")
    return parser


class Console:
    """stdout and stderr with the sides' secrets blanked out, whatever printed them."""

    def __init__(self, out: TextIO, err: TextIO, secrets: Sequence[str] = ()) -> None:
        self.out, self.err, self.secrets = out, err, tuple(secrets)

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "****")
        return text

    def say(self, text: str) -> None:
        self.out.write(self.scrub(text) + "\n")
        self.out.flush()

    def warn(self, text: str) -> None:
        self.err.write(self.scrub(text) + "\n")
        self.err.flush()


def _side(args: argparse.Namespace, name: str, environ: Mapping[str, str]) -> Side:
    return resolve_side(
        name,
        environ,
        endpoint=getattr(args, f"{name}_endpoint"),
        openapi=getattr(args, f"{name}_openapi_endpoint"),
        profile=getattr(args, f"{name}_profile"),
        prefix=getattr(args, f"{name}_env"),
        config_file=args.aliyun_config,
    )


def endpoint_map(given: Sequence[str]) -> dict[str, str]:
    """The `--map-endpoint OLD=NEW` pairs; a MigrationError (usage) for one without both sides, or OLD given twice."""
    found: dict[str, str] = {}
    for pair in given:
        old, equals, new = pair.partition("=")
        old, new = old.strip(), new.strip()
        if not equals or not old or not new:
            raise MigrationError(f"--map-endpoint {pair!r}: expected OLD=NEW")
        if found.get(old, new) != new:
            raise MigrationError(f"--map-endpoint: {old} is mapped twice")
        found[old] = new
    return found


def _plan(args: argparse.Namespace, source: Side, target: Side) -> Plan:
    def read(side: Side) -> Estate:
        try:
            full_endpoint = side.resources().subscription_endpoint
            return retrying(lambda: read_estate(side.openapi(), args.prefix, full_endpoint), args.retry_for)
        except ServiceError as error:
            error.answered_by = side.name
            raise

    with ThreadPoolExecutor(max_workers=2) as pool:
        found_source, found_target = pool.map(read, (source, target))
    return make_plan(found_source, found_target, source.endpoint, target.endpoint, endpoint_map(args.map_endpoint))


def _apply(args: argparse.Namespace, console: Console, source: Side, target: Side) -> int:
    plan = _plan(args, source, target)
    applied = Applier(target.openapi(), min(args.retry_for, 60.0)).apply(plan)
    for change in applied.done:
        console.warn(f"{DONE[change.action]} {change.kind} {change.name}")
    for change, error in applied.failed:
        console.warn(f"FAILED {change.kind} {change.name}: the target answered {error}")
    for change in applied.conflicts:
        console.warn(f"CONFLICT {change.kind} {change.name}: {change.reason}")
    for change in plan.changes:
        for setting, why in change.not_carried:
            console.warn(f"not carried: {change.kind} {change.name} {setting}: {why}")
        if change.action == NOT_CARRIED:
            console.warn(f"not carried: {change.kind} {change.name}: {change.reason}")
    console.say(
        f"{len(applied.done)} applied, {len(applied.failed)} failed, {len(applied.conflicts)} in conflict"
        + ("" if applied.ok else ": fix what is named and run apply again")
    )
    return OK if applied.ok else DIFFERENT


def _queues(args: argparse.Namespace, source: Side) -> list[str]:
    if args.queue:
        return list(args.queue)
    estate = retrying(lambda: read_estate(source.openapi(), args.prefix), args.retry_for)
    return sorted(r.name for r in estate.of(QUEUE))


def _move(args: argparse.Namespace, console: Console, source: Side, target: Side) -> int:
    continuous = args.command == "bridge"
    options = Options(
        retry_seconds=args.retry_for,
        settle_seconds=args.settle,
        wait_seconds=2 if continuous else 0,
        continuous=continuous,
    )
    stop = threading.Event()
    journal = Journal(args.state, source.endpoint, target.endpoint)
    source_api, target_api = source.messages(), target.messages()
    moves = [QueueMove(q, source_api, target_api, journal.queue(q), options, stop) for q in _queues(args, source)]
    interrupted = _on_signals(stop)
    if args.for_seconds is not None:
        threading.Timer(args.for_seconds, stop.set).start()
    started = time.monotonic()
    workers = len(moves) if continuous else max(1, args.parallel)
    with Progress(console.err, [m.stats for m in moves]), ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        stats = list(pool.map(lambda move: move.run(), moves))
    seconds = time.monotonic() - started
    console.say(summary_json(stats, seconds) if args.json else summary(stats, seconds))
    if interrupted.is_set():
        return INTERRUPTED
    return DIFFERENT if any(s.error or s.left_on_source for s in stats) else OK


def _on_signals(stop: threading.Event) -> threading.Event:
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return interrupted

    def handle(signum: int, frame: object) -> None:
        interrupted.set()
        stop.set()

    signal.signal(signal.SIGINT, handle)
    signal.signal(signal.SIGTERM, handle)
    return interrupted


def _verify(args: argparse.Namespace, console: Console, source: Side, target: Side) -> int:
    plan = _plan(args, source, target)
    queues = sorted(c.name for c in plan.changes if c.kind == QUEUE and c.action != TARGET_ONLY)
    counts = verifying.count_messages(source.messages(), target.messages(), queues, max(1, args.parallel))
    text, differs = (verifying.report_json if args.json else verifying.report)(plan, counts)
    console.say(text)
    return DIFFERENT if differs else OK


def main(
    argv: Sequence[str] | None = None,
    environ: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    environ = os.environ if environ is None else environ
    args = _parser(environ).parse_args(argv)
    console = Console(out or sys.stdout, err or sys.stderr)
    try:
        endpoint_map(args.map_endpoint)  # checked before any side is read
        source, target = _side(args, "source", environ), _side(args, "target", environ)
        console.secrets = source.secrets + target.secrets
        if args.command == "plan":
            plan = _plan(args, source, target)
            console.say(rendering.as_json(plan) if args.json else rendering.human(plan, show_unchanged=args.all))
            return OK
        if args.command == "apply":
            return _apply(args, console, source, target)
        if args.command in ("drain", "bridge"):
            return _move(args, console, source, target)
        return _verify(args, console, source, target)
    except MigrationError as error:
        console.warn(f"error: {error}")
        return USAGE
    except ServiceError as error:
        console.warn(f"error: the {error.answered_by or 'service'} answered {error}")
        return DIFFERENT
