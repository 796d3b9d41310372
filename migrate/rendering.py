"""A plan as a person reads it in a terminal, and as JSON for scripts."""

from __future__ import annotations

import json
from typing import Any

from migrate.planning import CONFLICT, CREATE, NOT_CARRIED, TARGET_ONLY, UNCHANGED, UPDATE, Change, Plan

MARKS = {CREATE: "+", UPDATE: "~", UNCHANGED: "=", CONFLICT: "!", NOT_CARRIED: "x", TARGET_ONLY: " "}


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return "none" if value is None or value == "" else str(value)


def _lines(change: Change) -> list[str]:
    head = f"{MARKS[change.action]} {change.kind} {change.name}"
    if change.action == CREATE and change.wanted is not None:
        lines = [head] + [f"    {k} = {_value(v)}" for k, v in change.wanted.settings.items()]
        lines += [f"    tag {k} = {v}" for k, v in change.tags_added.items()]
    elif change.action in (UPDATE, CONFLICT):
        lines = [head] + [f"    {k}: {_value(there)} -> {_value(here)}" for k, there, here in change.differences]
        lines += [f"    tag {k}: -> {v}" for k, v in change.tags_added.items()]
        lines += [f"    tag {k}: removed" for k in change.tags_removed]
    else:
        lines = [head]
    if change.reason:
        lines.append(f"    {'cannot apply' if change.action == CONFLICT else 'not carried'}: {change.reason}")
    lines += [f"    {setting} not carried: {why}" for setting, why in change.not_carried]
    return lines


def human(plan: Plan, *, show_unchanged: bool = False) -> str:
    out = [f"source {plan.source}", f"target {plan.target}", ""]
    for change in plan.changes:
        if change.action == UNCHANGED and not (show_unchanged or change.not_carried):
            continue
        if change.action == TARGET_ONLY:
            out.append(f"  {change.kind} {change.name} (only on the target: left alone)")
            continue
        out += _lines(change)
    out.append("")
    out.append(
        f"{plan.count(CREATE)} to create, {plan.count(UPDATE)} to change, {plan.count(UNCHANGED)} unchanged, "
        f"{plan.count(CONFLICT)} in conflict, {plan.count(NOT_CARRIED)} not carried, "
        f"{plan.count(TARGET_ONLY)} only on the target"
    )
    return "\n".join(out)


def as_json(plan: Plan) -> str:
    def entry(change: Change) -> dict[str, Any]:
        return {
            "action": change.action,
            "kind": change.kind,
            "name": change.name,
            "settings": change.wanted.settings if change.wanted is not None else None,
            "tags": change.wanted.tags if change.wanted is not None else None,
            "differences": [{"setting": k, "target": t, "source": s} for k, t, s in change.differences],
            "tags_added": change.tags_added,
            "tags_removed": change.tags_removed,
            "not_carried": [{"setting": k, "why": why} for k, why in change.not_carried],
            "reason": change.reason,
        }

    summary = {a: plan.count(a) for a in (CREATE, UPDATE, UNCHANGED, CONFLICT, NOT_CARRIED, TARGET_ONLY)}
    document = {"source": plan.source, "target": plan.target, "changes": [entry(c) for c in plan.changes]}
    return json.dumps({**document, "summary": summary}, indent=2, sort_keys=False)
