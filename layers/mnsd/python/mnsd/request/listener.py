"""The route table (`routes.ROUTES`) as an Application Load Balancer's listener rules (`-c frontDoor=alb`,
docs/front-door.md): one rule per route, a method condition and a path pattern with `*` for each `{name}` segment,
in the priority order that sends every path of a route to that route's rule; what no rule takes goes to the
listener's default action, the catch-all function.

ALB's `*` matches any run of characters, `/` included, so `/queues/*/messages` also takes
`/queues/q/receivers/messages`: a rule comes after every rule of its method whose paths its pattern takes (the safe
order: more segments first), and the function checks the path against its route's template (`fits`), answering what
does not fit as the catch-all does. Within that constraint the message routes (`HOT`: send, delete, receive and
ChangeMessageVisibility, single and batch alike) come first, each after only the rules it must follow: a send goes
through 1 rule, a delete 3, a receive 6 (ALB bills rule evaluations beyond the first 10 a request goes through, and a
request stops at the first rule that matches).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from mnsd.request.routes import ROUTES, Route

PARAMETER = re.compile(r"\{\w+\}")


@dataclass(frozen=True)
class ListenerRule:
    priority: int  # 1 is evaluated first
    route: str
    method: str
    path_pattern: str


def path_pattern(route_path: str) -> str:
    """`/queues/{queue}/messages` -> `/queues/*/messages`."""
    return PARAMETER.sub("*", route_path)


# The routes of a message's life, most requests first: SendMessage and BatchSendMessage; DeleteMessage and
# BatchDeleteMessage; ReceiveMessage and BatchReceiveMessage; ChangeMessageVisibility.
HOT = ("post_messages", "delete_messages", "get_messages", "put_messages")


def _safe_order(route: Route) -> tuple[int, int, str, str]:
    """More segments first (a pattern's `*` takes paths of more segments, never fewer); queues before the rest."""
    segments = route.path.count("/")
    queues = 0 if route.path.startswith("/queues/{queue}") and segments >= 3 else 1
    return queues, -segments, route.path, route.method


def sample_paths(route: Route) -> list[str]:
    """Paths of `route` with each `{name}` one of the literal segments of the route table (or `q`): the names that
    could make another rule's pattern take them."""
    literals = sorted({part for r in ROUTES.values() for part in r.path.split("/") if part and "{" not in part})
    paths = [route.path]
    while PARAMETER.search(paths[0]):
        paths = [PARAMETER.sub(name, path, count=1) for path in paths for name in ("q", *literals)]
    return paths


def _takes(pattern: str, route: Route) -> bool:
    """Whether a rule of `pattern` would take a request of `route` (same method) if it came first."""
    return any(pattern_matches(pattern, path) for path in sample_paths(route))


@cache
def listener_rules() -> tuple[ListenerRule, ...]:
    """The hot routes first, each placed after the rules of its method whose paths its pattern takes (recursively);
    then the rest, in the safe order."""
    safe = sorted(ROUTES.values(), key=_safe_order)
    placed: list[Route] = []

    def place(route: Route) -> None:
        if route in placed:
            return
        pattern = path_pattern(route.path)
        for earlier in safe[: safe.index(route)]:
            if earlier.method == route.method and _takes(pattern, earlier):
                place(earlier)
        placed.append(route)

    for route in [ROUTES[name] for name in HOT] + safe:
        place(route)
    return tuple(
        ListenerRule(priority, route.name, route.method, path_pattern(route.path))
        for priority, route in enumerate(placed, start=1)
    )


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    """ALB's path-pattern match: `*` any run of characters, `?` one character, case-sensitive, the whole path."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


def pattern_matches(pattern: str, path: str) -> bool:
    """Whether ALB's path pattern `pattern` takes `path`."""
    return _glob(pattern).match(path) is not None


def rule_for(method: str, path: str) -> ListenerRule | None:
    """The rule ALB forwards `method path` by: the first in priority order whose conditions hold (None: the
    default action)."""
    for rule in listener_rules():
        if rule.method == method and pattern_matches(rule.path_pattern, path):
            return rule
    return None


def fits(route_path: str, path: str) -> bool:
    """Whether `path` is one of the route's: one non-empty segment for each `{name}`, the others as written (what
    an HTTP API route matches)."""
    template, given = route_path.split("/"), path.split("/")
    if len(template) != len(given):
        return False
    return all(
        bool(value) if PARAMETER.fullmatch(part) else part == value for part, value in zip(template, given, strict=True)
    )
