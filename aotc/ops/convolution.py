"""Convolution: shape rule, and the direct loop nest for every case the GEMM form
(conv_gemm.py) does not take.

The loop nest handles any `dim_labels`, feature and batch groups, strides, negative
padding, dilations and window reversal; its innermost loop runs over output
features into a row of accumulators (depthwise and grouped cases vectorize). Window
loops run over exactly the indices that land on input (window.py spans). Floats of
every width accumulate in f32 (f64 for f64) and round to the result type once.
"""
from __future__ import annotations

from ..hlo.ir import Instruction, Window
from ..hlo.shape import ArrayShape, Shape, row_major_strides
from .conv_gemm import emit_gemm_conv, gemm_conv_plan
from .elementwise import _arr, convert_expr, suffix
from .registry import OpRule, ShapeError, register
from .window import (ConvDims, check_window, conv_acc_type, interior, joined, open_span, term, window_output_size,
                     window_span)

def _groups(instr: Instruction) -> tuple[int, int]:
    g, bg = instr.attr("feature_group_count", 1), instr.attr("batch_group_count", 1)
    if g < 1 or bg < 1:
        raise ShapeError("feature_group_count and batch_group_count must be positive")
    return g, bg


def _conv_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    lhs, rhs = _arr(shapes[0], "convolution lhs"), _arr(shapes[1], "convolution rhs")
    if lhs.rank != rhs.rank or lhs.rank < 2:
        raise ShapeError(f"convolution operands {lhs.text(False)} and {rhs.text(False)} must have equal rank >= 2")
    c = ConvDims(instr, lhs.rank, rhs.rank)
    wins = check_window(instr.attr("window") or Window(()), c.spatial, "convolution")
    g, bg = _groups(instr)
    B, C = lhs.dims[c.lhs_b], lhs.dims[c.lhs_f]
    I, O = rhs.dims[c.rhs_i], rhs.dims[c.rhs_o]
    if C % g or O % g:
        raise ShapeError(f"feature_group_count={g} does not divide the input ({C}) and output ({O}) features")
    if I * g != C:
        raise ShapeError(f"convolution rhs input features ({I}) times feature_group_count ({g}) must equal "
                         f"the lhs features ({C})")
    if B % bg or O % bg:
        raise ShapeError(f"batch_group_count={bg} does not divide the lhs batch ({B}) and output features ({O})")
    if g > 1 and bg > 1:
        raise ShapeError("feature_group_count and batch_group_count cannot both be greater than 1")
    for k, w in enumerate(wins):
        if w.size != rhs.dims[c.rhs_s[k]]:
            raise ShapeError(f"convolution window size {w.size} in spatial dimension {k} does not match the "
                             f"kernel ({rhs.dims[c.rhs_s[k]]})")
    dims = [0] * lhs.rank
    dims[c.out_b], dims[c.out_f] = B // bg, O
    for k, w in enumerate(wins):
        dims[c.out_s[k]] = window_output_size(lhs.dims[c.lhs_s[k]], w)
    odt = instr.array_shape.dtype
    kinds = {lhs.dtype.kind, rhs.dtype.kind, odt.kind}
    if not (kinds <= {"float"} or kinds <= {"sint", "uint"}):
        raise ShapeError(f"convolution of {lhs.dtype.name} x {rhs.dtype.name} -> {odt.name} is not supported")
    return ArrayShape(odt, tuple(dims))


_STACK_ACC_BYTES = 32768


def _conv_scratch(instr: Instruction, shapes: list[Shape]) -> int:
    lhs, rhs = shapes[0], shapes[1]
    plan = gemm_conv_plan(instr, lhs, rhs)
    if plan is not None:
        return plan.scratch_bytes
    c = ConvDims(instr, lhs.rank, rhs.rank)
    nbytes = rhs.dims[c.rhs_o] * 8
    return nbytes if nbytes > _STACK_ACC_BYTES else 0




def _conv_kernel(kb, instr: Instruction, outs) -> None:
    from ..hlo.dtypes import DTYPES
    from .legacy_c import store_expr
    (out,) = outs
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs, res = lhs_i.array_shape, rhs_i.array_shape, out.shape
    if res.size == 0:
        return
    plan = gemm_conv_plan(instr, lhs, rhs)
    if plan is not None:
        emit_gemm_conv(kb, instr, plan, out)
        return
    c = ConvDims(instr, lhs.rank, rhs.rank)
    O = rhs.dims[c.rhs_o]
    acc_t = conv_acc_type(instr, lhs, rhs)
    os_ = row_major_strides(res.dims)
    # a row of accumulators over the output features
    acc = kb.fresh("acc")
    if O * 8 > _STACK_ACC_BYTES:
        kb.line(f"{acc_t}* const {acc} = ({acc_t}*){kb.scratch};")
    else:
        kb.line(f"{acc_t} {acc}[{O}];")
    closes = 0
    ob = "0"
    if res.dims[c.out_b] > 1:
        ob = kb.fresh("b")
        kb.loop(ob, res.dims[c.out_b])
        closes += 1
    o_sp = []
    for k in range(c.spatial):
        m = res.dims[c.out_s[k]]
        v = kb.fresh(f"o{k}") if m > 1 else "0"
        if m > 1:
            kb.loop(v, m)
            closes += 1
        o_sp.append(v)
    oc = kb.fresh("oc")
    zero = "0.0" if acc_t == "double" else "0.0f" if acc_t == "float" else "0"
    kb.line(f"for (int64_t {oc} = 0; {oc} < {O}; ++{oc}) {acc}[{oc}] = {zero};")
    if lhs.size and rhs.size:
        _conv_accumulate(kb, instr, c, acc, acc_t, ob, o_sp, oc)
    # one rounding to the result type
    odt = res.dtype
    out_at = joined(term(ob, os_[c.out_b]), *(term(o_sp[k], os_[c.out_s[k]]) for k in range(c.spatial)),
                     term(oc, os_[c.out_f]))
    val = f"{acc}[{oc}]"
    if odt.kind == "float":
        src = DTYPES["f64" if acc_t == "double" else "f32"]
        dst = DTYPES["f32"] if odt.name in ("bf16", "f16") else odt
        val = convert_expr(val, src, dst)
    kb.line(f"for (int64_t {oc} = 0; {oc} < {O}; ++{oc}) {out.cname}[{out_at}] = {store_expr(odt, val)};")
    for _ in range(closes):
        kb.close()


def _conv_accumulate(kb, instr: Instruction, c: ConvDims, acc: str, acc_t: str, ob: str, o_sp: list[str],
                     oc: str) -> None:
    """The window loops, input-feature loop and output-feature loop adding into `acc`."""
    from .legacy_c import load_expr
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs = lhs_i.array_shape, rhs_i.array_shape
    res = instr.array_shape
    wins = (instr.attr("window") or Window(())).dims
    g, bg = _groups(instr)
    B, C, O = lhs.dims[c.lhs_b], lhs.dims[c.lhs_f], rhs.dims[c.rhs_o]
    CG, OG, OBG, BGS = C // g, O // g, O // bg, B // bg
    ls, rs = row_major_strides(lhs.dims), row_major_strides(rhs.dims)
    lbuf, rbuf = kb.buffers[lhs_i.name].cname, kb.buffers[rhs_i.name].cname
    odt = res.dtype
    is_float = odt.kind == "float"
    # window loops over the indices that land on input
    spans = [window_span(kb, o_sp[k], wd, lhs.dims[c.lhs_s[k]], res.dims[c.out_s[k]], f"k{k}")
             for k, wd in enumerate(wins)]
    if None in spans:
        return

    def conv_in(v: str, dt) -> str:
        if is_float:  # loads are float (f32, bf16, f16) or double (f64)
            return v if (acc_t == "double") == (dt.name == "f64") else f"({acc_t}){v}"
        return convert_expr(v, dt, odt)

    def mac(x: str, wv: str) -> str:
        if is_float:
            return f"{acc}[{oc}] += {x} * {wv};"
        s = suffix(odt)
        return f"{acc}[{oc}] = aotc_add_{s}({acc}[{oc}], aotc_mul_{s}({x}, {wv}));"

    def accumulate(spans) -> None:
        inner = 0
        l_terms, r_terms = [], []
        for k, (wd, span) in enumerate(zip(wins, spans)):
            pos, opened = open_span(kb, span)
            inner += opened
            w = span.w
            l_terms.append(term(pos, ls[c.lhs_s[k]]))
            wk = w if not wd.reversal else (f"({wd.size - 1} - {w})" if not w.isdigit() else str(wd.size - 1 - int(w)))
            r_terms.append(term(wk, rs[c.rhs_s[k]]))
        lsp = kb.let("int64_t", joined(*l_terms), "lsp")
        rsp = kb.let("int64_t", joined(*r_terms), "rsp")
        ic = "0"
        if CG > 1:
            ic = kb.fresh("ic")
            kb.loop(ic, CG)
            inner += 1

        w_at = joined(rsp, term(ic, rs[c.rhs_i]), term(oc, rs[c.rhs_o]))
        wv = conv_in(load_expr(rhs.dtype, f"{rbuf}[{w_at}]"), rhs.dtype)
        if g == 1 and bg == 1:
            # the input element is the same for every output feature: hoisted
            x_at = joined(term(ob, ls[c.lhs_b]), lsp, term(ic, ls[c.lhs_f]))
            x = kb.let(acc_t, conv_in(load_expr(lhs.dtype, f"{lbuf}[{x_at}]"), lhs.dtype), "x")
            kb.line(f"for (int64_t {oc} = 0; {oc} < {O}; ++{oc}) {mac(x, wv)}")
        else:
            kb.open(f"for (int64_t {oc} = 0; {oc} < {O}; ++{oc})")
            bsrc = ob
            if bg > 1:
                bsrc = kb.let("int64_t", joined(ob, f"({oc} / {OBG}) * {BGS}" if BGS != 1 else f"({oc} / {OBG})"),
                              "bin")
            iz = ic
            if g > 1:
                grp = oc if OG == 1 else f"({oc} / {OG})"
                iz = kb.let("int64_t", joined(f"{grp} * {CG}" if CG != 1 else grp, ic), "iz")
            x_at = joined(term(bsrc, ls[c.lhs_b]), lsp, term(iz, ls[c.lhs_f]))
            kb.line(mac(conv_in(load_expr(lhs.dtype, f"{lbuf}[{x_at}]"), lhs.dtype), wv))
            kb.close()
        for _ in range(inner):
            kb.close()

    split = interior(spans)
    if split is None:
        accumulate(spans)
        return
    # the same loops with constant trip counts where the window lies inside the input
    cond, full = split
    kb.open(f"if ({cond})")
    accumulate(full)
    kb.close()
    kb.open("else")
    accumulate(spans)
    kb.close()

register(OpRule("convolution", shape=_conv_shape, kernel=_conv_kernel, scratch_bytes=_conv_scratch,
                buffered_operands=True))
