"""The values of `dense<...>` literals for a tensor type: splats, nested lists, `0x...`
bit patterns (of one element or, as a string, of the whole array, little-endian), `true`/
`false` and complex `(re, im)` pairs, into the numpy arrays of `aotc.hlo.ir.Literal`.

Lists take a bulk path (one regex split, one numpy conversion) when their brackets match
the shape; otherwise an exact walker reports the first problem at its line:col.
"""
from __future__ import annotations

import re

import numpy as np

from ...hlo.dtypes import DTYPES, DType
from ...hlo.shape import ArrayShape
from .attributes import Dense
from .lexer import Lexer

_ELEMENT = re.compile(r"\(\s*[^()\[\],\s]+\s*,\s*[^()\[\],\s]+\s*\)|[^\s\[\](),]+")
_ITEM = re.compile(r"\s*(\[|\]|,|\(\s*[^()\[\],\s]+\s*,\s*[^()\[\],\s]+\s*\)|[^\s\[\](),]+)")
_FLOAT = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_INT = re.compile(r"[-+]?\d{1,40}")
_HEX = re.compile(r"0x[0-9A-Fa-f]+")
_WS = {ord(c): None for c in " \t\r\n\f\v"}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def dense_values(lx: Lexer, body: Dense, shape: ArrayShape) -> np.ndarray:
    """The array of `shape` that `body` spells (AotcError at the first bad element)."""
    dt = shape.dtype
    if dt.kind == "token":
        raise lx.error("a constant cannot have type !stablehlo.token", body.pos)
    if body.kind == "hex":
        return _hex_blob(lx, body, shape)
    if body.kind == "scalar":
        return np.full(shape.dims, _one(lx, body.text, body.pos, dt), dtype=dt.numpy)
    fast = _bulk(body.text, shape)
    if fast is not None:
        return fast
    return _walk(lx, body, shape)


def _hex_blob(lx: Lexer, body: Dense, shape: ArrayShape) -> np.ndarray:
    text = body.text
    if not _HEX.fullmatch(text) or len(text) % 2:
        raise lx.error("expected a hexadecimal string \"0x...\" with whole bytes", body.pos)
    data = bytes.fromhex(text[2:])
    dt = shape.dtype
    width = dt.nbytes
    if len(data) == width and shape.size != 1:  # a splat of one element's bytes
        data = data * shape.size
    if len(data) != shape.size * width:
        raise lx.error(f"hexadecimal literal has {len(data)} bytes, a tensor of {shape.size} {dt.name} "
                       f"needs {shape.size * width}", body.pos)
    values = np.frombuffer(data, dtype=dt.numpy).copy()  # the hosts aotc runs on are little-endian
    return values.reshape(shape.dims)


def _skeleton(dims: tuple[int, ...]) -> str:
    if not dims:
        return ""
    level = "[" + "," * (dims[-1] - 1) + "]" if dims[-1] else "[]"
    for n in reversed(dims[:-1]):
        level = "[" + ",".join([level] * n) + "]" if n else "[]"
    return level


def _bulk(text: str, shape: ArrayShape) -> np.ndarray | None:
    dt = shape.dtype
    if dt.kind not in ("float", "sint", "uint") or "(" in text or "0x" in text or not shape.dims:
        return None
    if _ELEMENT.sub("", text).translate(_WS) != _skeleton(shape.dims):
        return None
    items = _ELEMENT.findall(text)
    if len(items) != shape.size:
        return None
    try:
        if dt.kind == "float":
            wide = np.array(items, dtype=np.float64)
            with np.errstate(over="ignore", invalid="ignore"):
                out = wide.astype(dt.numpy)
            if (np.isinf(out) & ~np.isinf(wide)).any() or np.isnan(wide).any() or np.isinf(wide).any():
                return None
        else:
            if not all(_INT.fullmatch(i) for i in items):
                return None
            wide = np.array([int(i) for i in items], dtype=object)
            lo, hi = _int_range(dt)
            if any(v < lo or v > hi for v in wide):
                return None
            out = wide.astype(np.uint64 if dt.name == "u64" else np.int64).astype(dt.numpy)
    except (ValueError, OverflowError):
        return None
    return out.reshape(shape.dims)


def _walk(lx: Lexer, body: Dense, shape: ArrayShape) -> np.ndarray:
    """The exact path: brackets checked against the shape, every element converted."""
    dims, text, base = shape.dims, body.text, body.pos
    values: list = []
    counts: list[int] = []
    pos = 0
    want_value = True
    while True:
        m = _ITEM.match(text, pos)
        if m is None:
            break
        tok, at = m.group(1), base + m.start(1)
        pos = m.end()
        depth = len(counts)
        if tok == "[":
            if depth >= len(dims):
                raise lx.error(f"too many nested brackets: the tensor has rank {len(dims)}", at)
            if depth and counts[-1] >= dims[depth - 1]:
                raise lx.error(f"too many elements in dimension {depth - 1} (expected {dims[depth - 1]})", at)
            if depth:
                counts[-1] += 1
            counts.append(0)
            want_value = True
        elif tok == "]":
            if counts[-1] != dims[depth - 1]:
                raise lx.error(f"dimension {depth - 1} has {counts[-1]} elements, the type says {dims[depth - 1]}", at)
            counts.pop()
            want_value = False
            if not counts:
                break
        elif tok == ",":
            if want_value:
                raise lx.error("expected a value, found ','", at)
            want_value = True
        else:
            if depth < len(dims):
                raise lx.error(f"expected '[' (dimension {depth} of the tensor), found '{tok}'", at)
            if counts[-1] >= dims[depth - 1]:
                raise lx.error(f"too many elements in dimension {depth - 1} (expected {dims[depth - 1]})", at)
            values.append(_one(lx, tok, at, shape.dtype))
            counts[-1] += 1
            want_value = False
    if len(dims) == 0:
        raise lx.error("a list literal for a scalar tensor: write dense<value>", base)
    return np.array(values, dtype=shape.dtype.numpy).reshape(dims)


def _int_range(dt: DType) -> tuple[int, int]:
    bits = 4 if dt.name in ("s4", "u4") else dt.bits
    if dt.kind == "uint":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _one(lx: Lexer, tok: str, at: int, dt: DType):
    """One element's value for `dt`."""
    kind = dt.kind
    if kind == "pred":
        if tok in ("true", "false", "1", "0"):
            return tok in ("true", "1")
        if _HEX.fullmatch(tok) and int(tok, 16) in (0, 1):
            return bool(int(tok, 16))
        raise lx.error(f"invalid i1 value '{tok}' (expected true or false)", at)
    if kind in ("sint", "uint"):
        if _HEX.fullmatch(tok):
            v = int(tok, 16)
            bits = 4 if dt.name in ("s4", "u4") else dt.bits
            if v >> bits:
                raise lx.error(f"bit pattern {tok} is wider than {dt.name}", at)
            return v - (1 << bits) if dt.kind == "sint" and v >> (bits - 1) else v
        if not _INT.fullmatch(tok):
            raise lx.error(f"invalid {dt.name} value '{tok}'", at)
        lo, hi = _int_range(dt)
        if not lo <= int(tok) <= hi:
            raise lx.error(f"value {tok} is out of range for {dt.name}", at)
        return int(tok)
    if kind == "complex":
        if not tok.startswith("("):
            raise lx.error(f"expected '(re, im)' for a {dt.name} value, found '{tok}'", at)
        part = "f32" if dt.name == "c64" else "f64"
        re_text, im_text = (t.strip() for t in tok[1:-1].split(","))
        return complex(_float(lx, re_text, at, DTYPES[part]), _float(lx, im_text, at, DTYPES[part]))
    return _float(lx, tok, at, dt)


def _float(lx: Lexer, tok: str, at: int, dt: DType) -> float:
    if _HEX.fullmatch(tok):
        v = int(tok, 16)
        if v >> dt.bits:
            raise lx.error(f"bit pattern {tok} is wider than {dt.name}", at)
        return np.array(v, dtype=np.uint64).astype(_UINT[dt.nbytes]).view(dt.numpy).item()
    if not _FLOAT.fullmatch(tok):
        raise lx.error(f"invalid {dt.name} value '{tok}'", at)
    v = float(tok)
    with np.errstate(over="ignore", invalid="ignore"):
        cast = np.array(v).astype(dt.numpy)
    if not np.isfinite(cast):
        raise lx.error(f"value {tok} is out of range for {dt.name}", at)
    return v

