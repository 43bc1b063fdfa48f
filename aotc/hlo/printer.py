"""HLO text from the IR: modules, computations, instructions, attributes, literals.

Output is the optimized-dump dialect (`%` on every name; a signature where the
computation had one) and parses back to an equal Module. Floats print in the
shortest decimal that reads back bit-exactly (NaN sign and payload included).
Printing never interprets what an op means.
"""
from __future__ import annotations

import re
from math import prod
from typing import Any

import numpy as np

from .dtypes import DTYPES, DType
from .ir import (
    COMPUTATION_ATTRS,
    Alias,
    Computation,
    DimLabels,
    Instruction,
    Literal,
    Module,
    PadDim,
    Raw,
    SliceDim,
    StackFrames,
    Window,
)
from .shape import Shape, TupleShape
from .opcodes import Op

_BARE = re.compile(r"[A-Za-z_](?:[\w.]|-(?!>))*", re.A)
_QUOTED_ATTRS = frozenset({"custom_call_target"})
# IEEE-like float types whose NaNs may carry a payload: (uint view, mantissa bits)
_IEEE = {
    "f16": (np.uint16, 10), "bf16": (np.uint16, 7), "f32": (np.uint32, 23), "f64": (np.uint64, 52),
    "f8e5m2": (np.uint8, 2), "f8e4m3": (np.uint8, 3), "f8e3m4": (np.uint8, 4),
}


def print_shape(shape: Shape, with_layout: bool = True) -> str:
    return shape.text(with_layout)


def quote_string(value: str) -> str:
    """A double-quoted HLO string whose value is `value` (C-style escapes)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped.replace("\t", "\\t").replace("\r", "\\r").replace("\0", "\\0") + '"'


# ---------------------------------------------------------------- module


def print_module(m: Module) -> str:
    parts = [_header(m)]
    if m.stack_frames is not None:
        parts.append(_stack_frames(m.stack_frames))
    parts.extend(print_computation(c) for c in m.computations)
    return "\n\n".join(parts) + "\n"


def _header(m: Module) -> str:
    attrs = list(m.header_attrs)
    lead = [attrs.pop(0)] if attrs and attrs[0][0] == "is_scheduled" else []
    fields = [f"{k}={v.text}" for k, v in lead]
    if m.aliases:
        fields.append("input_output_alias={ " + ", ".join(_alias(a) for a in m.aliases) + " }")
    if m.entry_params is not None and m.entry_result is not None:
        params = ", ".join(s.text() for s in m.entry_params)
        fields.append(f"entry_computation_layout={{({params})->{m.entry_result.text()}}}")
    fields.extend(f"{k}={v.text}" for k, v in attrs)
    return ", ".join([f"HloModule {m.name}", *fields])


def _alias(a: Alias) -> str:
    def index(ix: tuple[int, ...]) -> str:
        return "{" + ",".join(map(str, ix)) + "}"

    return f"{index(a.output_index)}: ({a.param_number}, {index(a.param_index)}, {a.kind})"


def _stack_frames(frames: StackFrames) -> str:
    tables = {
        "FileNames": [(n, quote_string(s)) for n, s in frames.file_names],
        "FunctionNames": [(n, quote_string(s)) for n, s in frames.function_names],
        "FileLocations": list(frames.file_locations),
        "StackFrames": list(frames.stack_frames),
    }
    sections = []
    for name in frames.present or tuple(k for k, rows in tables.items() if rows):
        sections.append("\n".join([name, *(f"{n} {text}" for n, text in tables[name])]))
    return "\n\n".join(sections)


def print_computation(c: Computation) -> str:
    head = ("ENTRY " if c.is_entry else "") + "%" + c.name
    if c.has_signature:
        params = ", ".join(f"{p.name}: {p.shape.text(False)}" for p in c.parameters)
        result = c.root_instruction.shape.text(False) if c.has(c.root) else "()"
        head += f" ({params}) -> {result}"
    lines = [head + " {"]
    lines.extend("  " + print_instruction(i, i.name == c.root) for i in c.instructions)
    lines.append("}")
    return "\n".join(lines)


def print_instruction(i: Instruction, is_root: bool = False) -> str:
    if i.opcode == Op.PARAMETER:
        operands = str(i.parameter_number if i.parameter_number is not None else 0)
    elif i.opcode == Op.CONSTANT:
        operands = print_literal(i.literal) if i.literal is not None else "{...}"
    else:
        operands = ", ".join("%" + o for o in i.operands)
    text = f"{'ROOT ' if is_root else ''}%{i.name} = {i.shape.text()} {i.opcode}({operands})"
    return text + "".join(f", {k}={print_attribute(k, v)}" for k, v in i.attrs)


# ---------------------------------------------------------------- attributes


def print_attribute(key: str, value: Any) -> str:
    """The text of one attribute value (what follows `key=`)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        if key in COMPUTATION_ATTRS:
            return "%" + value
        return value if key not in _QUOTED_ATTRS and _BARE.fullmatch(value) else quote_string(value)
    if isinstance(value, Window):
        return _window(value)
    if isinstance(value, DimLabels):
        return f"{value.lhs}_{value.rhs}->{value.out}"
    if isinstance(value, tuple):
        if key == "padding" or (value and isinstance(value[0], PadDim)):
            return "x".join(f"{p.lo}_{p.hi}" + (f"_{p.interior}" if p.interior else "") for p in value)
        if value and isinstance(value[0], SliceDim):
            return "{" + ", ".join(
                f"[{s.start}:{s.limit}" + (f":{s.stride}" if s.stride != 1 else "") + "]" for s in value
            ) + "}"
        if value and isinstance(value[0], str):
            return "{" + ", ".join("%" + v for v in value) + "}"
        return "{" + ",".join(str(int(v)) for v in value) + "}"
    raise TypeError(f"cannot print attribute {key}={value!r}")


def _window(w: Window) -> str:
    if not w.dims:
        return "{}"
    d = w.dims
    fields = ["size=" + "x".join(str(x.size) for x in d)]
    if any(x.stride != 1 for x in d):
        fields.append("stride=" + "x".join(str(x.stride) for x in d))
    if any(x.pad_lo or x.pad_hi for x in d):
        fields.append("pad=" + "x".join(f"{x.pad_lo}_{x.pad_hi}" for x in d))
    if any(x.lhs_dilate != 1 for x in d):
        fields.append("lhs_dilate=" + "x".join(str(x.lhs_dilate) for x in d))
    if any(x.rhs_dilate != 1 for x in d):
        fields.append("rhs_dilate=" + "x".join(str(x.rhs_dilate) for x in d))
    if any(x.reversal for x in d):
        fields.append("rhs_reversal=" + "x".join("1" if x.reversal else "0" for x in d))
    return "{" + " ".join(fields) + "}"


# ---------------------------------------------------------------- literals


def print_literal(lit: Literal) -> str:
    """`{...}` when elided, `( a, b )` for tuples, else the nested-brace array."""
    if lit.values is None:
        return "{...}"
    if isinstance(lit.values, tuple):
        return "( " + ", ".join(print_literal(e) for e in lit.values) + " )"
    shape = lit.shape
    assert not isinstance(shape, TupleShape)
    arr = np.asarray(lit.values)
    strs = _element_strings(arr.reshape(-1), shape.dtype, scalar=arr.ndim == 0)
    return strs[0] if arr.ndim == 0 else _nest(strs, arr.shape)


def _nest(strs: list[str], dims: tuple[int, ...]) -> str:
    if len(dims) == 1:
        return "{" + ", ".join(strs) + "}"
    level = strs
    for k in range(len(dims) - 1, -1, -1):
        n = dims[k]
        level = ["{ " + ", ".join(level[g * n:(g + 1) * n]) + " }" if n else "{}" for g in range(prod(dims[:k]))]
    return level[0]


def _element_strings(flat: np.ndarray, dt: DType, scalar: bool) -> list[str]:
    if dt.kind == "pred":
        if scalar:
            return ["true" if flat[0] else "false"]
        return np.where(flat.astype(bool), "1", "0").tolist()
    if dt.kind in ("sint", "uint"):
        if dt.is_subbyte_int:
            flat = flat.astype(np.int8 if dt.kind == "sint" else np.uint8)
        return flat.astype(str).tolist()
    if dt.kind == "complex":
        part = DTYPES["f32" if dt.name == "c64" else "f64"]
        re_, im = _float_strings(np.ascontiguousarray(flat.real), part), _float_strings(np.ascontiguousarray(flat.imag), part)
        return [f"({a}, {b})" for a, b in zip(re_, im)]
    return _float_strings(flat, dt)


def _float_strings(flat: np.ndarray, dt: DType) -> list[str]:
    """Shortest round-trip decimals; types narrower than f32 go through f32, which holds them exactly."""
    native = flat if dt.name in ("f16", "f32", "f64") else flat.astype(np.float32)
    out = [s[:-2] if s.endswith(".0") else s for s in native.astype(str).tolist()]  # 2.0 -> 2, as XLA
    for i in np.flatnonzero(np.isnan(flat)).tolist():
        out[i] = _nan_text(flat[i:i + 1], dt)
    return out


def _nan_text(one: np.ndarray, dt: DType) -> str:
    """`nan`, `-nan`, or `nan(0x...)` when the payload is not the default quiet one."""
    if dt.name in _IEEE:
        uint, mbits = _IEEE[dt.name]
        bits = int(one.view(uint)[0])
        width = np.dtype(uint).itemsize * 8
        sign = "-" if bits >> (width - 1) else ""
        payload = bits & ((1 << mbits) - 1)
        return f"{sign}nan" if payload == 1 << (mbits - 1) else f"{sign}nan(0x{payload:x})"
    raw = one.tobytes()
    negative = np.array([-np.nan]).astype(dt.numpy).tobytes()
    positive = np.array([np.nan]).astype(dt.numpy).tobytes()
    return "-nan" if raw == negative and raw != positive else "nan"
