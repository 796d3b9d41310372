"""Moved to `mnsd.wire.codec`; this name stays until its last importers move."""

from mnsd.wire.codec import XMLNS, Element, Node, Value, encode, parse

__all__ = ["XMLNS", "Element", "Node", "Value", "encode", "parse"]
