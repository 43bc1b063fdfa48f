"""The batch-norm ops rewritten into elementwise ops and reductions, as XLA:CPU's
BatchNormExpander (xla/service/batchnorm_expander.cc) writes them: the same instructions
in the same order, so the later passes (the division by the element count becoming a
multiplication by its reciprocal, constant folding) and the kernels see what XLA's do.
Epsilon is the f32 XLA holds, converted to the operand type. Uses of a training or grad
op's tuple elements are forwarded to the values that compute them. A narrow float op (f8,
f4) is XLA:CPU's: the whole op in f16 (f8e8m0fnu: f32) on converted operands, each result
converted back.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Computation, Instruction, Module
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape, TupleShape
from ..ops.batch_norm import epsilon, feature_index
from .rewrite import Graph, Names, broadcast, constant, op, sweep

_BATCH_NORM = (Op.BATCH_NORM_INFERENCE, Op.BATCH_NORM_TRAINING, Op.BATCH_NORM_GRAD)


def expand_batch_norm(m: Module) -> tuple[Module, bool]:
    entry = m.entry_computation
    scalars = {}  # operand type -> its scalar shape, for each batch-norm op's operand
    for i in entry.instructions:
        if i.opcode in _BATCH_NORM:
            a = entry.get(i.operands[0]).array_shape
            dt = _wide(a.dtype)
            scalars.setdefault(dt.name, a.with_dims((), dt).with_layout(None))
    if not scalars:
        return m, False
    taken = {c.name for c in m.computations}
    adders: dict[str, str] = {}
    comps = list(m.computations)
    for t in sorted(scalars):
        adders[t] = _fresh(taken, f"scalar_add_{t}")
        comps.append(_add_computation(adders[t], scalars[t]))
    m = m.with_computations(tuple(comps))
    parts: dict[str, tuple[str, ...]] = {}  # expanded training/grad op -> its three values

    def rule(g: Graph, names: Names, ins: Instruction):
        if ins.opcode == Op.GET_TUPLE_ELEMENT and ins.operands[0] in parts:
            return parts[ins.operands[0]][ins.attr("index")]
        if ins.opcode not in _BATCH_NORM:
            return None
        x = g.get(ins.operands[0]).array_shape
        if x.dtype.is_narrow_float:
            return _in_wide(g, names, ins, expand, parts)
        return expand(names, ins, x)

    def expand(names: Names, ins: Instruction, x: ArrayShape) -> list[Instruction]:
        out = _Builder(names, ins, x, adders[x.dtype.name])
        if ins.opcode == Op.BATCH_NORM_INFERENCE:
            return out.inference()
        new = out.training() if ins.opcode == Op.BATCH_NORM_TRAINING else out.grad()
        parts[ins.name] = new[-1].operands
        return new

    return sweep(m, rule)


def _wide(dt: DType) -> DType:
    """The type XLA:CPU computes a batch-norm op of `dt` in."""
    if not dt.is_narrow_float:
        return dt
    return DTYPES["f32" if dt.name == "f8e8m0fnu" else "f16"]


def _in_wide(g: Graph, names: Names, ins: Instruction, expand, parts: dict) -> list[Instruction]:
    """A narrow float batch-norm op as the same op in the wide type between converts."""
    x = g.get(ins.operands[0]).array_shape
    wide = _wide(x.dtype)
    out: list[Instruction] = []
    operands = []
    for k, o in enumerate(ins.operands):
        a = g.get(o).array_shape
        out.append(op(names.fresh(f"{ins.name}.in{k}"), "convert", a.with_dims(a.dims, wide).with_layout(None),
                      (o,), ins))
        operands.append(out[-1].name)
    leaves = ins.shape.elements if isinstance(ins.shape, TupleShape) else (ins.shape,)
    wide_leaves = tuple(s.with_dims(s.dims, wide) for s in leaves)
    shape = TupleShape(wide_leaves) if isinstance(ins.shape, TupleShape) else wide_leaves[0]
    inner = replace(ins, name=names.fresh(f"{ins.name}.{wide.name}"), shape=shape, operands=tuple(operands))
    out += expand(names, inner, x.with_dims(x.dims, wide))
    if not isinstance(ins.shape, TupleShape):
        return out + [op(ins.name, "convert", ins.shape, (inner.name,), ins)]
    results = []
    for k, (s, v) in enumerate(zip(leaves, parts.pop(inner.name))):
        out.append(op(names.fresh(f"{ins.name}.out{k}"), "convert", s, (v,), ins))
        results.append(out[-1].name)
    parts[ins.name] = tuple(results)
    return out + [op(ins.name, "tuple", ins.shape, tuple(results), ins)]


def _fresh(taken: set[str], base: str) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}.{k}", k + 1
    taken.add(name)
    return name


def _add_computation(name: str, scalar: ArrayShape) -> Computation:
    a = Instruction(f"{name}.lhs", "parameter", scalar, parameter_number=0)
    b = Instruction(f"{name}.rhs", "parameter", scalar, parameter_number=1)
    s = Instruction(f"{name}.sum", "add", scalar, (a.name, b.name))
    return Computation(name, (a, b, s), s.name)


class _Builder:
    """The instructions of one expansion, named after the batch-norm op they replace."""

    def __init__(self, names: Names, bn: Instruction, x: ArrayShape, adder: str):
        self.names, self.bn, self.x, self.adder = names, bn, x, adder
        self.f = feature_index(bn, x.rank)
        self.feat = ArrayShape(x.dtype, (x.dims[self.f],))
        self.out: list[Instruction] = []

    def _add(self, ins: Instruction) -> str:
        self.out.append(ins)
        return ins.name

    def _name(self, base: str) -> str:
        return self.names.fresh(f"{self.bn.name}.{base}")

    def binary(self, opcode: str, a: str, b: str, shape: ArrayShape, base: str) -> str:
        return self._add(op(self._name(base), opcode, shape, (a, b), self.bn))

    def rsqrt(self, a: str, shape: ArrayShape) -> str:
        return self._add(op(self._name("rsqrt"), "rsqrt", shape, (a,), self.bn))

    def scalar(self, value, base: str) -> str:
        shape = self.x.with_dims(())
        return self._add(constant(self._name(base), shape, np.array(value, dtype=shape.dtype.numpy), self.bn))

    def splat(self, scalar: str, shape: ArrayShape) -> str:
        return self._add(broadcast(self._name("bcast"), shape, scalar, (), self.bn))

    def feature(self, v: str) -> str:
        """A feature vector broadcast along the operand."""
        return self._add(broadcast(self._name("bcast"), self.x.with_layout(None), v, (self.f,), self.bn))

    def reduce(self, v: str, zero: str, base: str) -> str:
        dims = tuple(d for d in range(self.x.rank) if d != self.f)
        return self._add(op(self._name(base), "reduce", self.feat, (v, zero), self.bn,
                            (("dimensions", dims), ("to_apply", self.adder))))

    def count(self) -> str:
        """The elements per feature, as the constant XLA folds its dimension sizes into."""
        n = int(np.prod([d for k, d in enumerate(self.x.dims) if k != self.f], dtype=np.int64))
        return self.scalar(np.int32(n), "count")

    def mean(self, count: str, v: str, shape: ArrayShape) -> str:
        return self.binary("divide", v, self.splat(count, shape), shape, "mean")

    def epsilon(self) -> str:
        return self.scalar(np.float32(epsilon(self.bn)), "epsilon")

    def finish(self, values: tuple[str, ...]) -> list[Instruction]:
        shape = self.bn.shape
        self.out.append(op(self.bn.name, "tuple", shape, values, self.bn))
        return self.out

    def inference(self) -> list[Instruction]:
        x, scale, offset, mean, var = self.bn.operands
        eps = self.splat(self.epsilon(), self.feat)
        true_scale = self.binary("multiply", scale, self.rsqrt(self.binary("add", var, eps, self.feat, "var_eps"),
                                                                self.feat), self.feat, "true_scale")
        true_shift = self.binary("subtract", offset, self.binary("multiply", mean, true_scale, self.feat, "mean_scale"),
                                 self.feat, "true_shift")
        xs = self.x.with_layout(None)
        scaled = self.binary("multiply", x, self.feature(true_scale), xs, "scaled")
        self.out.append(op(self.bn.name, "add", xs, (scaled, self.feature(true_shift)), self.bn))
        return self.out

    def training(self) -> list[Instruction]:
        x, scale, offset = self.bn.operands
        xs = self.x.with_layout(None)
        zero = self.scalar(0, "zero")
        eps = self.splat(self.epsilon(), xs)
        count = self.count()
        scale_b, offset_b = self.feature(scale), self.feature(offset)
        squared = self.binary("multiply", x, x, xs, "squared")
        total = self.reduce(x, zero, "sum")
        squared_total = self.reduce(squared, zero, "squared_sum")
        mean = self.mean(count, total, self.feat)
        mean_b = self.feature(mean)
        square_mean = self.mean(count, squared_total, self.feat)
        mean_square = self.binary("multiply", mean, mean, self.feat, "mean_square")
        var = self.binary("subtract", square_mean, mean_square, self.feat, "var")
        var_eps = self.binary("add", self.feature(var), eps, xs, "var_eps")
        rsq = self.rsqrt(var_eps, xs)
        centered = self.binary("subtract", x, mean_b, xs, "centered")
        normalized = self.binary("multiply", centered, rsq, xs, "normalized")
        scaled = self.binary("multiply", normalized, scale_b, xs, "scaled")
        shifted = self.binary("add", scaled, offset_b, xs, "shifted")
        return self.finish((shifted, mean, var))

    def grad(self) -> list[Instruction]:
        x, scale, mean, var, dy = self.bn.operands
        xs = self.x.with_layout(None)
        count = self.count()
        zero = self.scalar(0, "zero")
        eps = self.epsilon()
        eps_x, eps_f = self.splat(eps, xs), self.splat(eps, self.feat)
        scale_b, var_b = self.feature(scale), self.feature(var)
        mean_b = self.feature(mean)
        rsq_b = self.rsqrt(self.binary("add", var_b, eps_x, xs, "var_eps"), xs)
        rsq = self.rsqrt(self.binary("add", var, eps_f, self.feat, "var_eps"), self.feat)
        centered = self.binary("subtract", x, mean_b, xs, "centered")
        dy_centered = self.binary("multiply", dy, centered, xs, "dy_centered")
        sum_dy_centered = self.reduce(dy_centered, zero, "sum_dy_centered")
        grad_offset = self.reduce(dy, zero, "grad_offset")
        grad_scale = self.binary("multiply", sum_dy_centered, rsq, self.feat, "grad_scale")
        i2 = self.feature(grad_offset)
        i3 = self.feature(sum_dy_centered)
        i4 = self.binary("multiply", i3, centered, xs, "i4")
        i5 = self.binary("divide", i4, self.binary("add", var_b, eps_x, xs, "var_eps"), xs, "i5")
        scale_rsq = self.binary("multiply", scale_b, rsq_b, xs, "scale_rsq")
        scale_rsq = self.mean(count, scale_rsq, xs)
        i1 = self.binary("multiply", dy, self.splat(count, xs), xs, "i1")
        i6 = self.binary("subtract", self.binary("subtract", i1, i2, xs, "i1_i2"), i5, xs, "i6")
        grad_x = self.binary("multiply", scale_rsq, i6, xs, "grad_x")
        return self.finish((grad_x, grad_scale, grad_offset))
