"""The shape grammar of HLO text, read at a lexer's cursor: array shapes with their
dimensions, bounded dynamic dimensions and layouts, and tuple shapes. It reports the first
syntax error at its line:col; it knows no instruction, and what a shape means for an op is the
verifier's business.

Tiled layouts (`{1,0:T(8,128)}`) and memory spaces (`S(1)`) are accepted and
their part after ':' is ignored: aotc targets CPU memory, where only the
minor-to-major order matters.
"""
from __future__ import annotations

import re
from math import prod

from ..hlo.dtypes import DTYPES
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .lexer import MAX_NESTING, Lexer, describe

INT64_MAX = (1 << 63) - 1
# element type, dims, layout of a shape without spaces, comments, dynamic dims or tiles
_PLAIN_SHAPE = re.compile(r"([a-z][a-z0-9]*)\[(\d{1,15}(?:,\d{1,15})*)?\](\{(?:\d{1,3}(?:,\d{1,3})*)?\})?(?![{:\w])")


# shape := array_shape | '(' [shape (',' shape)*] ')'
def read_shape(lx: Lexer) -> Shape:
    """The shape at the cursor, tuples nested without recursion."""
    stack: list[list[Shape]] = []  # open tuples, innermost last (no recursion)
    while True:
        tok = lx.peek()
        if tok.text == "(" and tok.kind == "punct":
            if len(stack) >= MAX_NESTING:
                raise lx.error(f"nesting deeper than {MAX_NESTING}", tok.pos)
            lx.next()
            if not lx.accept(")"):
                stack.append([])
                continue
            value: Shape = TupleShape(())
        else:
            value = _array_shape(lx)
        while True:
            if not stack:
                return value
            stack[-1].append(value)
            tok = lx.peek()
            if tok.text == "," and tok.kind == "punct":
                lx.next()
                break
            if tok.text == ")" and tok.kind == "punct":
                lx.next()
                value = TupleShape(tuple(stack.pop()))
                continue
            raise lx.error(f"expected ',' or ')' in a tuple shape, found {describe(tok)}", tok.pos)


# array_shape := TYPE '[' [['<='] INT (',' ['<='] INT)*] ']' [layout]
def _array_shape(lx: Lexer) -> ArrayShape:
    fast = _plain_array_shape(lx)
    if fast is not None:
        return fast
    tok = lx.peek()
    dt = DTYPES.get(tok.text) if tok.kind == "name" else None
    if dt is None:
        if tok.kind == "name" and lx.text.startswith("[", tok.end):
            raise lx.error(f"unknown element type '{tok.text}'", tok.pos)
        raise lx.error(f"expected a shape, found {describe(tok)}", tok.pos)
    lx.next()
    lx.expect("[", f"after element type '{dt.name}'")
    dims: list[int] = []
    dynamic: list[bool] = []
    if not lx.accept("]"):
        while True:
            pos = lx.skip()
            if lx.text.startswith("?", pos):
                raise lx.error("unbounded dynamic dimensions ('?') are not supported", pos)
            dynamic.append(lx.accept("<=") is not None)
            size, pos = lx.expect_int("a dimension size")
            if size < 0:
                raise lx.error(f"negative dimension size {size}", pos)
            if size > INT64_MAX:
                raise lx.error(f"dimension size {size} does not fit in int64", pos)
            dims.append(size)
            if lx.accept("]"):
                break
            lx.expect(",", "or ']' in shape dimensions")
    if dt.kind == "token" and dims:
        raise lx.error("token shapes have no dimensions: write token[]", tok.pos)
    if prod(dims) * dt.nbytes > INT64_MAX:
        raise lx.error(f"shape {dt.name}[{','.join(map(str, dims))}] is too large (over 2^63-1 bytes)", tok.pos)
    layout = _layout(lx, len(dims)) if lx.text.startswith("{", lx.pos) else None
    return ArrayShape(dt, tuple(dims), layout, tuple(dynamic) if any(dynamic) else ())


def _plain_array_shape(lx: Lexer) -> ArrayShape | None:
    """The common spelling `f32[2,3]{1,0}` in one regex match; None for anything else."""
    m = _PLAIN_SHAPE.match(lx.text, lx.skip())
    if m is None or m.group(1) not in DTYPES:
        return None
    dt, dims_text, layout_text = DTYPES[m.group(1)], m.group(2), m.group(3)
    dims = tuple(map(int, dims_text.split(","))) if dims_text else ()
    layout = None
    if layout_text is not None:
        layout = tuple(map(int, layout_text[1:-1].split(","))) if layout_text != "{}" else ()
        if sorted(layout) != list(range(len(dims))):
            return None  # the full path reports it
    if dt.kind == "token" and dims or prod(dims) * dt.nbytes > INT64_MAX:
        return None
    lx.pos = m.end()
    return ArrayShape(dt, dims, layout)


# layout := '{' [INT (',' INT)*] [':' tiling_and_memory_space] '}'
def _layout(lx: Lexer, rank: int) -> tuple[int, ...]:
    start = lx.expect("{").pos
    order: list[int] = []
    if not lx.at("}") and not lx.at(":"):
        while True:
            order.append(lx.expect_int("a layout dimension")[0])
            if not lx.accept(","):
                break
    if lx.at(":"):  # tiles, memory space etc.: ignored (see the module docstring)
        close = lx.text.find("}", lx.pos)
        if close < 0:
            raise lx.error("unexpected end of input in a layout", len(lx.text))
        lx.pos = close
    lx.expect("}", "or ',' in a layout")
    if sorted(order) != list(range(rank)):
        text = "{" + ",".join(map(str, order)) + "}"
        raise lx.error(f"layout {text} is not a permutation of the {rank} dimensions", start)
    return tuple(order)
