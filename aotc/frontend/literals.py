"""Constant literals of HLO text (`constant({ {1, 2}, {3, 4} })`) into numpy arrays.

Big literals take a bulk path (str/numpy operations over the whole body, no
per-element Python); anything it cannot vouch for falls back to an exact
element-by-element walker, which is the authority and reports the first error
at its line:col. This module decodes values only; printing them back lives in
`aotc.hlo.printer`.
"""
from __future__ import annotations

import re

import ml_dtypes
import numpy as np

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Literal
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .lexer import TRIVIA_ITEM, Lexer

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_WS = {ord(c): None for c in " \t\r\n\f\v"}
# Per element kind, the characters a number may use in the bulk path (deleted to
# leave the skeleton of braces and commas).
_BULK_CHARS = {
    "float": {ord(c): None for c in "0123456789.+-eEnaif"},
    "sint": {ord(c): None for c in "0123456789+-"},
    "uint": {ord(c): None for c in "0123456789+"},
    "pred": {ord(c): None for c in "01"},
}
_PUNCT_TO_SPACE = str.maketrans("{},", "   ")
_LIT_TOKEN = re.compile(
    r"(?P<ws>(?:" + TRIVIA_ITEM + r")+)|(?P<elided>\{\.\.\.\})|(?P<p>[{},()])"
    r"|(?P<v>[-+]?nan\(0x[0-9a-fA-F]+\)|[^ \t\r\n\f\v{},()/]+)|(?P<bad>/)"
)
_FLOAT = re.compile(r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)")
_NAN_PAYLOAD = re.compile(r"([-+]?)nan\(0x([0-9a-fA-F]+)\)")
_INT = re.compile(r"[-+]?\d+")
# IEEE-like float types that can carry a NaN payload: (uint view, mantissa bits).
_IEEE = {
    "f16": (np.uint16, 10), "bf16": (np.uint16, 7), "f32": (np.uint32, 23), "f64": (np.uint64, 52),
    "f8e5m2": (np.uint8, 2), "f8e4m3": (np.uint8, 3), "f8e3m4": (np.uint8, 4),
}
_ELIDED_TAIL = re.compile(r"\.\.\.\}")
_MAX_FINITE = {name: float(ml_dtypes.finfo(t.numpy).max) for name, t in DTYPES.items() if t.kind == "float"}


def parse_literal(lx: Lexer, shape: Shape) -> Literal:
    """literal := '{...}' | tuple_literal | dense_literal, read at the cursor."""
    if isinstance(shape, TupleShape):
        return _tuple_literal(lx, shape)
    if shape.is_token:
        raise lx.error("a constant cannot have type token[]", lx.skip())
    start = lx.skip()
    if lx.text.startswith("{...}", start):
        lx.pos = start + 5
        return Literal(shape, None)
    fast = _bulk(lx.text, start, shape)
    if fast is not None:
        values, end = fast
        lx.pos = end
        return Literal(shape, values)
    return Literal(shape, _walk(lx, shape))


# tuple_literal := '(' [literal (',' literal)*] ')'
def _tuple_literal(lx: Lexer, shape: TupleShape) -> Literal:
    if lx.at("{"):
        tok = lx.next()
        if lx.take(_ELIDED_TAIL) is None:
            raise lx.error("expected '(' to start a tuple literal or '{...}'", tok.pos)
        return Literal(shape, None)
    lx.expect("(", "to start a tuple literal")
    elements = []
    for i, element_shape in enumerate(shape.elements):
        if i:
            lx.expect(",", "between tuple literal elements")
        elements.append(parse_literal(lx, element_shape))
    lx.expect(")", f"to close a tuple literal of {len(shape.elements)} elements")
    return Literal(shape, tuple(elements))


def _expected_skeleton(dims: tuple[int, ...]) -> str:
    """The braces and commas of a well-formed literal of `dims`, elements removed."""
    level = "{" + "," * (dims[-1] - 1) + "}" if dims[-1] else "{}"
    for n in reversed(dims[:-1]):
        level = "{" + ",".join([level] * n) + "}"
    return level


def _bulk(text: str, start: int, shape: ArrayShape) -> tuple[np.ndarray, int] | None:
    """The fast path: values and end offset, or None when unsure."""
    dt = shape.dtype
    if not shape.dims or dt.kind not in _BULK_CHARS or shape.size == 0:
        return None
    end = text.find(")", start)
    if end < 0:
        return None
    body = text[start:end]
    if "//" in body:
        return None
    if "/*" in body:
        body = _COMMENT.sub(" ", body)
        if "/*" in body:
            return None
    compact = body.translate(_WS)
    if len(compact) < 2 * shape.size + 1:
        return None  # too short to hold every element (and no huge skeleton is built)
    # Braces and commas exactly as the shape needs, and only number characters besides.
    if compact.translate(_BULK_CHARS[dt.kind]) != _expected_skeleton(shape.dims):
        return None
    chars = np.frombuffer(compact.encode("ascii"), np.uint8)
    opens, closes = (chars == 123) | (chars == 44), (chars == 44) | (chars == 125)
    if (opens[:-1] & closes[1:]).any():
        return None  # an empty slot
    numbers = body.translate(_PUNCT_TO_SPACE)
    try:
        values = _convert_bulk(numbers, dt)
    except (ValueError, OverflowError):
        return None
    if values is None or values.size != shape.size:
        return None  # two numbers in one slot, or a parse that stopped early
    return values.reshape(shape.dims), end


def _convert_bulk(numbers: str, dt: DType) -> np.ndarray | None:
    if dt.kind == "float":
        if "-nan" in numbers:  # numpy's C text parser drops the sign of NaN
            wide = np.array(numbers.split(), dtype=np.float64)
        else:
            wide = np.fromstring(numbers, dtype=np.float64, sep=" ")
        infinite = np.isinf(wide)
        if infinite.any() and infinite.sum() != numbers.count("inf"):
            return None  # a finite number too large even for f64
        if dt.name == "f64":
            return wide
        with np.errstate(over="ignore", invalid="ignore"):
            out = wide.astype(dt.numpy)
        if (np.isinf(out) & ~np.isinf(wide)).any() or (np.isnan(out) & ~np.isnan(wide)).any():
            return None  # out of range: let the walker say where
        return out
    if dt.kind == "pred":
        wide = np.fromstring(numbers, dtype=np.int8, sep=" ")
        return wide.astype(np.bool_) if ((wide == 0) | (wide == 1)).all() else None
    unsigned = dt.name == "u64"
    wide = np.fromstring(numbers, dtype=np.uint64 if unsigned else np.int64, sep=" ")
    if unsigned:
        saturated = (wide == np.iinfo(np.uint64).max).any()
    else:
        saturated = (wide == np.iinfo(np.int64).max).any() or (wide == np.iinfo(np.int64).min).any()
    if saturated:
        return None  # the C parser clamps overflowing values: let the walker check them
    lo, hi = _int_range(dt)
    if dt.name not in ("s64", "u64") and ((wide < lo).any() or (wide > hi).any()):
        return None
    return wide.astype(dt.numpy)


def _int_range(dt: DType) -> tuple[int, int]:
    bits = dt.width
    if dt.kind == "uint":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _show(tok: str) -> str:
    tok = tok if len(tok) <= 40 else tok[:37] + "..."
    return f"'{tok}'" if tok.isprintable() else repr(tok)


class _Elements:
    """Converts element tokens of one element type, collecting them."""

    def __init__(self, lx: Lexer, dt: DType):
        self.lx, self.dt = lx, dt
        self.values: list = []
        self.nan_bits: dict[int, int] = {}  # index -> bit pattern of a NaN with payload

    def add(self, tok: str, pos: int) -> None:
        kind = self.dt.kind
        if kind == "pred":
            if tok not in ("true", "false", "1", "0"):
                raise self.lx.error(f"invalid pred value {_show(tok)} (expected true, false, 1 or 0)", pos)
            self.values.append(tok in ("true", "1"))
        elif kind in ("sint", "uint"):
            if not _INT.fullmatch(tok):
                raise self.lx.error(f"invalid {self.dt.name} value {_show(tok)}", pos)
            v = self.lx.to_int(tok, pos)
            lo, hi = _int_range(self.dt)
            if not lo <= v <= hi:
                raise self.lx.error(f"value {tok} is out of range for {self.dt.name}", pos)
            self.values.append(v)
        else:
            self.values.append(self.float(tok, pos, self.dt))

    def float(self, tok: str, pos: int, dt: DType) -> float:
        m = _NAN_PAYLOAD.fullmatch(tok)
        if m is not None:
            if dt.name not in _IEEE:
                raise self.lx.error(f"NaN payloads are not supported for {dt.name}", pos)
            uint, mbits = _IEEE[dt.name]
            payload = int(m.group(2), 16)
            if not 0 < payload < (1 << mbits):
                raise self.lx.error(f"NaN payload {tok} does not fit the {mbits}-bit mantissa of {dt.name}", pos)
            width = np.dtype(uint).itemsize * 8
            bits = ((1 << width) - 1) ^ ((1 << mbits) - 1) ^ (1 << (width - 1))  # exponent all ones
            bits |= payload | ((1 << (width - 1)) if m.group(1) == "-" else 0)
            self.nan_bits[len(self.values)] = bits
            return float("nan")
        if not _FLOAT.fullmatch(tok):
            raise self.lx.error(f"invalid {dt.name} value {_show(tok)}", pos)
        v = float(tok)
        if np.isinf(v) and "inf" not in tok:
            raise self.lx.error(f"value {_show(tok)[1:-1]} is out of range for {dt.name}", pos)
        if dt.name != "f64" and abs(v) > _MAX_FINITE[dt.name]:
            with np.errstate(over="ignore", invalid="ignore"):
                cast = np.array(v).astype(dt.numpy)
            if np.isinf(v) and not np.isinf(cast):
                raise self.lx.error(f"{dt.name} has no infinity", pos)
            if not np.isinf(v) and not np.isfinite(cast):  # beyond the largest finite value plus half an ulp
                raise self.lx.error(f"value {tok} is out of range for {dt.name}", pos)
        return v

    def array(self, dims: tuple[int, ...]) -> np.ndarray:
        dt = self.dt
        if dt.kind == "complex":
            part = "f32" if dt.name == "c64" else "f64"
            with np.errstate(over="ignore", invalid="ignore"):
                flat = np.array(self.values, dtype=np.float64).astype(DTYPES[part].numpy)
            if self.nan_bits:
                view = flat.view(_IEEE[part][0])
                for i, bits in self.nan_bits.items():
                    view[i] = bits
            pairs = flat.reshape(-1, 2)
            out = np.empty(len(self.values) // 2 if self.values else 0, dtype=dt.numpy)
            out.real, out.imag = pairs[:, 0], pairs[:, 1]
            return out.reshape(dims)
        if dt.kind == "float":
            with np.errstate(over="ignore", invalid="ignore"):
                out = np.array(self.values, dtype=np.float64).astype(dt.numpy)
            if self.nan_bits:
                view = out.view(_IEEE[dt.name][0])
                for i, bits in self.nan_bits.items():
                    view[i] = bits
            return out.reshape(dims)
        if dt.kind in ("sint", "uint"):
            wide = np.array(self.values, dtype=np.uint64 if dt.name == "u64" else np.int64)
            return wide.astype(dt.numpy).reshape(dims)
        return np.array(self.values, dtype=np.bool_).reshape(dims)


def _walk(lx: Lexer, shape: ArrayShape) -> np.ndarray | None:
    """The exact path: dense_literal := element | '{' (dense_literal | element) {',' ...} '}'."""
    text, dims, rank = lx.text, shape.dims, len(shape.dims)
    elements = _Elements(lx, shape.dtype)
    pos = lx.pos

    def token() -> tuple[str, str, int]:
        nonlocal pos
        m = _LIT_TOKEN.match(text, pos)
        if m is not None and m.lastgroup == "ws":
            pos = m.end()
            m = _LIT_TOKEN.match(text, pos)
        if m is None:
            return ("eof", "", pos)
        if m.lastgroup == "bad":
            what = "unterminated comment" if text.startswith("/*", pos) else "unexpected character '/'"
            raise lx.error(what, pos)
        start, pos = pos, m.end()
        return (m.lastgroup or "", m.group(), start)

    def element(kind: str, tok: str, at: int) -> None:
        if shape.dtype.kind != "complex":
            if kind != "v":
                raise lx.error(f"expected a {shape.dtype.name} value, found {_found(kind, tok)}", at)
            elements.add(tok, at)
            return
        if tok != "(":
            raise lx.error(f"expected '(' to start a {shape.dtype.name} value, found {_found(kind, tok)}", at)
        part = DTYPES["f32" if shape.dtype.name == "c64" else "f64"]
        for i, sep in enumerate((",", ")")):
            k, t, p = token()
            if k != "v":
                raise lx.error(f"expected the {('real', 'imaginary')[i]} part, found {_found(k, t)}", p)
            elements.values.append(elements.float(t, p, part))
            k, t, p = token()
            if t != sep:
                raise lx.error(f"expected '{sep}' in a complex value, found {_found(k, t)}", p)

    kind, tok, at = token()
    if kind == "elided":
        lx.pos = pos
        return None
    if rank == 0:
        element(kind, tok, at)
        lx.pos = pos
        return elements.array(dims)
    if tok != "{":
        raise lx.error(f"expected '{{' to start a literal of shape {shape.text(False)}, found {_found(kind, tok)}", at)
    counts = [0]  # elements seen at each open level
    want_value = True
    while True:
        kind, tok, at = token()
        depth = len(counts)
        if tok == "}":
            if want_value and counts[-1]:
                raise lx.error("expected a value after ','", at)
            if counts[-1] != dims[depth - 1]:
                raise lx.error(
                    f"too few elements in dimension {depth - 1} of {shape.text(False)}: "
                    f"expected {dims[depth - 1]}, found {counts[-1]}",
                    at,
                )
            counts.pop()
            if not counts:
                lx.pos = pos
                return elements.array(dims)
            want_value = False
        elif tok == ",":
            if want_value:
                raise lx.error("expected a value, found ','", at)
            want_value = True
        elif kind == "eof":
            raise lx.error("unexpected end of input in a literal", at)
        else:
            if not want_value:
                raise lx.error(f"expected ',' or '}}', found {_found(kind, tok)}", at)
            if counts[-1] >= dims[depth - 1]:
                raise lx.error(
                    f"too many elements in dimension {depth - 1} of {shape.text(False)} "
                    f"(expected {dims[depth - 1]})",
                    at,
                )
            if tok == "{":
                if depth >= rank:
                    raise lx.error(f"too many nested braces: {shape.text(False)} has rank {rank}", at)
                counts[-1] += 1
                counts.append(0)
                continue
            if depth < rank:
                raise lx.error(f"expected '{{' (dimension {depth} of {shape.text(False)}), found {_found(kind, tok)}", at)
            element(kind, tok, at)
            counts[-1] += 1
            want_value = False


def _found(kind: str, tok: str) -> str:
    return "end of input" if kind == "eof" else _show(tok)
