"""The kernel builder: op rules compose kernel IR through it.

An op rule's `elemental(kb, instr, index)` returns the IR expression of one
output element; it asks `kb.operand(...)` for its operands' elements, which
either loads from a materialized buffer or inlines a fused producer. Each fused
value is bound to a named local (`v_add_5`) once per element. Statements are
appended to the innermost open block (loop or branch). The builder knows how
values are stored (halves as bits) but no op's semantics.
"""
from __future__ import annotations

import re
from typing import Callable

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, ShapeError, row_major_strides
from . import ir as K
from .simplify import Range, bounds, simplify
from ..hlo.opcodes import Op

F32 = DTYPES["f32"]


def c_ident(name: str) -> str:
    """An identifier fragment from an HLO name: `add.5` -> `add_5`."""
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def compute_type(dt: DType) -> DType:
    """The type a value of `dt` is computed in: halves, f8 and f4 in f32; s2/s4 in s8 and
    u2/u4 in u8 (XLA:CPU widens them too and narrows each op's result)."""
    if dt.name in ("bf16", "f16") or dt.is_narrow_float:
        return F32
    if dt.is_subbyte_int:
        return DTYPES["s8" if dt.kind == "sint" else "u8"]
    return dt


def load_value(dt: DType, stored: K.Expr) -> K.Expr:
    """A stored element (`p[i]`) in its compute type."""
    if dt.name == "bf16":
        return K.Call("aotc_bf16_to_f32", (stored,), F32)
    if dt.name == "f16":
        return K.Call("aotc_f16_to_f32", (stored,), F32)
    if dt.is_narrow_float:
        return K.Call(f"aotc_{dt.name}_to_f32", (stored,), F32)
    if dt.is_subbyte_int:
        return K.Call(f"aotc_wrap_{dt.name}", (stored,), compute_type(dt))
    return stored


def store_value(dt: DType, value: K.Expr) -> K.Expr:
    """A computed value in its storage type (f8/f4: a value of the type keeps its code, NaN
    payloads included; any other value is rounded as XLA:CPU rounds an op's f32 result)."""
    if dt.name == "bf16":
        return K.Call("aotc_f32_to_bf16", (value,), dt)
    if dt.name == "f16":
        return K.Call("aotc_f32_to_f16", (value,), dt)
    if dt.is_narrow_float or dt.is_subbyte_int:
        return K.Call(f"aotc_store_{dt.name}", (value,), dt)
    return value


def narrow_result(dt: DType, value: K.Expr) -> K.Expr:
    """An f32 result (a dot's sum) as XLA:CPU narrows it to an f8/f4 type: through f16, any
    NaN made that type's quiet NaN; other types unchanged."""
    if dt.is_narrow_float:
        return K.Call(f"aotc_round_{dt.name}", (value,), F32)
    return value


class Index:
    """A multi-dimensional element index over `dims`, known per dimension, as a row-major
    linear index, or both; the missing form is derived on demand."""

    __slots__ = ("dims", "exprs", "linear", "_key")

    def __init__(self, dims, exprs=None, linear=None):
        self.dims = tuple(dims)
        self.exprs = None if exprs is None else tuple(K.lift(e) for e in exprs)
        self.linear = K.lift(linear) if linear is not None else (None if self.dims else K.Const(0))
        assert self.exprs is not None or self.linear is not None or not self.dims
        if not self.dims:
            self.exprs = ()
        # fixed at creation, so deriving the other form later keeps cached values valid
        self._key = ("E", self.exprs) if self.exprs is not None else ("L", self.linear)

    def key(self):
        return self._key


_ATOMIC = (K.Var, K.Const)
# the op trait (ops/rule.py KEEPS_INDEX) under which an op reads its operands at its own index
KEEPS_INDEX = "keeps_index"


def strided_index(dims: tuple[int, ...], exprs: tuple[K.Expr, ...], d: int, ld: int) -> K.Expr:
    """Where the element at `exprs` of an array of `dims` is when each row of its dims[d:]
    starts `ld` elements after the previous one (a strided part of a larger array)."""
    total: K.Expr = K.Const(0)
    step = 1
    for k in range(len(dims) - 1, -1, -1):
        if dims[k] != 1:
            total = total + exprs[k] * step
        step = step * dims[k] if k != d else ld
    return total


class KernelBuilder:
    """Accumulates the IR statements of one kernel body."""

    def __init__(self, fused: set[str], producers: dict[str, Instruction], buffers: dict[str, K.Buf],
                 rules: Callable[[str], object], constants: dict[str, K.Expr]):
        self.fused = fused  # names of instructions computed inline in this kernel
        self.producers = producers  # name -> instruction (whole computation)
        # () -> the enclosing computation's instructions, fusions unfolded (set by the kernel
        # assembler): where a fusion parameter's value came from (ops/bounds.py)
        self.context: Callable[[], dict[str, Instruction]] | None = None
        self.buffers = buffers  # name -> materialized buffer
        self._rules = rules
        self.scalar_consts = constants  # name -> literal of an inlined scalar constant
        self._blocks: list[list[K.Stmt]] = [[]]
        self._open: list[tuple] = []  # per open block: (kind, data)
        self._scopes: list[dict] = [{}]
        self._used: set[str] = {"lo", "hi"}  # a threaded kernel's range (kernel/parallel.py)
        self._mutable: set[str] = set()  # locals that may be assigned (`local`, `assign`)
        self._ranges: dict[str, Range] = {}  # inclusive bounds of loop variables and index locals
        # set by the kernel assembler
        self.scalar_function: Callable[[str], str] | None = None  # computation -> function name
        self.subprogram: Callable[[str], object] | None = None  # computation -> lowered Program
        self.scalar_computation: Callable[[str], object] | None = None  # name -> Computation
        self.scratch: K.Buf | None = None
        self.custom_calls: frozenset[str] = frozenset()  # custom-call targets the application implements
        self.conv_algorithm = "direct"  # CompileOptions.conv_algorithm: how 3x3 convolutions run
        self.host_call: Callable | None = None  # HostCall (kernel/host.py) -> the wrapper's C name
        self.custom_call_function: Callable[[str], str] | None = None  # target -> the application's C function
        self.scratch_bytes = 0
        self.uses_pool = False
        # the root of a GEMM's epilogue: what the kernel stores at each element of the
        # output, given the GEMM's value there (apply_epilogue)
        self.epilogue: Instruction | None = None
        # materialized values stored in rows `ld` elements apart (a strided part of a
        # concatenation's buffer): name -> (buffer, d, ld); read only through `value`
        self.strided: dict[str, tuple[K.Buf, int, int]] = {}
        self.out_rows: tuple[int, int] | None = None  # the output is such a part: (d, ld)
        self.out_rows_done = False  # the op rule wrote the output in those rows

    # ---- resources
    def pool(self) -> K.Expr:
        self.uses_pool = True
        return K.Pool()

    def need_scratch(self, nbytes: int) -> K.Buf:
        """Reserve `nbytes` of 64-byte-aligned arena scratch for this kernel; its buffer."""
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return self.scratch

    def leaves(self, name: str) -> list[K.Buf]:
        """Buffers of every array leaf of a (possibly tuple-valued) operand, in order."""
        ins = self.producers[name]
        if ins.opcode == Op.TUPLE:
            return [b for o in ins.operands for b in self.leaves(o)]
        if f"{name}#0" in self.buffers:
            k, out = 0, []
            while f"{name}#{k}" in self.buffers:
                out.append(self.buffers[f"{name}#{k}"])
                k += 1
            return out
        return [self.buffers[name]]

    # ---- statements
    def emit(self, s: K.Stmt) -> None:
        if isinstance(s, (K.Decl, K.Assign)):
            self._mutable.add(s.var.name)
        self._blocks[-1].append(s)

    def fresh(self, base: str) -> str:
        base = c_ident(base)
        name, n = base, 1
        while name in self._used:
            name, n = f"{base}_{n}", n + 1
        self._used.add(name)
        return name

    def let(self, value: K.Expr, base: str = "t") -> K.Expr:
        """`value` bound to a new local (atomic values are returned as they are). An index
        value already bound where this statement is (an open block's earlier `let`) is
        that local: two reads of one element through the same reshape then have the same
        index, so the element is computed once (`value` finds it)."""
        key = None
        if not isinstance(value, _ATOMIC) and self._pure_index(value):
            value = simplify(value, self._ranges)  # l % 512 of an l below 512 is l
            key = ("let", value)
        if isinstance(value, _ATOMIC):
            return value
        if key is not None:
            for scope in reversed(self._scopes):
                if key in scope:
                    return scope[key]
        v = K.Var(self.fresh(base), value.ty)
        self.emit(K.Let(v, value))
        if key is not None:
            self._scopes[-1][key] = v
            r = bounds(value, self._ranges)
            if r is not None:
                self._ranges[v.name] = r
        return v

    def _pure_index(self, value: K.Expr) -> bool:
        """An index computed from loop variables, constants and immutable locals only."""
        return value.ty == K.INDEX and all(
            isinstance(n, (K.Const, K.Binary, K.Unary, K.Cast)) or isinstance(n, K.Var) and n.name not in self._mutable
            for n in K.nodes(value))

    def local(self, ty: DType, init: K.Expr | None, base: str) -> K.Var:
        """A mutable local (accumulator)."""
        v = K.Var(self.fresh(base), ty)
        self.emit(K.Decl(v, init))
        return v

    def assign(self, var: K.Var, value: K.Expr) -> None:
        self.emit(K.Assign(var, value))

    def store(self, buf: K.Buf, index: K.Expr, value: K.Expr) -> None:
        self.emit(K.Store(buf, K.lift(index), value))

    def _push(self, kind: str, data) -> None:
        self._blocks.append([])
        self._open.append((kind, data))
        self._scopes.append({})

    def loop(self, var: str, n, marks=(), start=0, step: int = 1) -> K.Var:
        """Open `for (var = start; var < n; var += step)`; closed by `close()`."""
        self._used.add(var)
        v = K.Var(var)
        lo, hi = K.lift(start), K.lift(n)
        if isinstance(lo, K.Const) and isinstance(hi, K.Const) and hi.value > lo.value:
            self._ranges[var] = (lo.value, hi.value - 1)
        else:
            self._ranges.pop(var, None)
        self._push("loop", (v, K.lift(start), K.lift(n), step, frozenset(marks)))
        return v

    def repeat(self) -> None:
        self._push("repeat", None)

    def while_(self, cond: K.Expr) -> None:
        """Open `while (cond)`: a `Repeat` left by `Break` when `cond` fails on entry to a
        trip; closed by `close()`."""
        self.repeat()
        self.emit(K.If(K.Unary("!", cond, K.BOOL), (K.Break(),)))

    def if_(self, cond: K.Expr) -> None:
        self._push("if", [cond, None])

    def else_(self) -> None:
        kind, data = self._open[-1]
        assert kind == "if" and data[1] is None
        data[1] = tuple(self._blocks.pop())
        self._blocks.append([])
        self._scopes[-1] = {}

    def close(self) -> None:
        kind, data = self._open.pop()
        body = tuple(self._blocks.pop())
        self._scopes.pop()
        if kind == "loop":
            v, start, stop, step, marks = data
            self.emit(K.Loop(v, start, stop, body, step, marks))
        elif kind == "repeat":
            self.emit(K.Repeat(body))
        elif kind == "if":
            cond, then = data
            self.emit(K.If(cond, then, body) if then is not None else K.If(cond, body))

    def body(self) -> tuple[K.Stmt, ...]:
        assert not self._open, f"unclosed blocks: {[k for k, _ in self._open]}"
        return tuple(self._blocks[0])

    # ---- indices
    def exprs(self, idx: Index) -> tuple[K.Expr, ...]:
        if idx.exprs is None:
            lin = idx.linear
            if not isinstance(lin, _ATOMIC):
                lin = self.let(lin, "l")
            out = []
            for d, (n, s) in enumerate(zip(idx.dims, row_major_strides(idx.dims))):
                if n == 1:
                    out.append(K.Const(0))
                    continue
                e = lin // s if s != 1 else lin
                out.append(e % n if d > 0 else e)
            idx.exprs = tuple(out)
        return idx.exprs

    def linear(self, idx: Index) -> K.Expr:
        if idx.linear is None:
            total: K.Expr = K.Const(0)
            for e, s, n in zip(idx.exprs, row_major_strides(idx.dims), idx.dims):
                if n != 1:
                    total = total + e * s
            idx.linear = total
        return idx.linear

    # ---- epilogues
    def apply_epilogue(self, hero: Instruction, out: K.Buf, src: K.Buf, src_at: K.Expr, src_ld: int,
                       first: K.Expr, rows: K.Expr, row_len: int, col0: K.Expr = K.Const(0),
                       cols: K.Expr | int | None = None) -> None:
        """Write the block of rows [first, first + rows) and columns [col0, col0 + cols) (all
        `row_len` by default) of the output, row-major over the hero's shape: the epilogue's
        value at each element, where the hero's value at (first + r, col0 + c) is
        `src[src_at + r * src_ld + c]` (`src` may be `out` itself). The value depends only on
        the element, so any blocking gives the same bits."""
        root = self.epilogue
        r = self.loop(self.fresh("r"), rows)
        c = self.loop(self.fresh("c"), row_len if cols is None else cols, (K.VECTOR,))
        row, col = first + r, col0 + c
        dims = hero.array_shape.dims
        # a row is the trailing dims whose sizes multiply to row_len (a dot's N may span
        # several: f32[1,16,2,16] with N = 2*16); the column splits over those, the row over the rest
        k, tail = len(dims), 1
        while k > 0 and tail < row_len:
            k -= 1
            tail *= dims[k]
        if tail != row_len:
            raise AssertionError(f"epilogue rows of {row_len} do not split {hero.name}'s dims {dims}")
        exprs: list[K.Expr] = []
        stride = 1
        for d in range(len(dims) - 1, k - 1, -1):
            e = col // stride if stride != 1 else col
            exprs.insert(0, K.Const(0) if dims[d] == 1 else (e % dims[d] if d > k else e))
            stride *= dims[d]
        stride = 1
        for d in range(k - 1, -1, -1):
            e = row // stride if stride != 1 else row
            exprs.insert(0, K.Const(0) if dims[d] == 1 else (e % dims[d] if d > 0 else e))
            stride *= dims[d]
        lin = row * row_len + col
        idx = Index(dims, tuple(exprs), lin)
        g = load_value(src.dtype, K.Load(src, src_at + r * src_ld + c))
        hdt = hero.array_shape.dtype
        if hdt != src.dtype:  # a half-precision product computed in f32: rounded once, as a result
            g = load_value(hdt, store_value(hdt, g))
        self._scopes[-1][(hero.name, idx.key())] = self.let(g, "g_" + hero.name)
        self.store(out, lin, store_value(root.array_shape.dtype, self.value(root, idx)))
        self.close()
        self.close()

    # ---- values
    def operand(self, instr: Instruction, i: int, idx: Index) -> K.Expr:
        return self.value(self.producers[instr.operands[i]], idx)

    def value(self, instr: Instruction, idx: Index) -> K.Expr:
        """The IR expression (usually a local) of `instr`'s element at `idx`."""
        if instr.name in self.scalar_consts:
            return self.scalar_consts[instr.name]
        key = (instr.name, idx.key())
        for scope in reversed(self._scopes):
            if key in scope:
                return scope[key]
        if instr.name in self.fused:
            rule = self._rules(instr.opcode)
            if KEEPS_INDEX in rule.traits:
                self._same_index_operands_first(instr, idx)
            val = self.let(rule.elemental(self, instr, idx), "v_" + instr.name)
        elif instr.name in self.strided:
            buf, d, ld = self.strided[instr.name]
            at = strided_index(idx.dims, self.exprs(idx), d, ld)
            val = self.let(load_value(buf.dtype, K.Load(buf, at)), "x_" + instr.name)
        else:
            buf = self.buffers[instr.name]
            val = self.let(load_value(buf.dtype, K.Load(buf, self.linear(idx))), "x_" + instr.name)
        self._scopes[-1][key] = val
        return val

    def _same_index_operands_first(self, instr: Instruction, idx: Index) -> None:
        """Compute the operands `instr` reads at `idx` itself, and theirs, deepest first with
        an explicit stack, in the order the rules would ask for them: a chain of thousands
        of fused elementwise ops then costs no Python recursion (each rule finds its
        operands already computed). Only ops that read their operands at the output's own
        index are looked through, so every value computed here is one the rules would
        compute anyway, at an index in bounds, in the same order."""
        dims = instr.array_shape.dims if isinstance(instr.shape, ArrayShape) else None
        order: list[Instruction] = []
        seen: set[str] = {instr.name}
        stack = [(instr, False)]
        while stack:
            cur, expanded = stack.pop()
            if expanded or cur is not instr and not self._looks_through(cur):
                order.append(cur)
                continue
            stack.append((cur, True))
            for o in reversed(dict.fromkeys(cur.operands)):  # operand 0 first, as the rules ask
                op = self.producers[o]
                if (o in seen or o in self.scalar_consts or not isinstance(op.shape, ArrayShape)
                        or op.array_shape.dims != dims or any((o, idx.key()) in scope for scope in self._scopes)):
                    continue
                seen.add(o)
                stack.append((op, False))
        for op in order[:-1]:  # the last is `instr`
            self.value(op, idx)

    def _looks_through(self, instr: Instruction) -> bool:
        return instr.name in self.fused and KEEPS_INDEX in self._rules(instr.opcode).traits

    def branch_value(self, ty: DType, arms: list[tuple[K.Expr | None, Callable[[], K.Expr]]], base: str) -> K.Var:
        """`if (c1) v = a1(); else if (c2) ... else v = an();` -- arms evaluated only when taken,
        so an operand is never read at an index outside its bounds."""
        v = self.local(ty, None, base)

        def chain(k: int) -> tuple[K.Stmt, ...]:
            cond, make = arms[k]
            self._push("arm", None)
            self.assign(v, K.lift(make()))
            self._open.pop()
            self._scopes.pop()
            taken = tuple(self._blocks.pop())
            if cond is None:
                return taken
            rest = chain(k + 1) if k + 1 < len(arms) else ()
            return (K.If(K.lift(cond), taken, rest),)

        for s in chain(0):
            self.emit(s)
        return v
