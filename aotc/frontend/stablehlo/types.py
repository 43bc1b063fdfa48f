"""MLIR types of StableHLO text into HLO shapes: `tensor<3x8xf32>`, `tensor<f32>`,
`tensor<4xcomplex<f32>>`, `tuple<...>` and `!stablehlo.token`, read at a lexer's cursor.

Element types map to HLO's (`i1` is pred, `i32` s32, `ui8` u8, `complex<f32>` c64).
Dynamic (`?`) and bounded dimensions, quantized and other element types are located errors.
"""
from __future__ import annotations

import re
from math import prod

from ...hlo.dtypes import DTYPES
from ...hlo.shape import ArrayShape, Shape, TupleShape
from .lexer import MAX_NESTING, Lexer, describe

ELEMENT_TYPES = {
    "i1": "pred", "i2": "s2", "si2": "s2", "ui2": "u2", "i4": "s4", "i8": "s8", "i16": "s16", "i32": "s32", "i64": "s64",
    "si4": "s4", "si8": "s8", "si16": "s16", "si32": "s32", "si64": "s64",
    "ui4": "u4", "ui8": "u8", "ui16": "u16", "ui32": "u32", "ui64": "u64",
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
    "f8E4M3FN": "f8e4m3fn", "f8E5M2": "f8e5m2", "f8E4M3FNUZ": "f8e4m3fnuz", "f8E5M2FNUZ": "f8e5m2fnuz",
    "f8E4M3B11FNUZ": "f8e4m3b11fnuz", "f8E4M3": "f8e4m3", "f8E3M4": "f8e3m4",
    "f8E8M0FNU": "f8e8m0fnu", "f4E2M1FN": "f4e2m1fn",
    "complex<f32>": "c64", "complex<f64>": "c128",
    "index": "s64",  # in attributes (a custom call's operand_layouts); XLA's index is 64-bit
}
INT64_MAX = (1 << 63) - 1
_TENSOR = re.compile(r"tensor\s*<\s*((?:(?:\d+|\?)\s*x\s*)*)(complex\s*<\s*\w+\s*>|\w+)\s*(,|>)")
_DIM = re.compile(r"(\d+|\?)\s*x")


def is_type_start(lx: Lexer) -> bool:
    tok = lx.peek()
    return (tok.kind == "name" and tok.text in ("tensor", "tuple") or tok.kind == "bang"
            or tok.kind == "name" and tok.text in ELEMENT_TYPES)


# type := tensor_type | 'tuple' '<' [type (',' type)*] '>' | '!stablehlo.token' | element_type
def read_type(lx: Lexer, depth: int = 0) -> Shape:
    tok = lx.peek()
    if depth > MAX_NESTING:
        raise lx.error(f"nesting deeper than {MAX_NESTING}", tok.pos)
    if tok.kind == "bang":
        lx.next()
        if tok.text == "!stablehlo.token":
            return ArrayShape(DTYPES["token"], ())
        raise lx.error(f"aotc cannot read the type {describe(tok)} yet", tok.pos)
    if tok.kind == "name" and tok.text == "tuple":
        lx.next()
        lx.expect("<", "after 'tuple'")
        elements: list[Shape] = []
        if not lx.accept(">"):
            while True:
                elements.append(read_type(lx, depth + 1))
                if lx.accept(">"):
                    break
                lx.expect(",", "or '>' in a tuple type")
        return TupleShape(tuple(elements))
    if tok.kind == "name" and tok.text == "tensor":
        return _tensor(lx)
    if tok.kind == "name" and tok.text in ELEMENT_TYPES:  # a bare element type: a scalar
        lx.next()
        return ArrayShape(DTYPES[ELEMENT_TYPES[tok.text]], ())
    raise lx.error(f"expected a type, found {describe(tok)}", tok.pos)


def _tensor(lx: Lexer) -> ArrayShape:
    start = lx.skip()
    m = _TENSOR.match(lx.text, start)
    if m is None:
        lx.next()
        lx.expect("<", "after 'tensor'")
        raise lx.error(f"expected the dimensions and element type of a tensor, found {describe(lx.peek())}",
                       lx.peek().pos)
    dims: list[int] = []
    for d in _DIM.finditer(m.group(1)):
        at = m.start(1) + d.start()
        if d.group(1) == "?":
            raise lx.error("dynamic dimensions ('?') are not supported", at)
        if len(d.group(1)) > 19 or int(d.group(1)) > INT64_MAX:
            raise lx.error(f"dimension size {d.group(1)} does not fit in int64", at)
        dims.append(int(d.group(1)))
    elem = re.sub(r"\s+", "", m.group(2))
    if elem not in ELEMENT_TYPES:
        raise lx.error(f"aotc cannot read the element type '{elem}' yet", m.start(2))
    dt = DTYPES[ELEMENT_TYPES[elem]]
    if prod(dims) * dt.nbytes > INT64_MAX:
        raise lx.error(f"tensor of {'x'.join(map(str, dims))} {elem} is too large (over 2^63-1 bytes)", start)
    if m.group(3) == ",":
        raise lx.error("tensor encodings (bounded dynamic dimensions, sparsity) are not supported", m.start(3))
    lx.pos = m.end()
    return ArrayShape(dt, tuple(dims))


# function_type := '(' [type (',' type)*] ')' '->' results ; results := type | '(' [type (',' type)*] ')'
def read_type_list(lx: Lexer) -> tuple[Shape, ...]:
    """A parenthesized list of types `(T, T)`."""
    lx.expect("(", "to start a type list")
    out: list[Shape] = []
    if not lx.accept(")"):
        while True:
            out.append(read_type(lx))
            _skip_type_attrs(lx)
            if lx.accept(")"):
                break
            lx.expect(",", "or ')' in a type list")
    return tuple(out)


def read_results(lx: Lexer) -> tuple[Shape, ...]:
    """Result types after '->': one type or a parenthesized list."""
    if lx.at("("):
        return read_type_list(lx)
    return (read_type(lx),)


def read_op_types(lx: Lexer) -> tuple[tuple[Shape, ...] | None, tuple[Shape, ...]]:
    """The trailing type of an op after ':' — `(A, B) -> R`, `A -> R`, or `A[, B]` (the
    last type is the result's: `tensor<i1>, tensor<f32>` of select). Returns
    (operand types or None when the form does not list them, result types)."""
    if lx.at("("):
        operands = read_type_list(lx)
        lx.expect("->", "after the operand types")
        return operands, read_results(lx)
    types = [read_type(lx)]
    while lx.accept(","):
        types.append(read_type(lx))
    if lx.accept("->"):
        return tuple(types), read_results(lx)
    return None, (types[-1],)


def _skip_type_attrs(lx: Lexer) -> None:
    """Argument and result attributes inside a type list (`{jax.result_info = ...}`)."""
    if lx.at("{"):
        lx.balanced("{")
