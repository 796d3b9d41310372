"""The path of a packed claim on the DynamoDB engine (moto), from a receive through the wait tier
(`MessageService.receive_or_hold`) to the conditional write of the pack (`PackWrites.claim`): short, and carrying
nothing it only passes on.

What a "call" is here: each Python frame between `receive_or_hold`'s and `PackWrites.claim`'s on the stack when the
pack is claimed (methods, functions, lambdas: each has a frame), plus one for each `functools.partial` held on the way
(a partial adds a call but no frame: the test looks for one in each frame's locals and in its `self`'s attributes).
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from dataclasses import dataclass
from types import CodeType
from typing import Any

import pytest

from mnsd.model.inputs import MessageInput
from mnsd.queues.messages import Claimed
from mnsd.storage.dynamodb.items.pack_writes import PackWrites
from mnsd.storage.dynamodb.items.packs import entries
from mnsd.storage.dynamodb.placement.placement import Placement
from mnsd.storage.dynamodb.standard import stripe_reads
from tests.integration.services import ACCOUNT

MOST_CALLS = 6  # from `receive_or_hold` to the pack's claim
MOST_FORWARDS = 2  # signatures an argument may pass through only to be passed on
# A queue of one stripe, its writes keeping the ready index since the epoch, the index built.
INDEXED = Placement(stripes=1, index_since=1, plain_stripes=0)


@pytest.fixture
def pack_claim(make, monkeypatch) -> list[Frame]:
    """A batch sent on a queue of the engine storing batches packed, received through `receive_or_hold`: the frames
    from `PackWrites.claim`'s (a recording wrapper's, standing for it) up to `receive_or_hold`'s, as they stood when
    the pack was claimed."""
    service = make(packed_batches=True)
    service.create_queue(ACCOUNT, "orders")
    service.send(ACCOUNT, "orders", [MessageInput(f"m{n}", 0, 8) for n in range(4)])
    queue = service.get_queue(ACCOUNT, "orders")
    claims: list[list[Frame]] = []
    claim = PackWrites.claim

    def recorded(self: PackWrites, *args: Any, **kwargs: Any) -> Any:
        claims.append(_stack())
        return claim(self, *args, **kwargs)

    monkeypatch.setattr(PackWrites, "claim", recorded)
    outcome = service.services.messages.receive_or_hold(queue, 3, 0, None, None)
    assert isinstance(outcome, Claimed) and len(outcome.received) == 3
    assert len(claims) == 1, "the batch's three entries claimed in one write of its pack"
    frames = claims[0]
    assert frames[-1].f_code.co_name == "receive_or_hold"
    return frames


@dataclass(frozen=True)
class Frame:
    """A frame as it stood when recorded: its code, the line it was at, its locals."""

    f_code: CodeType
    f_lineno: int
    f_locals: dict[str, Any]


def _stack() -> list[Frame]:
    """The frames from the caller's (a recording wrapper's) up to `receive_or_hold`'s, as they stand now."""
    frames, frame = [], inspect.currentframe()
    frame = frame.f_back if frame is not None else None
    while frame is not None:
        frames.append(Frame(frame.f_code, frame.f_lineno, dict(frame.f_locals)))
        if frame.f_code.co_name == "receive_or_hold":
            break
        frame = frame.f_back
    return frames


def _partials(frame: Frame) -> int:
    held = list(frame.f_locals.values())
    owner = frame.f_locals.get("self")
    held += list(getattr(owner, "__dict__", {}).values())
    return sum(isinstance(value, functools.partial) for value in held)


def test_a_packed_claim_is_at_most_six_calls_from_a_receive_through_the_wait_tier(pack_claim) -> None:
    between = pack_claim[1:-1]  # (neither the claim's frame nor receive_or_hold's)
    path = [frame.f_code.co_qualname for frame in reversed(between)]
    calls = len(between) + sum(_partials(frame) for frame in between)
    assert calls <= MOST_CALLS, f"{calls} calls from receive_or_hold to the pack's claim: {path}"


def _only_passed_on(frame: Frame, below: Frame) -> set[str]:
    """The parameters of a frame's function that its body only passes on down the path: every use of the name is an
    argument of a call to the function the frame is calling (`below`: the call on its current line to a function of
    that name, else the innermost call there; its calls written alike: `self._read_ready`, `scan.claim`), and the name
    is never bound again. A parameter the function also uses otherwise (reads it, or gives it to another function) is
    not only passed on."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(frame.f_code)))
    function = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef))
    line = frame.f_lineno - frame.f_code.co_firstlineno + 1
    calls = [node for node in ast.walk(function) if isinstance(node, ast.Call)]
    current = [c for c in calls if c.lineno <= line <= (c.end_lineno or c.lineno)]
    named = [c for c in current if getattr(c.func, "attr", getattr(c.func, "id", "")) == below.f_code.co_name]
    callee = ast.dump(min(named or current, key=lambda c: (c.end_lineno or c.lineno) - c.lineno).func)
    code = frame.f_code
    parameters = set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]) - {"self"}
    passed: set[int] = set()
    for call in calls:
        if ast.dump(call.func) == callee:
            passed.update(id(arg) for arg in call.args)
            passed.update(id(keyword.value) for keyword in call.keywords)
    used = {
        node.id
        for node in ast.walk(function)
        if isinstance(node, ast.Name)
        and node.id in parameters
        and (id(node) not in passed or not isinstance(node.ctx, ast.Load))
    }
    return parameters - used


def _arguments(frame: Frame) -> dict[int, str]:
    """A frame's arguments by identity (a recording wrapper's: those it passes on to what it records)."""
    if frame.f_code.co_name == "recorded":
        given = [*frame.f_locals["args"], *frame.f_locals["kwargs"].values()]
        return {id(value): "" for value in given}
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return {id(frame.f_locals[name]): name for name in names if name in frame.f_locals and name != "self"}


def _longest_carried(path: list[Frame]) -> dict[str, int]:
    """Along frames (`receive_or_hold` first, the recorded call last), how many frames in a row carry each argument
    object: a frame carries it when its function only passes that parameter on (`_only_passed_on`) and the next
    frame receives the same object (identity) as an argument. A comprehension's frame is looked through (what it
    uses its function holds)."""
    path = [frame for frame in path if not frame.f_code.co_name.startswith("<")]  # (a comprehension's: no parameter)
    runs: dict[int, int] = {}
    longest: dict[str, int] = {}
    for frame, below in zip(path[:-1], path[1:], strict=True):
        passed_on = _only_passed_on(frame, below)
        received = _arguments(below)
        carried = {key: name for key, name in _arguments(frame).items() if name in passed_on and key in received}
        runs = {key: runs.get(key, 0) + 1 for key in carried}
        for key, run in runs.items():
            label = f"{carried[key]} (into {below.f_code.co_qualname})"
            longest[label] = max(longest.get(label, 0), run)
    return longest


def test_no_argument_on_the_claim_path_is_passed_through_more_than_two_signatures_only_to_be_passed_on(
    pack_claim,
) -> None:
    longest = _longest_carried(list(reversed(pack_claim)))
    too_long = {label: run for label, run in longest.items() if run > MOST_FORWARDS}
    assert not too_long, f"passed through more than {MOST_FORWARDS} signatures only to be passed on: {too_long}"


@pytest.mark.parametrize("indexed", [False, True], ids=["table", "ready-index"])
def test_no_argument_on_the_scan_path_to_a_pack_read_is_passed_through_more_than_two_signatures(
    make, monkeypatch, indexed
) -> None:
    """The same along the frames from `receive_or_hold` to where the scan opens a pack it read into its entries
    (`packs.entries`), reading the queue's stripe from the table and from the ready index: what the scan keeps of the
    packs it read for its claim is not handed down its reads."""
    service = make(packed_batches=True)
    if indexed:  # (its placement as the engine keeps it for a queue that has been busy)
        monkeypatch.setattr(service.messages.placer.placements, "of", lambda queue_id: INDEXED)
    service.create_queue(ACCOUNT, "orders")
    service.send(ACCOUNT, "orders", [MessageInput(f"m{n}", 0, 8) for n in range(4)])
    queue = service.get_queue(ACCOUNT, "orders")
    assert service.messages.placer.of(queue.queue_id).spread.reads_index(0) is indexed
    opened: list[list[Frame]] = []

    def recorded(*args: Any, **kwargs: Any) -> Any:
        opened.append(_stack())
        return entries(*args, **kwargs)

    monkeypatch.setattr(stripe_reads, "entries", recorded)
    outcome = service.services.messages.receive_or_hold(queue, 3, 0, None, None)
    assert isinstance(outcome, Claimed) and len(outcome.received) == 3
    assert opened and opened[0][-1].f_code.co_name == "receive_or_hold"
    longest = _longest_carried(list(reversed(opened[0])))
    too_long = {label: run for label, run in longest.items() if run > MOST_FORWARDS}
    assert not too_long, f"passed through more than {MOST_FORWARDS} signatures only to be passed on: {too_long}"
