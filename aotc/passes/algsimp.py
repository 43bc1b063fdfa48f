"""XLA:CPU's algebraic rewrites that change result bits, so pre-optimization HLO
compiled by aotc gives the bits XLA gives. Each rule mirrors one rewrite of
XLA's AlgebraicSimplifier (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc,
enabled by default on CPU, fast-math off) and was checked against jaxlib 0.10.2.

Rewrites that never change bits (A - C => A + (-C), A * 1 => A, ...) are left
out: aotc computes the same bits without them. Per divide, the rules are tried
in XLA's order and the first match wins.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..hlo.ir import Instruction, Module, Window
from .rewrite import Graph, Names, broadcast, constant, is_constant, op, scalar_like, sweep
from ..hlo.opcodes import Op
from ..ops.window import ConvDims

# XLA:CPU computes bf16/f16 elementwise ops in f32 before these rewrites run (checked: x / 3 in
# bf16 gives the bits of the f32 division rounded once), so only f32/f64 take them
_FLOAT = ("f32", "f64")
_COMPLEX = ("c64", "c128")


def xla_algebraic_rewrites(m: Module) -> tuple[Module, bool]:
    return sweep(m, _rule)


def _rule(g: Graph, names: Names, ins: Instruction):
    if ins.shape.is_tuple or ins.shape.is_token:
        return None
    kind = ins.array_shape.dtype.name
    rules = RULES.get(ins.opcode)
    if rules is None or kind not in _FLOAT + _COMPLEX:
        return None
    for rule in rules:
        res = rule(g, names, ins)
        if res is not None:
            return res
    return None


def _is(g: Graph, name: str, opcode: str) -> Instruction | None:
    i = g.get(name)
    return i if i.opcode == opcode else None


def _scalar_constant_value(g: Graph, name: str):
    """The value of a constant whose elements are all equal, or of a broadcast of one."""
    i = g.get(name)
    if i.opcode == Op.BROADCAST:
        i = g.get(i.operands[0])
    if not is_constant(i) or i.literal.values.size == 0:
        return None
    v = i.literal.values.reshape(-1)
    first = v[0]
    return first if np.all(v.view(np.uint8).reshape(v.size, -1) == v[:1].view(np.uint8).reshape(1, -1)) else None


def _constant_scalar_under_broadcast(g: Graph, name: str) -> Instruction | None:
    i = _is(g, name, "broadcast")
    if i is None:
        return None
    c = g.get(i.operands[0])
    return c if is_constant(c) and c.array_shape.rank == 0 else None


# ---------------------------------------------------------------- divide


def _div_of_pow(g, names, ins):
    """A / pow(B, C) => A * pow(B, -C)."""
    a, b = ins.operands
    p = _is(g, b, "power")
    if p is None:
        return None
    neg = op(names.fresh(p.name + ".neg"), "negate", g.get(p.operands[1]).shape, (p.operands[1],), ins)
    pw = op(names.fresh(p.name + ".inv"), "power", g.get(p.operands[0]).shape, (p.operands[0], neg.name), ins)
    return [neg, pw, op(ins.name, "multiply", ins.shape, (a, pw.name), ins)]


def _div_of_root(which: str, inverse: str):
    """A / sqrt(B) => A * rsqrt(B) and A / rsqrt(B) => A * sqrt(B), when the root has one user."""
    def rule(g, names, ins):
        a, b = ins.operands
        r = _is(g, b, which)
        if r is None or g.user_count(b) != 1:
            return None
        inv = op(names.fresh(r.name + "." + inverse), inverse, ins.shape, (r.operands[0],), ins)
        return [inv, op(ins.name, "multiply", ins.shape, (a, inv.name), ins)]
    return rule


def _div_by_constant(g, names, ins):
    """A / C or A / broadcast(C), A not a constant => A * (1 / C), 1/C computed in the type."""
    a, b = ins.operands
    if g.get(a).opcode == Op.CONSTANT or ins.array_shape.dtype.name not in _FLOAT:
        return None
    bi = g.get(b)
    c = g.get(bi.operands[0]) if bi.opcode == Op.BROADCAST else bi
    if not is_constant(c):
        return None
    dt = c.array_shape.dtype.numpy
    with np.errstate(all="ignore"):
        inv_values = (np.array(1, dtype=dt) / c.literal.values).astype(dt)
    inv = constant(names.fresh(c.name + ".inv"), c.array_shape, inv_values, ins)
    out = [inv]
    if bi is not c:
        out.append(broadcast(names.fresh(bi.name + ".inv"), bi.array_shape, inv.name, bi.attr("dimensions", ()), ins))
    return out + [op(ins.name, "multiply", ins.shape, (a, out[-1].name), ins)]


def _div_by_broadcast(g, names, ins):
    """On CPU: A / broadcast(B), B with one user => A * broadcast(1 / B)."""
    a, b = ins.operands
    bi = _is(g, b, "broadcast")
    if bi is None or ins.array_shape.dtype.name in _COMPLEX or g.user_count(bi.operands[0]) != 1:
        return None
    inner = g.get(bi.operands[0])
    one = scalar_like(names, inner, 1, inner.name + ".one")
    recip = op(names.fresh(inner.name + ".recip"), "divide", inner.shape, (one[-1].name, inner.name), ins)
    bc = broadcast(names.fresh(bi.name + ".recip"), bi.array_shape, recip.name, bi.attr("dimensions", ()), ins)
    return one + [recip, bc, op(ins.name, "multiply", ins.shape, (a, bc.name), ins)]


def _div_of_divs(g, names, ins):
    """(A / B) / (C / D) => (A * D) / (B * C)."""
    l, r = (_is(g, o, "divide") for o in ins.operands)
    if l is None or r is None:
        return None
    (a, b), (c, d) = l.operands, r.operands
    ad = op(names.fresh(ins.name + ".num"), "multiply", ins.shape, (a, d), ins)
    bc = op(names.fresh(ins.name + ".den"), "multiply", ins.shape, (b, c), ins)
    return [ad, bc, op(ins.name, "divide", ins.shape, (ad.name, bc.name), ins)]


def _div_of_div(g, names, ins):
    """(A / B) / C => A / (B * C)."""
    l = _is(g, ins.operands[0], "divide")
    if l is None:
        return None
    a, b = l.operands
    bc = op(names.fresh(ins.name + ".den"), "multiply", ins.shape, (b, ins.operands[1]), ins)
    return [bc, op(ins.name, "divide", ins.shape, (a, bc.name), ins)]


def _div_by_div(g, names, ins):
    """A / (B / C) => (A * C) / B."""
    r = _is(g, ins.operands[1], "divide")
    if r is None:
        return None
    b, c = r.operands
    ac = op(names.fresh(ins.name + ".num"), "multiply", ins.shape, (ins.operands[0], c), ins)
    return [ac, op(ins.name, "divide", ins.shape, (ac.name, b), ins)]


def _div_pred_by_scalar(g, names, ins):
    """convert(pred X) / broadcast(scalar Y) => broadcast(1 / Y) * convert(X)."""
    a, b = ins.operands
    cv, bi = _is(g, a, "convert"), _is(g, b, "broadcast")
    if cv is None or bi is None or g.get(cv.operands[0]).array_shape.dtype.name != "pred":
        return None
    y = g.get(bi.operands[0])
    if y.array_shape.rank != 0:
        return None
    one = scalar_like(names, y, 1, y.name + ".one")
    recip = op(names.fresh(y.name + ".recip"), "divide", y.shape, (one[-1].name, y.name), ins)
    bc = broadcast(names.fresh(bi.name + ".recip"), bi.array_shape, recip.name, (), ins)
    return one + [recip, bc, op(ins.name, "multiply", ins.shape, (bc.name, a), ins)]


# ---------------------------------------------------------------- power, add, multiply, log


def _power_by_small_integer(g, names, ins):
    """pow(A, 2) => A*A; pow(A, 3) => A*(A*A); pow(A, -1) => 1/A (constant exponents)."""
    a, e = ins.operands
    v = _scalar_constant_value(g, e)
    if v is None or ins.array_shape.dtype.name not in _FLOAT:
        return None
    v = float(v)
    if v == 2:
        return [op(ins.name, "multiply", ins.shape, (a, a), ins)]
    if v == 3:
        sq = op(names.fresh(ins.name + ".sq"), "multiply", ins.shape, (a, a), ins)
        return [sq, op(ins.name, "multiply", ins.shape, (a, sq.name), ins)]
    if v == -1:
        one = scalar_like(names, ins, 1, ins.name + ".one")
        return one + [op(ins.name, "divide", ins.shape, (one[-1].name, a), ins)]
    return None


def _reassociate(opcode: str, broadcast_needs_nonconstant: bool):
    """(A op C1) op C2 => A op (C1 op C2), for constants or broadcasts of scalar constants;
    for add, a constant left operand is first moved to the right (Const + A => A + Const)."""
    def rule(g, names, ins):
        lhs, rhs = ins.operands
        if opcode == Op.ADD and g.get(lhs).opcode == Op.CONSTANT and g.get(rhs).opcode != Op.CONSTANT:
            return [op(ins.name, opcode, ins.shape, (rhs, lhs), ins)]
        inner = _is(g, lhs, opcode)
        if inner is None:
            return None
        a, c1 = inner.operands
        plain = g.get(a).opcode != Op.CONSTANT and is_constant(g.get(c1)) and is_constant(g.get(rhs))
        s1, s2 = _constant_scalar_under_broadcast(g, c1), _constant_scalar_under_broadcast(g, rhs)
        bcast = s1 is not None and s2 is not None and (not broadcast_needs_nonconstant or g.get(a).opcode != Op.CONSTANT)
        if plain:
            k = op(names.fresh(ins.name + ".consts"), opcode, g.get(c1).shape, (c1, rhs), ins)
            return [k, op(ins.name, opcode, ins.shape, (a, k.name), ins)]
        if bcast:
            k = op(names.fresh(ins.name + ".consts"), opcode, s1.shape, (s1.name, s2.name), ins)
            kb = broadcast(names.fresh(ins.name + ".consts.bcast"), ins.array_shape, k.name, (), ins)
            return [k, kb, op(ins.name, opcode, ins.shape, (a, kb.name), ins)]
        return None
    return rule


def _log_of_exp(g, names, ins):
    """log(exp(A)) => A."""
    e = _is(g, ins.operands[0], "exponential")
    return e.operands[0] if e is not None else None


# ---------------------------------------------------------------- convolution


def _conv_of_pad(g, names, ins):
    """conv(pad(A, 0), W) => conv(A, W) with the pad's edges added to the window's padding
    (XLA's FoldConvInputPad): the batch and feature dimensions unpadded, no interior padding
    and no lhs dilation. The zeros the pad wrote then never enter a sum, as in XLA."""
    p = _is(g, ins.operands[0], "pad")
    win = ins.attr("window")
    if p is None or win is None or p.attr("padding") is None:
        return None
    zero = _scalar_constant_value(g, p.operands[1])
    if zero is None or zero != 0:
        return None
    c = ConvDims(ins, p.array_shape.rank, g.get(ins.operands[1]).array_shape.rank)
    pads = p.attr("padding")
    if any(pads[d].lo or pads[d].hi or pads[d].interior for d in (c.lhs_b, c.lhs_f)):
        return None
    dims = []
    for k, w in enumerate(win.dims):
        pd = pads[c.lhs_s[k]]
        if pd.interior or pd.lo < 0 or pd.hi < 0 or w.lhs_dilate != 1:
            return None
        dims.append(replace(w, pad_lo=w.pad_lo + pd.lo, pad_hi=w.pad_hi + pd.hi))
    attrs = tuple((k, Window(tuple(dims)) if k == "window" else v) for k, v in ins.attrs)
    return [op(ins.name, "convolution", ins.shape, (p.operands[0], ins.operands[1]), ins, attrs)]


RULES = {
    "divide": (_div_of_pow, _div_of_root(Op.SQRT, Op.RSQRT), _div_of_root(Op.RSQRT, Op.SQRT), _div_by_constant,
               _div_by_broadcast, _div_of_divs, _div_of_div, _div_by_div, _div_pred_by_scalar),
    "power": (_power_by_small_integer,),
    "add": (_reassociate("add", True),),
    "multiply": (_reassociate("multiply", False),),
    "log": (_log_of_exp,),
    "convolution": (_conv_of_pad,),
}
