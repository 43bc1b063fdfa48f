"""Convolution: shape rule, and the direct loop nest for every case the GEMM form
(conv_gemm.py) does not take.

The loop nest handles any `dim_labels`, feature and batch groups, strides, negative
padding, dilations and window reversal; its innermost loop runs over output
features into a row of accumulators (depthwise and grouped cases vectorize). Window
loops run over exactly the indices that land on input (window.py spans). Floats of
every width accumulate in f32 (f64 for f64) and round to the result type once; complex
values accumulate in their own type with the complex multiply and add of aotc_math.h (the
products fused as XLA:CPU fuses them on FMA targets, kernel/contract.py: XLA's bits).
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction, Window
from ..hlo.shape import ArrayShape, Shape, row_major_strides
from ..kernel import ir as K
from ..kernel.builder import load_value, store_value
from ..runtime_c import GEMM_PANEL
from .conv_gemm import emit_gemm_conv, gemm_conv_plan
from .conv_taps import emit_taps_conv, taps_plan
from .conv_winograd import emit_winograd_conv, winograd_plan
from .elementwise import _arr, convert_expr, suffix
from .rule import OpRule, ShapeError
from .window import (ZERO, ConvDims, Span, check_window, conv_acc_type, dot_terms, interior, open_span, reversed_index,
                     span_misses_input, window_output_size, window_span)

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

F32 = DTYPES["f32"]


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
    if not (kinds <= {"float"} or kinds <= {"sint", "uint"} or kinds == {"pred"}  # pred: passes/widen.py
            or kinds == {"complex"}):
        raise ShapeError(f"convolution of {lhs.dtype.name} x {rhs.dtype.name} -> {odt.name} is not supported")
    two = next((d.name for d in (lhs.dtype, rhs.dtype, odt) if d.is_subbyte_int and d.width == 2), None)
    if two:  # XLA:CPU refuses them too
        raise ShapeError(f"convolution of {two} values is not supported (XLA:CPU has none either)")
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


def conv_rhs_in_panels(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape, conv_algorithm: str) -> int | None:
    """The output features O when this convolution runs as im2col GEMMs or the taps kernel
    (not Winograd) reading an f32 [window positions x input features, O] weight in place, O a
    whole number of GEMM panels: a constant weight only such readers read is stored in
    panels (lower/panels.py) and the GEMMs call aotc_sgemm_pb (conv_gemm.py), the taps
    kernel aotc_taps_conv_pb_f32 (conv_taps.py); else None. A convolution the taps kernel
    could take may still run as im2col GEMMs (_conv_kernel), so both must read panels."""
    if winograd_plan(instr, lhs, rhs, conv_algorithm) is not None:
        return None
    plan = gemm_conv_plan(instr, lhs, rhs)
    if plan is None or not plan.direct_b or plan.elem != F32 or rhs.dtype != F32 or plan.O % GEMM_PANEL:
        return None
    return plan.O


def _conv_kernel(kb, instr: Instruction, outs) -> None:
    (out,) = outs
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs, res = lhs_i.array_shape, rhs_i.array_shape, instr.array_shape
    if any(s.dtype.kind == "pred" or s.dtype.is_narrow_float or s.dtype.is_subbyte_int for s in (lhs, rhs, res)):
        raise ShapeError(f"convolution of {res.dtype.name} values is not supported here (passes/widen.py widens them)")
    if res.size == 0:
        return
    wplan = winograd_plan(instr, lhs, rhs, kb.conv_algorithm)
    if wplan is not None and out.dtype == F32:  # an epilogue to another type: the GEMM path's own rows
        emit_winograd_conv(kb, instr, wplan, out)
        return
    if kb.buffers[rhs_i.name].winograd:  # lower/panels.py stores it only for kernels that take the path above
        raise AssertionError(f"{instr.name}: its weight is stored as a Winograd transform but it runs direct")
    tplan = taps_plan(instr, lhs, rhs)
    if tplan is not None and out.dtype == F32 and (kb.out_rows is None or kb.epilogue is None):
        emit_taps_conv(kb, instr, tplan, out)  # the im2col GEMM's bits, without its matrix
        return
    plan = gemm_conv_plan(instr, lhs, rhs)
    if plan is not None:
        emit_gemm_conv(kb, instr, plan, out)
        return
    c = ConvDims(instr, lhs.rank, rhs.rank)
    O = rhs.dims[c.rhs_o]
    acc_t = conv_acc_type(instr, lhs, rhs)
    os_ = row_major_strides(res.dims)
    on_stack = O * 8 <= _STACK_ACC_BYTES
    acc = K.Buf(kb.fresh("acc"), acc_t, O)
    if not on_stack:  # one row of accumulators in scratch, shared: the output loops stay serial
        kb.emit(K.Let(K.Var(acc.name, None), K.Ptr(kb.scratch, ZERO, elem=acc_t, byte_view=True)))
    # output pixels are computed independently (each with its own row of accumulators on
    # the stack): threads may split the pixel loops, a [1,H,W,C] nest over H*W
    marks = (K.PARALLEL,) if on_stack else ()
    ob = kb.loop(kb.fresh("b"), res.dims[c.out_b], marks) if res.dims[c.out_b] > 1 else ZERO
    o_sp = [kb.loop(kb.fresh(f"o{k}"), res.dims[c.out_s[k]], marks) if res.dims[c.out_s[k]] > 1 else ZERO
            for k in range(c.spatial)]
    if on_stack:
        kb.emit(K.ArrayDecl(acc))
    oc = K.Var(kb.fresh("oc"))
    kb.loop(oc.name, O, (K.VECTOR,))
    kb.store(acc, oc, K.Const(0, acc_t))
    kb.close()
    if lhs.size and rhs.size:
        _conv_accumulate(kb, instr, c, acc, ob, o_sp, oc)
    # one rounding to the result type
    odt = res.dtype
    out_at = dot_terms([(ob, os_[c.out_b])] + [(o_sp[k], os_[c.out_s[k]]) for k in range(c.spatial)]
                       + [(oc, os_[c.out_f])])
    val: K.Expr = K.Load(acc, oc)
    if odt.kind == "float":
        val = convert_expr(val, acc_t, F32 if odt.name in ("bf16", "f16") else odt)
    kb.loop(oc.name, O, (K.VECTOR,))
    kb.store(out, out_at, store_value(odt, val))
    kb.close()
    for v in [ob] + o_sp:
        if isinstance(v, K.Var):
            kb.close()


def _conv_accumulate(kb, instr: Instruction, c: ConvDims, acc: K.Buf, ob: K.Expr, o_sp: list[K.Expr],
                     oc: K.Var) -> None:
    """The window loops, input-feature loop and output-feature loop adding into `acc`."""
    lhs_i, rhs_i = (kb.producers[o] for o in instr.operands)
    lhs, rhs = lhs_i.array_shape, rhs_i.array_shape
    res = instr.array_shape
    wins = (instr.attr("window") or Window(())).dims
    g, bg = _groups(instr)
    B, C, O = lhs.dims[c.lhs_b], lhs.dims[c.lhs_f], rhs.dims[c.rhs_o]
    CG, OG, OBG, BGS = C // g, O // g, O // bg, B // bg
    ls, rs = row_major_strides(lhs.dims), row_major_strides(rhs.dims)
    lbuf, rbuf = kb.buffers[lhs_i.name], kb.buffers[rhs_i.name]
    acc_t = acc.dtype
    odt = res.dtype
    is_float = odt.kind == "float"
    # window loops over the indices that land on input
    if any(span_misses_input(o_sp[k], wd, lhs.dims[c.lhs_s[k]]) for k, wd in enumerate(wins)):
        return
    spans = [window_span(kb, o_sp[k], wd, lhs.dims[c.lhs_s[k]], res.dims[c.out_s[k]], f"k{k}")
             for k, wd in enumerate(wins)]

    def conv_in(v: K.Expr, dt) -> K.Expr:
        if is_float:  # loads are float (f32, bf16, f16) or double (f64)
            return v if v.ty == acc_t else K.Cast(v, acc_t)
        return convert_expr(v, dt, odt)

    def mac(x: K.Expr, wv: K.Expr) -> None:
        a = K.Load(acc, oc)
        if is_float:
            kb.store(acc, oc, K.Binary("+", a, K.Binary("*", x, wv, acc_t), acc_t))
        else:
            s = suffix(odt)
            kb.store(acc, oc, K.Call(f"aotc_add_{s}", (a, K.Call(f"aotc_mul_{s}", (x, wv), acc_t)), acc_t))

    def accumulate(spans: list[Span]) -> None:
        inner = 0
        l_pairs, r_pairs = [], []
        for k, (wd, span) in enumerate(zip(wins, spans)):
            pos, opened = open_span(kb, span)
            inner += opened
            l_pairs.append((pos, ls[c.lhs_s[k]]))
            r_pairs.append((reversed_index(span.w, wd), rs[c.rhs_s[k]]))
        lsp = kb.let(dot_terms(l_pairs), "lsp")
        rsp = kb.let(dot_terms(r_pairs), "rsp")
        ic: K.Expr = ZERO
        if CG > 1:
            ic = kb.loop(kb.fresh("ic"), CG, (K.REDUCTION,))
            inner += 1
        w_at = rsp + dot_terms([(ic, rs[c.rhs_i]), (oc, rs[c.rhs_o])])
        wv = conv_in(load_value(rhs.dtype, K.Load(rbuf, w_at)), rhs.dtype)
        if g == 1 and bg == 1:
            # the input element is the same for every output feature: loaded once
            x_at = dot_terms([(ob, ls[c.lhs_b])]) + lsp + ic * ls[c.lhs_f]
            x = kb.let(conv_in(load_value(lhs.dtype, K.Load(lbuf, x_at)), lhs.dtype), "x")
            kb.loop(oc.name, O, (K.VECTOR,))
            mac(x, wv)
            kb.close()
        else:
            kb.loop(oc.name, O, (K.VECTOR,))
            bsrc = ob
            if bg > 1:
                bsrc = kb.let(ob + (oc // OBG) * BGS, "bin")
            iz = ic
            if g > 1:
                iz = kb.let((oc // OG) * CG + ic, "iz")
            x_at = bsrc * ls[c.lhs_b] + lsp + iz * ls[c.lhs_f]
            mac(conv_in(load_value(lhs.dtype, K.Load(lbuf, x_at)), lhs.dtype), wv)
            kb.close()
        for _ in range(inner):
            kb.close()

    split = interior(spans)
    if split is None:
        accumulate(spans)
        return
    # the same loops with constant trip counts where the window lies inside the input
    cond, full = split
    kb.if_(cond)
    accumulate(full)
    kb.else_()
    accumulate(spans)
    kb.close()


def _takes_epilogue(instr: Instruction, shapes: list[Shape]) -> bool:
    """Convolutions run as GEMM apply their elementwise consumers to each block of rows."""
    return gemm_conv_plan(instr, shapes[0], shapes[1]) is not None


RULES.append(OpRule("convolution", shape=_conv_shape, kernel=_conv_kernel, scratch_bytes=_conv_scratch,
                    buffered_operands=True, epilogue=_takes_epilogue))
