"""Convolution as GEMM: rows of output pixels times a (window position, input feature) x
output feature matrix, through the runtime's packed sgemm/dgemm.

Used for ungrouped float convolutions whose output features are innermost;
`gemm_conv_plan` decides, convolution.py calls. The lhs is copied into an im2col
matrix by blocks of rows: each row is zeroed when its window reaches padding or
dilation holes, then the window indices that land on input (window.py spans) are
copied, so no load depends on a guard.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..hlo.ir import Instruction, Window
from ..hlo.shape import ArrayShape, row_major_strides
from .elementwise import convert_expr
from .window import ConvDims, conv_acc_type, joined, open_span, term, window_span

@dataclass(frozen=True, slots=True)
class GemmConv:
    elem: str  # "float" or "double"
    P: int  # output pixels (rows)
    K: int  # window positions x input features
    O: int  # output features
    rows: int  # rows per GEMM call
    direct_a: bool  # the lhs is already the P x K matrix
    direct_b: bool  # the rhs is already the K x O matrix
    direct_c: bool  # the result is the P x O matrix, in the GEMM's type
    off_b: int  # scratch byte offsets of the packed operands
    off_a: int
    off_c: int
    scratch_bytes: int


_GEMM_ROWS = 256


def _align(n: int) -> int:
    return (n + 63) // 64 * 64


def gemm_conv_plan(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> GemmConv | None:
    """How to run this convolution as GEMM calls, or None for the direct loop nest (groups,
    integer types, tiny matrices, an output whose features are not innermost)."""
    from ..runtime_c import gemm_scratch_bytes
    out = instr.array_shape
    if instr.attr("feature_group_count", 1) != 1 or instr.attr("batch_group_count", 1) != 1:
        return None
    if {lhs.dtype.kind, rhs.dtype.kind, out.dtype.kind} != {"float"}:
        return None
    c = ConvDims(instr, lhs.rank, rhs.rank)
    wins = (instr.attr("window") or Window(())).dims
    if c.out_f != out.rank - 1 or 0 in lhs.dims or 0 in rhs.dims or 0 in out.dims:
        return None
    elem = conv_acc_type(instr, lhs, rhs)
    es = 8 if elem == "double" else 4
    O, C = rhs.dims[c.rhs_o], lhs.dims[c.lhs_f]
    K = C * prod(w.size for w in wins)
    P = out.size // O
    if K * O < 64 or O < 4:
        return None
    same = (lambda dt: (dt.name == "f64") == (elem == "double") and dt.name in ("f32", "f64"))
    labels = instr.attr("dim_labels")
    unit = all(w.size == 1 and w.stride == 1 and w.pad_lo == 0 and w.pad_hi == 0 and w.lhs_dilate == 1
               for w in wins)
    direct_a = (unit and same(lhs.dtype) and c.lhs_f == lhs.rank - 1
                and labels.lhs.replace("f", "") == labels.out.replace("f", ""))
    direct_b = (same(rhs.dtype) and not any(w.reversal for w in wins)
                and labels.rhs == "".join(str(k) for k in range(c.spatial)) + "io")
    direct_c = same(out.dtype)
    rows = P if direct_a else min(P, _GEMM_ROWS)
    off = gemm_scratch_bytes(rows, O, K, es)
    off_b = off
    off += 0 if direct_b else _align(K * O * es)
    off_a = off
    off += 0 if direct_a else _align(rows * K * es)
    off_c = off
    off += 0 if direct_c else _align(rows * O * es)
    return GemmConv(elem, P, K, O, rows, direct_a, direct_b, direct_c, off_b, off_a, off_c, off)


def emit_gemm_conv(kb, instr: Instruction, plan: GemmConv, out) -> None:
    from ..hlo.dtypes import DTYPES
    from .legacy_c import load_expr, store_expr
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs, res = lhs_i.array_shape, rhs_i.array_shape, instr.array_shape
    c = ConvDims(instr, lhs.rank, rhs.rank)
    wins = (instr.attr("window") or Window(())).dims
    ls, rs = row_major_strides(lhs.dims), row_major_strides(rhs.dims)
    lbuf, rbuf = kb.buffers[lhs_i.name].cname, kb.buffers[rhs_i.name].cname
    T, K, O, C = plan.elem, plan.K, plan.O, lhs.dims[c.lhs_f]
    gemm = "aotc_dgemm" if T == "double" else "aotc_sgemm"
    zero = "0.0" if T == "double" else "0.0f"

    def cast(v: str, dt) -> str:
        return v if (T == "double") == (dt.name == "f64") else f"({T}){v}"

    def scratch_at(off: int, base: str) -> str:
        name = kb.fresh(base)
        kb.line(f"{T}* const {name} = ({T}*)((unsigned char*){kb.scratch} + {off});")
        return name

    # B: (window position, input feature) x output feature
    if plan.direct_b:
        b = rbuf
    else:
        b = scratch_at(plan.off_b, "wk")
        ks, r_terms = [], []
        for k, wd in enumerate(wins):
            v = kb.fresh(f"k{k}") if wd.size > 1 else "0"
            if wd.size > 1:
                kb.loop(v, wd.size)
            ks.append(v)
            wk = v if not wd.reversal else (f"({wd.size - 1} - {v})" if v != "0" else str(wd.size - 1))
            r_terms.append(term(wk, rs[c.rhs_s[k]]))
        kpos = joined(*(term(v, prod(w.size for w in wins[k + 1:])) for k, v in enumerate(ks)))
        ic, oc = kb.fresh("ic"), kb.fresh("oc")
        kb.loop(ic, C)
        kb.loop(oc, O)
        src = joined(*r_terms, term(ic, rs[c.rhs_i]), term(oc, rs[c.rhs_o]))
        row = joined(f"({kpos}) * {C}" if kpos != "0" else None, ic)
        kb.line(f"{b}[({row}) * {O} + {oc}] = {cast(load_expr(rhs.dtype, f'{rbuf}[{src}]'), rhs.dtype)};")
        kb.close()
        kb.close()
        for v in ks:
            if v != "0":
                kb.close()

    def store_rows(cbuf: str, first: str, count: str) -> None:
        i = kb.fresh("i")
        src = DTYPES["f64" if T == "double" else "f32"]
        dst = DTYPES["f32"] if res.dtype.name in ("bf16", "f16") else res.dtype
        val = convert_expr(f"{cbuf}[{i}]", src, dst)
        kb.line(f"for (int64_t {i} = 0; {i} < ({count}) * {O}; ++{i}) "
                f"{out.cname}[({first}) * {O} + {i}] = {store_expr(res.dtype, val)};")

    if plan.direct_a:
        cdst = out.cname if plan.direct_c else scratch_at(plan.off_c, "cbuf")
        kb.line(f"{gemm}({plan.P}, {O}, {K}, {lbuf}, {K}, 1, {b}, {O}, 1, {cdst}, {O}, {kb.scratch});")
        if not plan.direct_c:
            store_rows(cdst, "0", str(plan.P))
        return

    # im2col by blocks of rows: one row per output pixel, zeros on padding and dilation holes
    a = scratch_at(plan.off_a, "col")
    cbuf = None if plan.direct_c else scratch_at(plan.off_c, "cbuf")
    r, p0 = kb.fresh("r"), kb.fresh("p0")
    kb.line(f"int64_t {r} = 0, {p0} = 0;")
    o_var: dict[int, str] = {}
    closes = 0
    for d, m in enumerate(res.dims):
        if d == c.out_f:
            continue
        v = kb.fresh("b" if d == c.out_b else f"o{c.out_s.index(d)}") if m > 1 else "0"
        if m > 1:
            kb.loop(v, m)
            closes += 1
        o_var[d] = v
    arow = kb.fresh("arow")
    kb.line(f"{T}* const {arow} = {a} + {r} * {K};")
    spans = [window_span(kb, o_var[c.out_s[k]], wd, lhs.dims[c.lhs_s[k]], res.dims[c.out_s[k]], f"k{k}")
             for k, wd in enumerate(wins)]
    partial = "1" if None in spans else " || ".join(f"({s.partial})" for s in spans if s.partial != "0")
    if partial:  # the row reaches padding or holes (for some output pixels): zeros first
        z = kb.fresh("z")
        fill = f"for (int64_t {z} = 0; {z} < {K}; ++{z}) {arow}[{z}] = {zero};"
        kb.line(fill if partial == "1" else f"if ({partial}) {fill}")
    if None not in spans:
        inner, ks, l_terms = 0, [], []
        for k, span in enumerate(spans):
            pos, opened = open_span(kb, span)
            inner += opened
            ks.append(span.w)
            l_terms.append(term(pos, ls[c.lhs_s[k]]))
        kpos = joined(*(term(v, prod(w.size for w in wins[k + 1:])) for k, v in enumerate(ks)))
        col = arow
        if kpos != "0":
            col = kb.fresh("dst")
            kb.line(f"{T}* const {col} = {arow} + ({kpos}) * {C};")
        ic = kb.fresh("ic")
        x_at = joined(term(o_var[c.out_b], ls[c.lhs_b]), *l_terms, term(ic, ls[c.lhs_f]))
        kb.line(f"for (int64_t {ic} = 0; {ic} < {C}; ++{ic}) "
                f"{col}[{ic}] = {cast(load_expr(lhs.dtype, f'{lbuf}[{x_at}]'), lhs.dtype)};")
        for _ in range(inner):
            kb.close()
    kb.line(f"++{r};")
    kb.open(f"if ({r} == {plan.rows} || {p0} + {r} == {plan.P})")
    cdst = f"{out.cname} + {p0} * {O}" if plan.direct_c else cbuf
    kb.line(f"{gemm}({r}, {O}, {K}, {a}, {K}, 1, {b}, {O}, 1, {cdst}, {O}, {kb.scratch});")
    if not plan.direct_c:
        store_rows(cbuf, p0, r)
    kb.line(f"{p0} += {r};")
    kb.line(f"{r} = 0;")
    kb.close()
    for _ in range(closes):
        kb.close()
