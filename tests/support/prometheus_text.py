"""A strict reader of the Prometheus text exposition format (0.0.4), for the tests of `GET /metrics`.

Refuses (ValueError) what a Prometheus server would refuse or what it would read otherwise than written: a sample of a
family with no `# TYPE` before it, a family declared twice or its samples not together, a name or a label name not
in the format's alphabet, a label value with an unknown escape or unterminated, a duplicate label or sample, a value
that is no number, text after the value other than a timestamp, a missing final newline.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_TYPES = ("counter", "gauge", "histogram", "summary", "untyped")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}

Labels = frozenset[tuple[str, str]]


@dataclass
class Family:
    name: str
    type: str
    help: str = ""
    samples: dict[Labels, float] = field(default_factory=dict)

    def value(self, **labels: str) -> float:
        """The sample with exactly these labels (KeyError if there is none)."""
        return self.samples[frozenset(labels.items())]

    def by(self, label: str, **where: str) -> dict[str, float]:
        """The samples that have the labels `where`, by their value of `label`."""
        found: dict[str, float] = {}
        for labels, value in self.samples.items():
            named = dict(labels)
            if all(named.get(k) == v for k, v in where.items()) and label in named:
                found[named[label]] = value
        return found


def _value(text: str) -> float:
    if text in ("+Inf", "Inf"):
        return math.inf
    if text == "-Inf":
        return -math.inf
    if text == "NaN":
        return math.nan
    if not re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", text):
        raise ValueError(f"not a number: {text!r}")
    return float(text)


def _label_value(text: str, i: int) -> tuple[str, int]:
    """The value of a label whose opening quote is just before `text[i]`, and the index after its closing quote."""
    value = []
    while i < len(text) and text[i] != '"':
        if text[i] == "\\":
            escaped = text[i + 1 : i + 2]
            if escaped not in _ESCAPES:
                raise ValueError(f"unknown escape \\{escaped}")
            value.append(_ESCAPES[escaped])
            i += 2
        else:
            value.append(text[i])
            i += 1
    if i >= len(text):
        raise ValueError("unterminated label value")
    return "".join(value), i + 1


def _labels(text: str, at: int) -> tuple[Labels, int]:
    """The labels of `{...}` starting at `text[at] == "{"`, and the index after the closing brace."""
    pairs: dict[str, str] = {}
    i = at + 1
    while text[i : i + 1] != "}":
        name = _LABEL.match(text, i)
        if name is None or text[name.end() : name.end() + 2] != '="':
            raise ValueError(f"bad label at {text[i:]!r}")
        value, i = _label_value(text, name.end() + 2)
        if name.group() in pairs:
            raise ValueError(f"label {name.group()} twice")
        pairs[name.group()] = value
        if text[i : i + 1] == ",":
            i += 1
        elif text[i : i + 1] != "}":
            raise ValueError(f"expected , or }} at {text[i:]!r}")
    return frozenset(pairs.items()), i + 1


class _Reader:
    """The families read so far, the one whose samples come now, and those whose samples are over."""

    def __init__(self) -> None:
        self.families: dict[str, Family] = {}
        self.helps: dict[str, str] = {}
        self.current: str | None = None
        self.closed: set[str] = set()

    def comment(self, line: str) -> None:
        parts = line.split(" ", 3)
        if len(parts) >= 3 and parts[1] == "HELP":
            self.helps[parts[2]] = parts[3] if len(parts) > 3 else ""
        elif len(parts) >= 3 and parts[1] == "TYPE":
            name, kind = parts[2], (parts[3] if len(parts) > 3 else "")
            if not _NAME.fullmatch(name) or kind not in _TYPES:
                raise ValueError(f"bad TYPE line {line!r}")
            if name in self.families:
                raise ValueError(f"family {name} declared twice")
            self.families[name] = Family(name, kind, self.helps.get(name, ""))
            if self.current is not None:
                self.closed.add(self.current)
            self.current = name

    def sample(self, line: str) -> None:
        found = _NAME.match(line)
        if found is None:
            raise ValueError(f"bad sample line {line!r}")
        name = found.group()
        if name not in self.families:
            raise ValueError(f"sample of {name} before its TYPE")
        if name != self.current or name in self.closed:
            raise ValueError(f"samples of {name} are not together")
        i = found.end()
        labels: Labels = frozenset()
        if line[i : i + 1] == "{":
            labels, i = _labels(line, i)
        rest = line[i:].split(" ")
        if rest[0] != "" or len(rest) not in (2, 3):
            raise ValueError(f"bad value in {line!r}")
        if len(rest) == 3 and not re.fullmatch(r"-?\d+", rest[2]):
            raise ValueError(f"bad timestamp in {line!r}")
        if labels in self.families[name].samples:
            raise ValueError(f"duplicate sample {line!r}")
        self.families[name].samples[labels] = _value(rest[1])


def parse(text: str) -> dict[str, Family]:
    if not text.endswith("\n"):
        raise ValueError("the exposition must end with a newline")
    reader = _Reader()
    for line in text.splitlines():
        if line.startswith("#"):
            reader.comment(line)
        elif line.strip():
            reader.sample(line)
    return reader.families


# The queue counters the issue names (and the two the product adds: sent bytes, QPS refusals), as the tests expect
# them spelled: written here once, apart from `mnsd.metrics`, so a renamed family fails the tests.
QUEUE_COUNTERS = (
    "mns_messages_sent_total",
    "mns_sent_message_bytes_total",
    "mns_messages_received_total",
    "mns_empty_receives_total",
    "mns_messages_deleted_total",
    "mns_messages_dead_lettered_total",
    "mns_qps_limit_exceeded_total",
)
