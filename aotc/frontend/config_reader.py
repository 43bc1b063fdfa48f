"""Reading the config's YAML node tree: typed values (strings, C identifiers, booleans,
ids, shapes, element types) and mappings of known keys, each failure an `AotcError` at the
key path and YAML position. It knows no config section and never looks at the HLO module."""
from __future__ import annotations

import difflib
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import AotcError
from ..hlo.dtypes import DTYPES
from ..hlo.ir import Loc
from .c_names import identifier_problem

Id = int | str  # a parameter number / root tuple index, or an instruction name / op_name


def config_error(text: str, file: str, message: str, path: str | None, loc: Loc | None = None) -> AotcError:
    """An AotcError about config `file` (whose contents are `text`) at key `path` and YAML position `loc`."""
    line = None
    if loc is not None:
        lines = text.split("\n")
        if 1 <= loc.line <= len(lines):
            line = lines[loc.line - 1]
    return AotcError(message, loc, line, path=path, file=file)


def kind(value: Any, node: Node) -> str:
    """How an error message names what was found instead: "a list", "an integer (3)", ..."""
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ('{value}')"
    return f"a {type(value).__name__}"


class NodeReader:
    """Walks the composed YAML node tree, raising located errors."""

    def __init__(self, text: str, file: str):
        self.text = text
        self.file = file
        self.constructor = yaml.constructor.SafeConstructor()

    def error(self, message: str, path: str | None, loc: Loc | None) -> AotcError:
        return config_error(self.text, self.file, message, path, loc)

    def loc(self, node: Node) -> Loc:
        return Loc(self.file, node.start_mark.line + 1, node.start_mark.column + 1)

    def scalar(self, node: Node) -> Any:
        if not isinstance(node, ScalarNode):
            return None
        try:
            return self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as e:
            raise self.error(f"invalid value: {e}", None, self.loc(node)) from None

    def fail_type(self, node: Node, path: str, expected: str) -> AotcError:
        return self.error(f"expected {expected}, got {kind(self.scalar(node), node)}", path, self.loc(node))

    def mapping(self, node: Node, path: str, allowed: tuple[str, ...], what: str) -> dict[str, Node]:
        if not isinstance(node, MappingNode):
            raise self.fail_type(node, path, f"a mapping ({what})")
        out: dict[str, Node] = {}
        for knode, vnode in node.value:
            key = self.scalar(knode)
            kpath = f"{path}.{key}" if path else str(key)
            if not isinstance(key, str):
                raise self.error(f"keys must be strings, got {kind(key, knode)}", path or None, self.loc(knode))
            if key not in allowed:
                near = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean '{near[0]}'?" if near else "expected one of: " + ", ".join(allowed)
                raise self.error(f"unknown key ({hint})", kpath, self.loc(knode))
            if key in out:
                raise self.error("duplicate key", kpath, self.loc(knode))
            out[key] = vnode
        return out

    def sequence(self, node: Node, path: str, what: str) -> list[Node]:
        if not isinstance(node, SequenceNode):
            raise self.fail_type(node, path, f"a list of {what}")
        return list(node.value)

    def string(self, node: Node, path: str) -> str:
        value = self.scalar(node)
        if not isinstance(value, str) or not value:
            raise self.fail_type(node, path, "a non-empty string")
        return value

    def identifier(self, node: Node, path: str) -> str:
        value = self.string(node, path)
        problem = identifier_problem(value)
        if problem:
            raise self.error(problem, path, self.loc(node))
        return value

    def boolean(self, node: Node, path: str) -> bool:
        value = self.scalar(node)
        if not isinstance(value, bool):
            raise self.fail_type(node, path, "true or false")
        return value

    def ident(self, node: Node, path: str, what: str) -> Id:
        value = self.scalar(node)
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise self.error(f"{what} must be >= 0, got {value}", path, self.loc(node))
            return value
        if isinstance(value, str) and value.lstrip("%"):
            return value.lstrip("%")
        raise self.fail_type(node, path, f"{what} or an instruction name")

    def shape(self, node: Node, path: str) -> tuple[int, ...]:
        if not isinstance(node, SequenceNode):
            raise self.fail_type(node, path, "a list of dimension sizes such as [2, 3]")
        dims = []
        for i, item in enumerate(node.value):
            d = self.scalar(item)
            if not isinstance(d, int) or isinstance(d, bool) or d < 0:
                raise self.error(f"dimension {i}: expected a size >= 0, got {kind(d, item)}", path, self.loc(item))
            dims.append(d)
        return tuple(dims)

    def element_type(self, node: Node, path: str) -> str:
        value = self.scalar(node)
        if not isinstance(value, str):
            raise self.fail_type(node, path, "an element type such as f32")
        if value not in DTYPES or value == "token":
            names = [n for n in DTYPES if n != "token"]
            near = difflib.get_close_matches(value, names, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise self.error(f"unknown element type '{value}'{hint}", path, self.loc(node))
        return value

    def required_id(self, node: Node, entries: dict[str, Node], path: str, what: str) -> Id:
        if "id" not in entries:
            raise self.error(f"missing key 'id' ({what} or an instruction name)", path, self.loc(node))
        return self.ident(entries["id"], f"{path}.id", what)
