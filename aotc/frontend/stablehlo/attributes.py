"""MLIR attribute values of StableHLO text, read at a lexer's cursor: integers and floats
with their `: i64` types, booleans, strings, lists, dictionaries, `array<i64: ...>`,
`dense<...>` (kept as a `Dense` body until its tensor type is known), `dense_resource`
(an elided constant), `#stablehlo<... X>` enums, `#stablehlo.kind<k = v, ...>` structs and
convolution dimension numbers. Unknown dialect attributes stay `Raw` text.

Turning a dense body into numbers for a type lives in `dense`; what an attribute means for
an op is `convert`'s business.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...hlo.ir import Raw
from ..lexer import unquote
from .lexer import MAX_NESTING, Lexer, describe
from .types import ELEMENT_TYPES, is_type_start, read_type


@dataclass(frozen=True, slots=True)
class Dense:
    """The body of `dense<...>`: kind 'hex' (a "0x..." string), 'list' (brackets, kept as
    text) or 'scalar' (one element's text); decoded by `dense.dense_values`."""

    kind: str
    text: str
    pos: int


@dataclass(frozen=True, slots=True)
class Elided:
    """`dense_resource<name>`: a constant whose bytes are not in the text."""

    name: str


@dataclass(frozen=True, slots=True)
class Enum:
    """`#stablehlo<comparison_direction EQ>`: kind 'comparison_direction', value 'EQ'."""

    kind: str
    value: str


@dataclass(frozen=True, slots=True)
class Struct:
    """`#stablehlo.scatter<index_vector_dim = 1, ...>`: kind 'scatter', its fields."""

    kind: str
    fields: dict


@dataclass(frozen=True, slots=True)
class ConvDims:
    """Convolution dimension numbers, each side its labels: ('b', 'f', '0', '1')."""

    lhs: tuple[str, ...]
    rhs: tuple[str, ...]
    out: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str


@dataclass(frozen=True, slots=True)
class Ident:
    """A bare keyword value such as `DEFAULT` in a precision list."""

    text: str


@dataclass(frozen=True, slots=True)
class Typed:
    """A value with its type (`dense<1> : tensor<2xi64>`, `1 : i64`): value and shape."""

    value: Any
    shape: Any


# attr_dict := '{' [NAME ['=' attribute] (',' NAME ['=' attribute])*] '}'
def read_attr_dict(lx: Lexer, closer: str = "}") -> dict[str, Any]:
    """The entries of `{...}` or `<{...}>` after the opening brace has been read."""
    out: dict[str, Any] = {}
    if lx.accept(closer):
        return out
    while True:
        key = lx.peek()
        if key.kind not in ("name", "string"):
            raise lx.error(f"expected an attribute name, found {describe(key)}", key.pos)
        lx.next()
        name = unquote(key.text) if key.kind == "string" else key.text
        if name in out:
            raise lx.error(f"duplicate attribute '{name}'", key.pos)
        out[name] = read_attribute(lx) if lx.accept("=") else True
        if lx.accept(closer):
            return out
        lx.expect(",", f"or '{closer}' between attributes")


def read_attribute(lx: Lexer, depth: int = 0) -> Any:
    """attribute := number [':' type] | 'true' | 'false' | STRING | list | dict | array
    | dense | dense_resource | '#' dialect_attr | '@' symbol | type | NAME"""
    tok = lx.peek()
    if depth > MAX_NESTING:
        raise lx.error(f"nesting deeper than {MAX_NESTING}", tok.pos)
    if tok.kind == "num":
        lx.next()
        value: Any = _number(lx, tok)
        return _maybe_typed(lx, value)
    if tok.kind == "string":
        lx.next()
        return _maybe_typed(lx, unquote(tok.text))
    if tok.kind == "symbol":
        lx.next()
        return Symbol(unquote(tok.text[1:]) if tok.text.startswith('@"') else tok.text[1:])
    if tok.text == "[" and tok.kind == "punct":
        lx.next()
        items: list[Any] = []
        if not lx.accept("]"):
            while True:
                items.append(read_attribute(lx, depth + 1))
                if lx.accept("]"):
                    break
                lx.expect(",", "or ']' in a list")
        return tuple(items)
    if tok.text == "{" and tok.kind == "punct":
        lx.next()
        return read_attr_dict(lx)
    if tok.kind == "hash":
        return _dialect_attr(lx)
    if tok.kind == "name":
        if tok.text in ("true", "false"):
            lx.next()
            return _maybe_typed(lx, tok.text == "true")
        if tok.text == "dense" and lx.text.startswith("<", lx.peek().end):
            lx.next()
            return _maybe_typed(lx, read_dense(lx))
        if tok.text == "dense_resource":
            lx.next()
            return _maybe_typed(lx, Elided(lx.balanced("<")[1:-1].strip()))
        if tok.text == "array":
            return _array(lx)
        if is_type_start(lx):
            return Typed(None, read_type(lx))
        lx.next()
        return Ident(tok.text)
    raise lx.error(f"expected an attribute value, found {describe(tok)}", tok.pos)


def _number(lx: Lexer, tok) -> int | float:
    text = tok.text
    if text.startswith("0x"):
        return int(text, 16)
    if any(c in text for c in ".eE"):
        return float(text)
    if len(text.lstrip("+-")) > 40:
        raise lx.error(f"integer {text[:12]}... ({len(text)} characters) is too large", tok.pos)
    return int(text)


def _maybe_typed(lx: Lexer, value: Any) -> Any:
    """`value : type` keeps the type for dense bodies; scalars drop it (`1 : i64` is 1)."""
    if not lx.at(":"):
        return value
    save = lx.pos
    lx.next()
    if not is_type_start(lx):  # the ':' belongs to the enclosing syntax
        lx.pos = save
        return value
    shape = read_type(lx)
    return Typed(value, shape) if isinstance(value, (Dense, Elided)) else value


# dense := 'dense' '<' [STRING | '[' ... ']' | element] '>'
def read_dense(lx: Lexer) -> Dense:
    lx.expect("<", "after 'dense'")
    start = lx.skip()
    tok = lx.peek()
    if tok.kind == "string":
        lx.next()
        body = Dense("hex", unquote(tok.text), tok.pos)
    elif tok.text == "[" and tok.kind == "punct":
        end, depth, i, text = start, 0, start, lx.text
        while i < len(text):
            ch = text[i]
            if ch == "[":
                depth += 1
                if depth > MAX_NESTING:
                    raise lx.error(f"nesting deeper than {MAX_NESTING}", i)
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
            elif ch in '>"':
                break
            i += 1
        if depth:
            raise lx.error("unclosed '[' in a dense literal", start)
        lx.pos = end
        body = Dense("list", text[start:end], start)
    elif tok.text == "(" and tok.kind == "punct":
        text = lx.balanced("(")
        body = Dense("scalar", text, tok.pos)
    elif tok.kind in ("num", "name"):
        lx.next()
        body = Dense("scalar", tok.text, tok.pos)
    elif tok.text == ">" and tok.kind == "punct":  # `dense<>`: no elements (a rank-0 layout)
        body = Dense("list", "[]", tok.pos)
    else:
        raise lx.error(f"expected a dense literal value, found {describe(tok)}", tok.pos)
    lx.expect(">", "to close the dense literal")
    return body


# array := 'array' '<' element_type [':' value (',' value)*] '>'
def _array(lx: Lexer) -> tuple:
    lx.next()
    lx.expect("<", "after 'array'")
    ty = lx.expect_kind("name", "an element type")
    if ty.text not in ELEMENT_TYPES:
        raise lx.error(f"unknown element type '{ty.text}' in an array", ty.pos)
    items: list[Any] = []
    if lx.accept(":"):
        while True:
            tok = lx.next()
            if tok.kind == "num":
                items.append(_number(lx, tok))
            elif tok.text in ("true", "false"):
                items.append(tok.text == "true")
            else:
                raise lx.error(f"expected a number in array<{ty.text}>, found {describe(tok)}", tok.pos)
            if not lx.accept(","):
                break
    lx.expect(">", "to close the array")
    return tuple(items)


def _dialect_attr(lx: Lexer) -> Any:
    tok = lx.next()
    if not lx.text.startswith("<", tok.end):  # an alias such as #loc3
        return Ident(tok.text)
    if tok.text == "#stablehlo" or tok.text == "#chlo" or tok.text == "#mhlo":
        lx.expect("<")
        kind = lx.expect_kind("name", "an enum kind").text
        value = lx.expect_kind("name", f"a {kind} value").text
        lx.expect(">", f"to close #{tok.text[1:]}<{kind} ...>")
        return Enum(kind, value)
    kind = tok.text.split(".", 1)[1] if "." in tok.text else tok.text[1:]
    if kind == "conv" and tok.text.startswith("#stablehlo"):
        lx.expect("<")
        dims = read_conv_dims(lx)
        lx.expect(">", "to close #stablehlo.conv")
        return dims
    if tok.text.startswith("#stablehlo.") and kind in ("scatter", "gather", "dot", "dot_algorithm", "channel_handle"):
        lx.expect("<")
        return Struct(kind, read_attr_dict(lx, ">"))
    return Raw(tok.text + lx.balanced("<"))


# conv_dims := '[' label (',' label)* ']' 'x' '[' ... ']' '->' '[' ... ']'
def read_conv_dims(lx: Lexer) -> ConvDims:
    lhs = _labels(lx)
    lx.expect("x", "between convolution input and kernel dimensions")
    rhs = _labels(lx)
    lx.expect("->", "before the convolution output dimensions")
    return ConvDims(lhs, rhs, _labels(lx))


def _labels(lx: Lexer) -> tuple[str, ...]:
    lx.expect("[", "to start convolution dimension labels")
    out: list[str] = []
    while True:
        tok = lx.next()
        if not (tok.kind == "num" and tok.text.isdigit() or tok.kind == "name" and tok.text in ("b", "f", "i", "o")):
            raise lx.error(f"expected a dimension label (b, f, i, o or a number), found {describe(tok)}", tok.pos)
        out.append(tok.text)
        if lx.accept("]"):
            return tuple(out)
        lx.expect(",", "or ']' in dimension labels")
