"""Dot (dot_general): shape rule and emission.

f32/f64 dots whose free and contracting dimensions each collapse to one
stride become a batch loop over the runtime's packed GEMM (`aotc_sgemm` /
`aotc_dgemm`) reading the operands in place, transposed or not. Every other
dot (integer, half types, exotic dimension orders) is a plain loop nest that
accumulates in the compute type: correct first, fast later.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, row_major_strides
from .elementwise import _arr, convert_expr, suffix
from .registry import OpRule, ShapeError, register


def _dnums(instr: Instruction):
    return (tuple(instr.attr("lhs_batch_dims", ())), tuple(instr.attr("lhs_contracting_dims", ())),
            tuple(instr.attr("rhs_batch_dims", ())), tuple(instr.attr("rhs_contracting_dims", ())))


def _free(rank: int, *groups: tuple[int, ...]) -> tuple[int, ...]:
    used = {d for g in groups for d in g}
    return tuple(d for d in range(rank) if d not in used)


def _dot_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    lhs, rhs = _arr(shapes[0], "lhs"), _arr(shapes[1], "rhs")
    lb, lc, rb, rc = _dnums(instr)
    for name, dims, a in (("lhs_batch_dims", lb, lhs), ("lhs_contracting_dims", lc, lhs),
                          ("rhs_batch_dims", rb, rhs), ("rhs_contracting_dims", rc, rhs)):
        for d in dims:
            if not 0 <= d < a.rank:
                raise ShapeError(f"{name} value {d} is out of range for rank {a.rank}")
    if len(set(lb + lc)) != len(lb + lc) or len(set(rb + rc)) != len(rb + rc):
        raise ShapeError("a dot dimension is both batch and contracting, or repeated")
    if len(lb) != len(rb) or any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lb, rb)):
        raise ShapeError(f"dot batch dimensions do not match: {lhs.text(False)} vs {rhs.text(False)}")
    if len(lc) != len(rc) or any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lc, rc)):
        raise ShapeError(f"dot contracting dimensions do not match: {lhs.text(False)} vs {rhs.text(False)}")
    dims = ([lhs.dims[d] for d in lb] + [lhs.dims[d] for d in _free(lhs.rank, lb, lc)]
            + [rhs.dims[d] for d in _free(rhs.rank, rb, rc)])
    return ArrayShape(instr.array_shape.dtype, tuple(dims))


@dataclass(frozen=True, slots=True)
class GemmPlan:
    batch: tuple[int, ...]  # batch dim sizes
    lhs_batch_strides: tuple[int, ...]
    rhs_batch_strides: tuple[int, ...]
    m: int
    n: int
    k: int
    a_rs: int
    a_cs: int
    b_rs: int
    b_cs: int


def _collapse(dims: tuple[int, ...], strides: tuple[int, ...], group: tuple[int, ...]) -> tuple[int, int] | None:
    """(size, stride) of `group` viewed as one dimension, or None if it is not one stride."""
    live = [d for d in group if dims[d] != 1]
    size = prod(dims[d] for d in group)
    if not live:
        return size, 0
    for a, b in zip(live, live[1:]):
        if strides[a] != strides[b] * dims[b]:
            return None
    return size, strides[live[-1]]


_F32_LIKE = ("f32", "bf16", "f16")


def gemm_type(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> str | None:
    """"f64" or "f32" when the dot runs on that GEMM (half operands and results are
    widened to f32 and the result rounded once, as XLA:CPU computes them), else None."""
    dt = instr.array_shape.dtype.name
    if dt == "f64" and lhs.dtype.name == rhs.dtype.name == "f64":
        return "f64"
    if dt in _F32_LIKE and lhs.dtype.name in _F32_LIKE and rhs.dtype.name in _F32_LIKE:
        return "f32"
    return None


def _widened(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> bool:
    return any(t.dtype.name in ("bf16", "f16") for t in (instr.array_shape, lhs, rhs))


def gemm_plan(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> GemmPlan | None:
    """How to run this dot on the packed GEMM, or None if it needs the loop nest."""
    if gemm_type(instr, lhs, rhs) is None:
        return None
    lb, lc, rb, rc = _dnums(instr)
    ls, rs = row_major_strides(lhs.dims), row_major_strides(rhs.dims)
    m = _collapse(lhs.dims, ls, _free(lhs.rank, lb, lc))
    ka = _collapse(lhs.dims, ls, lc)
    kb = _collapse(rhs.dims, rs, rc)
    n = _collapse(rhs.dims, rs, _free(rhs.rank, rb, rc))
    if m is None or ka is None or kb is None or n is None:
        return None
    return GemmPlan(tuple(lhs.dims[d] for d in lb), tuple(ls[d] for d in lb), tuple(rs[d] for d in rb),
                    m[0], n[0], ka[0], m[1], ka[1], kb[1], n[1])


def _up64(n: int) -> int:
    return (n + 63) // 64 * 64


def _widen_layout(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> tuple[int, int, int, int]:
    """Byte offsets in scratch of the f32 copies of lhs, rhs and the result (halves only),
    and where the GEMM's own scratch starts."""
    if not _widened(instr, lhs, rhs):
        return 0, 0, 0, 0
    a = 0
    b = a + _up64(lhs.size * 4)
    c = b + _up64(rhs.size * 4)
    g = c + _up64(instr.array_shape.size * 4)
    return a, b, c, g


# GEMMs with at least this many multiply-adds are split into GEMM_PARTS slices for
# the thread pool (each slice with its own packing scratch)
THREADED_MACS = 1 << 20
GEMM_PARTS = 4


def _parts(p: GemmPlan) -> int:
    return GEMM_PARTS if p.m * p.n * p.k >= THREADED_MACS else 1


def _gemm_bytes(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape, p: GemmPlan) -> int:
    """Packing scratch of one slice."""
    from ..runtime_c import gemm_scratch_bytes
    es = 8 if gemm_type(instr, lhs, rhs) == "f64" else 4
    return gemm_scratch_bytes(p.m, p.n, p.k, es)


def _dot_scratch(instr: Instruction, shapes: list[Shape]) -> int:
    plan = gemm_plan(instr, shapes[0], shapes[1])
    if plan is None:
        return 0
    return _widen_layout(instr, shapes[0], shapes[1])[3] + _parts(plan) * _gemm_bytes(instr, shapes[0], shapes[1], plan)


def _dot_kernel(kb, instr: Instruction, outs) -> None:
    (out,) = outs
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs = lhs_i.array_shape, rhs_i.array_shape
    lbuf, rbuf = kb.buffers[lhs_i.name].cname, kb.buffers[rhs_i.name].cname
    plan = gemm_plan(instr, lhs, rhs)
    if plan is None:
        _emit_loops(kb, instr, lhs, rhs, out)
        return
    if not _widened(instr, lhs, rhs):
        _emit_gemm(kb, instr, plan, lbuf, rbuf, out.cname, kb.scratch)
        return
    # widen half operands to f32 copies in scratch, multiply in f32, round the result once
    from ..lower.elemental import load_expr, store_expr
    a, b, c, g = _widen_layout(instr, lhs, rhs)
    def pointer(ctype: str, init: str) -> str:
        name = kb.fresh("wide")
        kb.line(f"{ctype}* const {name} = {init};")
        return name

    w = pointer("unsigned char", f"(unsigned char*){kb.scratch}")
    srcs = []
    for name, shape, off in ((lbuf, lhs, a), (rbuf, rhs, b)):
        if shape.dtype.name == "f32":
            srcs.append(name)
            continue
        dst = pointer("float", f"(float*)(void*)({w} + {off})")
        kb.loop("i", shape.size)
        kb.line(f"{dst}[i] = {load_expr(shape.dtype, f'{name}[i]')};")
        kb.close()
        srcs.append(dst)
    odt = instr.array_shape.dtype
    res = out.cname if odt.name == "f32" else pointer("float", f"(float*)(void*)({w} + {c})")
    _emit_gemm(kb, instr, plan, srcs[0], srcs[1], res, f"{w} + {g}")
    if odt.name != "f32":
        kb.loop("i", instr.array_shape.size)
        kb.line(f"{out.cname}[i] = {store_expr(odt, f'{res}[i]')};")
        kb.close()


def _emit_gemm(kb, instr, p: GemmPlan, lbuf: str, rbuf: str, obuf: str, scratch: str) -> None:
    fn = "aotc_dgemm" if gemm_type(instr, *(kb.producers[o].array_shape for o in instr.operands)) == "f64" \
        else "aotc_sgemm"
    args = f"{p.m}, {p.n}, {p.k}, {{a}}, {p.a_rs}, {p.a_cs}, {{b}}, {p.b_rs}, {p.b_cs}, {{c}}, {p.n}, {scratch}"
    parts = _parts(p)
    if parts > 1:  # sliced over the pool when there is one; the serial call otherwise
        par = kb.pool()
        stride = _gemm_bytes(instr, *(kb.producers[o].array_shape for o in instr.operands), p)
        fn = f"{fn}_threads"
        args = f"{par} ? {par}->fn : 0, {par} ? {par}->user : 0, {parts}, {stride}u, " + args
    nb = prod(p.batch)
    if nb == 1:
        kb.line(fn + "(" + args.format(a=lbuf, b=rbuf, c=obuf) + ");")
        return
    kb.loop("b", nb)
    loff, roff = [], []
    rem = "b"
    for d in range(len(p.batch) - 1, -1, -1):
        idx = kb.let("int64_t", f"{rem} % {p.batch[d]}", "bi") if d > 0 else rem
        if d > 0:
            rem = kb.let("int64_t", f"{rem} / {p.batch[d]}", "bq")
        loff.append(f"{idx} * {p.lhs_batch_strides[d]}")
        roff.append(f"{idx} * {p.rhs_batch_strides[d]}")
    a = f"{lbuf} + " + " + ".join(loff)
    b = f"{rbuf} + " + " + ".join(roff)
    kb.line(fn + "(" + args.format(a=a, b=b, c=f"{obuf} + b * {p.m * p.n}") + ");")
    kb.close()


def _emit_loops(kb, instr, lhs: ArrayShape, rhs: ArrayShape, out) -> None:
    from ..lower.elemental import Index, compute_ctype, store_expr, c_literal
    lb, lc, rb, rc = _dnums(instr)
    odt = instr.array_shape.dtype
    acc_t = compute_ctype(odt)
    lf, rf = _free(lhs.rank, lb, lc), _free(rhs.rank, rb, rc)
    o_vars = []
    for d, n in enumerate(instr.array_shape.dims):
        kb.loop(f"o{d}", n)
        o_vars.append(f"o{d}")
    nb = len(lb)
    acc = kb.fresh("acc")
    kb.line(f"{acc_t} {acc} = {c_literal(0, odt)};")
    k_vars = []
    for j, d in enumerate(lc):
        kb.loop(f"k{j}", lhs.dims[d])
        k_vars.append(f"k{j}")
    li, ri = [""] * lhs.rank, [""] * rhs.rank
    for j, (a, b) in enumerate(zip(lb, rb)):
        li[a], ri[b] = o_vars[j], o_vars[j]
    for j, d in enumerate(lf):
        li[d] = o_vars[nb + j]
    for j, d in enumerate(rf):
        ri[d] = o_vars[nb + len(lf) + j]
    for j, (a, b) in enumerate(zip(lc, rc)):
        li[a], ri[b] = k_vars[j], k_vars[j]
    x = kb.operand(instr, 0, Index(lhs.dims, tuple(li)))
    y = kb.operand(instr, 1, Index(rhs.dims, tuple(ri)))
    x = convert_expr(x, lhs.dtype, odt) if lhs.dtype != odt and lhs.dtype.kind != "float" else x
    y = convert_expr(y, rhs.dtype, odt) if rhs.dtype != odt and rhs.dtype.kind != "float" else y
    if odt.kind == "float":
        kb.line(f"{acc} += ({acc_t}){x} * ({acc_t}){y};")
    elif odt.kind == "pred":
        kb.line(f"{acc} = (uint8_t)({acc} | ({x} & {y}));")
    else:
        s = suffix(odt)
        kb.line(f"{acc} = aotc_add_{s}({acc}, aotc_mul_{s}({x}, {y}));")
    for _ in lc:
        kb.close()
    lin = kb.linear(Index(instr.array_shape.dims, tuple(o_vars)))
    val = acc if odt.name not in ("bf16", "f16") else f"{acc}"
    kb.line(f"{out.cname}[{lin}] = {store_expr(odt, val)};")
    for _ in o_vars:
        kb.close()


register(OpRule("dot", shape=_dot_shape, kernel=_dot_kernel, scratch_bytes=_dot_scratch, buffered_operands=True))
