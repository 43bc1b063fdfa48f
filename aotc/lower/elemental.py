"""The kernel builder: turns element expressions of op rules into C statements.

An op rule's `elemental(ctx, instr, index)` returns the C expression of one
output element; it asks `ctx.operand(...)` for its operands' elements, which
either loads from a materialized buffer or recursively inlines a fused
producer. Values are bound to named locals (`v_add_5`) so every fused
instruction is computed once per element. This module knows C spelling of
types, literals and loads; it knows no op's semantics.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..hlo.dtypes import DType
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, row_major_strides


def c_ident(name: str) -> str:
    """A C identifier fragment from an HLO name: `add.5` -> `add_5`."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def compute_ctype(dt: DType) -> str:
    """C type a value of `dt` is computed in (halves compute in float)."""
    if dt.name in ("bf16", "f16") or dt.name.startswith("f8"):
        return "float"
    return dt.c_type


def load_expr(dt: DType, ref: str) -> str:
    """Convert a stored element (`p[i]`) to its compute type."""
    if dt.name == "bf16":
        return f"aotc_bf16_to_f32({ref})"
    if dt.name == "f16":
        return f"aotc_f16_to_f32({ref})"
    return ref


def store_expr(dt: DType, value: str) -> str:
    """Convert a computed value to its storage type."""
    if dt.name == "bf16":
        return f"aotc_f32_to_bf16({value})"
    if dt.name == "f16":
        return f"aotc_f32_to_f16({value})"
    return value


def c_float(x: float, dt_name: str) -> str:
    """An exact C literal for a float value computed as `dt_name`."""
    suffix = "" if dt_name == "f64" else "f"
    cast = "double" if dt_name == "f64" else "float"
    if math.isnan(x):
        return f"(({cast})NAN)" if not np.signbit(x) else f"(-({cast})NAN)"
    if math.isinf(x):
        return f"(({cast})INFINITY)" if x > 0 else f"(-({cast})INFINITY)"
    if x == 0:
        return f"-0.0{suffix}" if math.copysign(1.0, x) < 0 else f"0.0{suffix}"
    short = str(np.float64(x)) if dt_name == "f64" else str(np.float32(x))
    exact = np.float64(short) == x if dt_name == "f64" else np.float32(short) == np.float32(x)
    if exact and "inf" not in short and "nan" not in short:
        if "e" not in short and "." not in short:
            short += ".0"
        return f"{short}{suffix}"
    return f"{float(x).hex()}{suffix}"


_INT_BOUNDS = {
    "s8": "INT8", "s16": "INT16", "s32": "INT32", "s64": "INT64",
    "u8": "UINT8", "u16": "UINT16", "u32": "UINT32", "u64": "UINT64",
}


def c_literal(value, dt: DType) -> str:
    """The C literal of one element of type `dt` (in its compute type)."""
    if dt.kind == "pred":
        return "1" if bool(value) else "0"
    if dt.kind == "float":
        name = "f64" if dt.name == "f64" else "f32"
        return c_float(float(value), name)
    if dt.kind == "complex":
        name = "f64" if dt.name == "c128" else "f32"
        v = complex(value)
        return f"aotc_complex_{dt.name}({c_float(v.real, name)}, {c_float(v.imag, name)})"
    v = int(value)
    pfx = _INT_BOUNDS[dt.name] if dt.name in _INT_BOUNDS else None
    if pfx is None:
        return str(v)
    if dt.kind == "sint":
        lo = -(1 << (dt.bits - 1))
        if v == lo:
            return f"{pfx}_MIN"
        return f"(({dt.c_type}){v})" if dt.bits < 64 else f"INT64_C({v})"
    return f"(({dt.c_type}){v}u)" if dt.bits < 64 else f"UINT64_C({v})"


@dataclass(frozen=True, slots=True)
class Buffer:
    """A materialized array a kernel reads or writes: a C pointer expression."""

    cname: str
    shape: ArrayShape


class Index:
    """A multi-dimensional element index over `dims`, known as per-dim C
    expressions, as a row-major linear C expression, or both; the missing form
    is derived on demand (and bound to a local)."""

    __slots__ = ("dims", "exprs", "linear", "_key")

    def __init__(self, dims: tuple[int, ...], exprs: tuple[str, ...] | None = None, linear: str | None = None):
        assert exprs is not None or linear is not None or not dims
        self.dims = tuple(dims)
        self.exprs = exprs
        self.linear = linear if (linear is not None or dims) else "0"
        if not dims:
            self.exprs = ()
        # fixed at creation, so deriving the other form later keeps cached values valid
        self._key = f"E{self.exprs}" if self.exprs is not None else f"L{self.linear}"

    def key(self) -> str:
        return self._key


class KernelBuilder:
    """Accumulates the C statements of one kernel body."""

    def __init__(self, fused: set[str], producers: dict[str, Instruction], buffers: dict[str, Buffer],
                 rules: Callable[[str], object], constants: dict[str, str]):
        self.fused = fused  # names of instructions computed inline in this kernel
        self.producers = producers  # name -> instruction (whole computation)
        self.buffers = buffers  # name -> materialized buffer
        self._rules = rules
        self.scalar_consts = constants  # name -> C literal for inlined scalar constants
        self.lines: list[str] = []
        self.indent = 1
        self._scopes: list[dict[str, str]] = [{}]
        self._used: set[str] = set()
        # set by the kernel assembler: computation name -> C function name, and the scratch pointer
        self.scalar_function: Callable[[str], str] | None = None
        self.subprogram: Callable[[str], object] | None = None  # computation -> lowered Program
        self.scalar_computation: Callable[[str], object] | None = None  # name -> Computation
        self.scratch: str | None = None
        self.scratch_bytes = 0  # arena scratch this kernel uses, known before or during emission
        # open loops: (variable, index of its `for` line, its indent, scope depth outside it)
        self._loops: list[list] = []
        self._insert_at: int | None = None  # while hoisting: where lines go
        self.uses_pool = False  # the kernel takes the thread pool (`par`, NULL: serial)

    def pool(self) -> str:
        """The C name of the thread pool (`const aotc_par*`, NULL when serial) for this kernel."""
        self.uses_pool = True
        return "par"

    def need_scratch(self, nbytes: int) -> str:
        """Reserve `nbytes` of 64-byte-aligned arena scratch for this kernel; its pointer name."""
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return self.scratch

    def leaves(self, name: str) -> list[Buffer]:
        """Buffers of every array leaf of a (possibly tuple-valued) operand, in order."""
        ins = self.producers[name]
        if ins.opcode == "tuple":
            return [b for o in ins.operands for b in self.leaves(o)]
        if f"{name}#0" in self.buffers:
            k, out = 0, []
            while f"{name}#{k}" in self.buffers:
                out.append(self.buffers[f"{name}#{k}"])
                k += 1
            return out
        return [self.buffers[name]]

    # ---- statements
    def line(self, text: str) -> None:
        if self._insert_at is None:
            self.lines.append("    " * self.indent + text)
        else:
            self.lines.insert(self._insert_at, "    " * self.indent + text)
            self._insert_at += 1

    def fresh(self, base: str) -> str:
        base = c_ident(base)
        name, n = base, 1
        while name in self._used:
            name, n = f"{base}_{n}", n + 1
        self._used.add(name)
        return name

    def let(self, ctype: str, expr: str, base: str = "t") -> str:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|-?[0-9][0-9a-fA-Fx.p+\-]*[fuUL]*", expr):
            return expr  # already atomic
        name = self.fresh(base)
        self.line(f"const {ctype} {name} = {expr};")
        return name

    def open(self, header: str) -> None:
        self.line(header + " {")
        self.indent += 1
        self._scopes.append({})

    def close(self, trailer: str = "}") -> None:
        self.indent -= 1
        self._scopes.pop()
        if self._loops and self._loops[-1][3] == len(self._scopes):
            self._loops.pop()
        self.line(trailer)

    def loop(self, var: str, n: int | str) -> None:
        self._used.add(var)  # no local may shadow a loop variable
        self._open_loop(var, f"for (int64_t {var} = 0; {var} < {n}; ++{var})")

    def range_loop(self, var: str) -> None:
        """The outermost loop of a kernel that threads may split: it runs [lo, hi)."""
        self._used.update((var, "lo", "hi"))
        self._open_loop(var, f"for (int64_t {var} = lo; {var} < hi; ++{var})")

    def _open_loop(self, var: str, header: str) -> None:
        if self._insert_at is not None:  # no hoisting bookkeeping inside hoisted code
            self.open(header)
            return
        self._loops.append([var, len(self.lines), self.indent, len(self._scopes)])
        self.open(header)

    def _hoist_target(self, idx: "Index"):
        """The innermost open loop, when `idx` names only variables of loops around it
        (the value is the same on every trip: compute it once, before the loop)."""
        if not self._loops or self._insert_at is not None:
            return None
        inner = self._loops[-1]
        outer_vars = {lp[0] for lp in self._loops[:-1]}
        text = " ".join(list(idx.exprs or ()) + [idx.linear or ""])
        names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        return inner if names <= outer_vars else None

    # ---- indices
    def exprs(self, idx: Index) -> tuple[str, ...]:
        if idx.exprs is None:
            lin = idx.linear
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+", lin):
                lin = self.let("int64_t", lin, "l")
            strides = row_major_strides(idx.dims)
            out = []
            for d, (n, s) in enumerate(zip(idx.dims, strides)):
                if n == 1:
                    out.append("0")
                    continue
                e = f"({lin} / {s})" if s != 1 else lin
                if d > 0:
                    e = f"({e} % {n})"
                out.append(e)  # an expression, not a local: unused dimensions cost nothing
            idx.exprs = tuple(out)
        return idx.exprs

    def linear(self, idx: Index) -> str:
        if idx.linear is None:
            terms = []
            for e, s, n in zip(idx.exprs, row_major_strides(idx.dims), idx.dims):
                if n == 1 or e == "0":
                    continue
                terms.append(e if s == 1 else f"{e} * {s}")
            idx.linear = " + ".join(terms) if terms else "0"
        return idx.linear

    # ---- values
    def operand(self, instr: Instruction, i: int, idx: Index) -> str:
        return self.value(self.producers[instr.operands[i]], idx)

    def value(self, instr: Instruction, idx: Index) -> str:
        """C expression (usually a local) of `instr`'s element at `idx`."""
        if instr.name in self.scalar_consts:
            return self.scalar_consts[instr.name]
        key = f"{instr.name}@{idx.key()}"
        for scope in reversed(self._scopes):
            if key in scope:
                return scope[key]
        target = self._hoist_target(idx)
        if target is not None:  # loop-invariant: emit it just before the innermost loop
            saved_indent, before = self.indent, len(self.lines)
            self._insert_at, self.indent = target[1], target[2]
            self._scopes.append({})
            try:
                val = self._compute(instr, idx)
            finally:
                hoisted = self._scopes.pop()
                target[1] += len(self.lines) - before
                self._insert_at, self.indent = None, saved_indent
            outside = self._scopes[target[3] - 1] if target[3] > 0 else self._scopes[0]
            outside.update(hoisted)
            outside[key] = val
            return val
        val = self._compute(instr, idx)
        self._scopes[-1][key] = val
        return val

    def _compute(self, instr: Instruction, idx: Index) -> str:
        if instr.name in self.fused:
            rule = self._rules(instr.opcode)
            expr = rule.elemental(self, instr, idx)
            return self.let(compute_ctype(instr.array_shape.dtype), expr, "v_" + instr.name)
        buf = self.buffers[instr.name]
        return self.let(compute_ctype(buf.shape.dtype),
                        load_expr(buf.shape.dtype, f"{buf.cname}[{self.linear(idx)}]"), "x_" + instr.name)

    def branch_value(self, ctype: str, arms: list[tuple[str | None, Callable[[], str]]], base: str) -> str:
        """`if (c1) v = a1(); else if (c2) ... else v = an();` -- arms evaluated only when taken,
        so an operand is never read at an index outside its bounds."""
        name = self.fresh(base)
        self.line(f"{ctype} {name};")
        for k, (cond, make) in enumerate(arms):
            if cond is None:
                self.open("else" if k else "")
            else:
                self.open(("else if" if k else "if") + f" ({cond})")
            self.line(f"{name} = {make()};")
            self.close()
        return name
