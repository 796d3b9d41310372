"""The route table (`routes.ROUTES`) as an Application Load Balancer's listener rules (`-c frontDoor=alb`,
docs/front-door.md): one rule per route, a method condition and a path pattern with `*` for each `{name}` segment,
in the priority order that sends every path of a route to that route's rule; what no rule takes goes to the
listener's default action, the catch-all function.

ALB's `*` matches any run of characters, `/` included, so `/queues/*/messages` also takes
`/queues/q/receivers/messages`: the rules with more segments come first, and the function checks the path against
its route's template (`fits`), answering what does not fit as the catch-all does. The message routes come as early
as that order allows: ALB bills rule evaluations beyond the first 10 a request goes through.
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


def _order(route: Route) -> tuple[int, int, str, str]:
    segments = route.path.count("/")
    hot = 0 if route.path.startswith("/queues/{queue}") and segments >= 3 else 1
    return hot, -segments, route.path, route.method


@cache
def listener_rules() -> tuple[ListenerRule, ...]:
    ordered = sorted(ROUTES.values(), key=_order)
    return tuple(
        ListenerRule(priority, route.name, route.method, path_pattern(route.path))
        for priority, route in enumerate(ordered, start=1)
    )


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    """ALB's path-pattern match: `*` any run of characters, `?` one character, case-sensitive, the whole path."""
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


def rule_for(method: str, path: str) -> ListenerRule | None:
    """The rule ALB forwards `method path` by: the first in priority order whose conditions hold (None: the
    default action)."""
    for rule in listener_rules():
        if rule.method == method and _glob(rule.path_pattern).match(path):
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
