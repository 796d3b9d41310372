"""The one XML codec of the service.

Decoding runs expat directly and refuses any DOCTYPE (so no DTD, no entity declarations, no
entity-expansion bomb can reach the parser's expansion logic). Encoding writes the MNS namespace as
the default namespace, which is what the official SDKs parse.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NoReturn, Union
from xml.parsers import expat
from xml.sax.saxutils import escape

from mnsd.ground.errors import MalformedXML

XMLNS = "http://mns.aliyuncs.com/doc/v1"


@dataclass
class Element:
    tag: str
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def child(self, tag: str) -> Element | None:
        return next((c for c in self.children if c.tag == tag), None)

    def all(self, tag: str) -> list[Element]:
        return [c for c in self.children if c.tag == tag]

    def value(self, tag: str) -> str | None:
        node = self.child(tag)
        return None if node is None else node.text


class _Forbidden(Exception):
    pass


def _forbid(*_args: object) -> NoReturn:
    raise _Forbidden()


def parse(body: bytes) -> Element:
    """Parse a request body into an Element tree; namespaces are stripped from tags."""
    parser = expat.ParserCreate(namespace_separator="}")
    stack: list[Element] = []
    root: list[Element] = []

    def start(name: str, _attrs: dict[str, str]) -> None:
        node = Element(name.rsplit("}", 1)[-1])
        if stack:
            stack[-1].children.append(node)
        else:
            root.append(node)
        stack.append(node)

    def end(_name: str) -> None:
        node = stack.pop()
        if node.children:
            node.text = ""

    def chars(data: str) -> None:
        if stack:
            stack[-1].text += data

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.StartDoctypeDeclHandler = _forbid
    parser.EntityDeclHandler = _forbid
    parser.ExternalEntityRefHandler = _forbid
    try:
        parser.Parse(body, True)
    except (expat.ExpatError, _Forbidden, ValueError) as exc:
        raise MalformedXML() from exc
    if not root:
        raise MalformedXML()
    return root[0]


Value = Union[str, int, bool, None, "Node", list["Node"]]


@dataclass
class Node:
    """An element to encode: `fields` are (tag, value) pairs; a value is text, a Node or a list of Nodes."""

    tag: str
    fields: list[tuple[str, Value]] = field(default_factory=list)


# Characters an XML reader would change in text (a `\r` is read as `\n`), written as references so every client reads
# back what was stored.
_KEPT = {"\r": "&#13;"}


def escaped(text: str) -> str:
    """Text as written in an element: `&`, `<`, `>` and `\r` as references."""
    return escape(text, _KEPT)


def _text(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return escaped(str(value))


def _encode_fields(fields: Iterable[tuple[str, Value]], out: list[str]) -> None:
    for tag, value in fields:
        if value is None:
            continue
        if isinstance(value, Node):
            _encode_node(value, out, tag)
        elif isinstance(value, list):
            out.append(f"<{tag}>")
            for item in value:
                _encode_node(item, out)
            out.append(f"</{tag}>")
        else:
            out.append(f"<{tag}>{_text(value)}</{tag}>")


def _encode_node(node: Node, out: list[str], tag: str | None = None) -> None:
    name = tag or node.tag
    out.append(f"<{name}>")
    _encode_fields(node.fields, out)
    out.append(f"</{name}>")


def encode(root: Node) -> bytes:
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', f'<{root.tag} xmlns="{XMLNS}">']
    _encode_fields(root.fields, out)
    out.append(f"</{root.tag}>")
    return "".join(out).encode("utf-8")
