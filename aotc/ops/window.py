"""Windowed ops: reduce-window and convolution, shape rules and emission.

Both walk a window over a padded, dilated view of their input without
materializing it: a window position that falls on padding or on a hole of the
base (lhs) dilation contributes nothing (reduce-window then holds just its
init value, as XLA:CPU computes it). Convolution handles any `dim_labels`,
feature and batch groups, strides, negative padding, dilations and window
reversal with one loop nest whose innermost loop runs over output features into
a row of accumulators (depthwise and grouped cases vectorize); an ungrouped
float convolution with its output features innermost instead becomes GEMM calls
on row blocks of an im2col matrix. Floats of every width accumulate in f32 (f64
for f64) and round to the result type once.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..hlo.ir import Instruction, Window, WindowDim
from ..hlo.shape import ArrayShape, Shape, TupleShape, row_major_strides
from .elementwise import _arr, convert_expr, suffix
from .registry import OpRule, ShapeError, register


def _index(dims, exprs=None, linear=None):
    from .legacy_c import Index
    return Index(tuple(dims), None if exprs is None else tuple(exprs), linear)


def window_output_size(n: int, w: WindowDim) -> int:
    """Size of one output dimension of a window of `w` over an input dimension of size `n`."""
    dilated = (n - 1) * w.lhs_dilate + 1 if n > 0 else 0
    padded = dilated + w.pad_lo + w.pad_hi
    span = (w.size - 1) * w.rhs_dilate + 1
    if w.size == 0 or padded < span:
        return 0
    return (padded - span) // w.stride + 1


def _check_window(win: Window | None, rank: int, op: str) -> tuple[WindowDim, ...]:
    if win is None:
        raise ShapeError(f"{op} needs a window attribute")
    if len(win.dims) != rank:
        raise ShapeError(f"{op} window has {len(win.dims)} dimensions, expected {rank}")
    for d, w in enumerate(win.dims):
        if w.size < 0 or w.stride < 1 or w.lhs_dilate < 1 or w.rhs_dilate < 1:
            raise ShapeError(f"{op} window dimension {d} has a non-positive size, stride or dilation")
    return win.dims


def window_position(kb, o: str, w: str, wd: WindowDim, n: int, n_out: int, conds: list[str]) -> str:
    """C expression of the input index that output index `o` and window index `w` read in one
    dimension; appends the conditions under which it is a real element (not padding, not a
    hole of the base dilation). Checks the bounds can never fail are left out."""
    terms = []
    if n_out > 1:
        terms.append(o if wd.stride == 1 else f"{o} * {wd.stride}")
    if wd.size > 1:
        terms.append(w if wd.rhs_dilate == 1 else f"{w} * {wd.rhs_dilate}")
    pos = " + ".join(terms) or "0"
    if wd.pad_lo:
        pos = f"{pos} - {wd.pad_lo}" if wd.pad_lo > 0 else f"{pos} + {-wd.pad_lo}"
    lo = -wd.pad_lo
    hi = (n_out - 1) * wd.stride + (wd.size - 1) * wd.rhs_dilate - wd.pad_lo
    if lo == hi:
        pos = str(lo)
    elif " " in pos:
        pos = kb.let("int64_t", pos, "pos")
    if wd.lhs_dilate > 1:
        if not pos.lstrip("-").isdigit():
            conds.append(f"{pos} % {wd.lhs_dilate} == 0")
        elif int(pos) % wd.lhs_dilate:
            conds.append("0")
        pos = f"({pos} / {wd.lhs_dilate})" if not pos.lstrip("-").isdigit() else str(int(pos) // wd.lhs_dilate)
        lo, hi = -((-lo) // wd.lhs_dilate), hi // wd.lhs_dilate  # ceil, floor
    if lo < 0:
        conds.append(f"{pos} >= 0")
    if hi >= n:
        conds.append(f"{pos} < {n}")
    return pos


# ------------------------------------------------------------------ reduce-window


def _reduce_window_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) % 2 or not shapes:
        raise ShapeError("reduce-window needs N operands followed by N init values")
    n = len(shapes) // 2
    ins = [_arr(s, f"operand {k}") for k, s in enumerate(shapes[:n])]
    inits = [_arr(s, f"init {k}") for k, s in enumerate(shapes[n:])]
    for k, (a, i) in enumerate(zip(ins, inits)):
        if a.dims != ins[0].dims:
            raise ShapeError(f"reduce-window operand {k} {a.text(False)} does not match {ins[0].text(False)}")
        if i.rank != 0 or i.dtype != a.dtype:
            raise ShapeError(f"reduce-window init {k} must be a {a.dtype.name} scalar, got {i.text(False)}")
    wins = _check_window(instr.attr("window"), ins[0].rank, "reduce-window")
    if instr.attr("to_apply") is None:
        raise ShapeError("reduce-window needs a to_apply computation")
    dims = tuple(window_output_size(m, w) for m, w in zip(ins[0].dims, wins))
    outs = tuple(ArrayShape(a.dtype, dims) for a in ins)
    return outs[0] if n == 1 else TupleShape(outs)


def _reduce_window_kernel(kb, instr: Instruction, outs) -> None:
    from .legacy_c import compute_ctype, store_expr
    n = len(instr.operands) // 2
    ins = [kb.producers[o].array_shape for o in instr.operands[:n]]
    in_dims = ins[0].dims
    out_dims = outs[0].shape.dims
    if 0 in out_dims:
        return
    wins = instr.attr("window").dims
    fn = kb.scalar_function(instr.attr("to_apply"))
    o_vars = []
    for d, m in enumerate(out_dims):
        v = kb.fresh(f"o{d}") if m > 1 else "0"
        if m > 1:
            kb.loop(v, m)
        o_vars.append(v)
    accs = []
    for k in range(n):
        init = kb.operand(instr, n + k, _index(()))
        acc = kb.fresh(f"acc{k}")
        kb.line(f"{compute_ctype(ins[k].dtype)} {acc} = {init};")
        accs.append(acc)
    closes = 0
    if 0 not in in_dims:
        sub, conds = [], []
        for d, wd in enumerate(wins):
            w = "0"
            if wd.size > 1:
                w = kb.fresh(f"w{d}")
                kb.loop(w, wd.size)
                closes += 1
            sub.append(window_position(kb, o_vars[d], w, wd, in_dims[d], out_dims[d], conds))
        if conds:
            kb.open(f"if ({' && '.join(conds)})")
            closes += 1
        xs = [kb.operand(instr, k, _index(in_dims, sub)) for k in range(n)]
        if n == 1:
            kb.line(f"{accs[0]} = {fn}({accs[0]}, {xs[0]});")
        else:
            kb.line(f"{fn}({', '.join(map(str, accs))}, {', '.join(map(str, xs))}, {', '.join('&' + str(a) for a in accs)});")
    for _ in range(closes):
        kb.close()
    lin = kb.linear(_index(out_dims, o_vars))
    for k in range(n):
        kb.line(f"{outs[k].cname}[{lin}] = {store_expr(ins[k].dtype, accs[k])};")
    for v in o_vars:
        if v != "0":
            kb.close()


register(OpRule("reduce-window", shape=_reduce_window_shape, kernel=_reduce_window_kernel))

# ------------------------------------------------------------------ convolution


class ConvDims:
    """Dimension numbers of a convolution, decoded from `dim_labels`."""

    def __init__(self, instr: Instruction, lhs_rank: int, rhs_rank: int):
        labels = instr.attr("dim_labels")
        if labels is None:
            raise ShapeError("convolution needs a dim_labels attribute")
        ns = lhs_rank - 2
        for name, text, need, rank in (("lhs", labels.lhs, "bf", lhs_rank), ("rhs", labels.rhs, "io", rhs_rank),
                                       ("result", labels.out, "bf", lhs_rank)):
            want = sorted(need + "".join(str(k) for k in range(ns)))
            if len(text) != rank or sorted(text) != want:
                raise ShapeError(f"convolution dim_labels {name} part '{text}' does not label a rank-{rank} "
                                 f"array with {need} and spatial dimensions 0..{ns - 1}")
        self.spatial = ns
        self.lhs_b, self.lhs_f = labels.lhs.index("b"), labels.lhs.index("f")
        self.rhs_i, self.rhs_o = labels.rhs.index("i"), labels.rhs.index("o")
        self.out_b, self.out_f = labels.out.index("b"), labels.out.index("f")
        self.lhs_s = tuple(labels.lhs.index(str(k)) for k in range(ns))
        self.rhs_s = tuple(labels.rhs.index(str(k)) for k in range(ns))
        self.out_s = tuple(labels.out.index(str(k)) for k in range(ns))


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
    wins = _check_window(instr.attr("window") or Window(()), c.spatial, "convolution")
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


def _acc_type(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> str:
    from .legacy_c import compute_ctype
    odt = instr.array_shape.dtype
    if odt.kind == "float":
        return "double" if "f64" in (odt.name, lhs.dtype.name, rhs.dtype.name) else "float"
    return compute_ctype(odt)


_STACK_ACC_BYTES = 32768


def _conv_scratch(instr: Instruction, shapes: list[Shape]) -> int:
    lhs, rhs = shapes[0], shapes[1]
    plan = gemm_conv_plan(instr, lhs, rhs)
    if plan is not None:
        return plan.scratch_bytes
    c = ConvDims(instr, lhs.rank, rhs.rank)
    nbytes = rhs.dims[c.rhs_o] * 8
    return nbytes if nbytes > _STACK_ACC_BYTES else 0


# ---- the GEMM form: rows of output pixels times an (window position, input feature) x
# output feature matrix, through the runtime's packed GEMM


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
    elem = _acc_type(instr, lhs, rhs)
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


def _emit_gemm_conv(kb, instr: Instruction, plan: GemmConv, out) -> None:
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
            r_terms.append(_term(wk, rs[c.rhs_s[k]]))
        kpos = _joined(*(_term(v, prod(w.size for w in wins[k + 1:])) for k, v in enumerate(ks)))
        ic, oc = kb.fresh("ic"), kb.fresh("oc")
        kb.loop(ic, C)
        kb.loop(oc, O)
        src = _joined(*r_terms, _term(ic, rs[c.rhs_i]), _term(oc, rs[c.rhs_o]))
        row = _joined(f"({kpos}) * {C}" if kpos != "0" else None, ic)
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
    ks, l_terms, conds, inner = [], [], [], 0
    for k, wd in enumerate(wins):
        v = kb.fresh(f"k{k}") if wd.size > 1 else "0"
        if wd.size > 1:
            kb.loop(v, wd.size)
            inner += 1
        ks.append(v)
        od = c.out_s[k]
        pos = window_position(kb, o_var[od], v, wd, lhs.dims[c.lhs_s[k]], res.dims[od], conds)
        l_terms.append(_term(pos, ls[c.lhs_s[k]]))
    kpos = _joined(*(_term(v, prod(w.size for w in wins[k + 1:])) for k, v in enumerate(ks)))
    col = arow
    if kpos != "0":
        col = kb.fresh("dst")
        kb.line(f"{T}* const {col} = {arow} + ({kpos}) * {C};")
    ic = kb.fresh("ic")
    x_at = _joined(_term(o_var[c.out_b], ls[c.lhs_b]), *l_terms, _term(ic, ls[c.lhs_f]))
    copy = f"for (int64_t {ic} = 0; {ic} < {C}; ++{ic}) {col}[{ic}] = {cast(load_expr(lhs.dtype, f'{lbuf}[{x_at}]'), lhs.dtype)};"
    if conds:
        kb.open(f"if ({' && '.join(conds)})")
        kb.line(copy)
        kb.close()
        kb.open("else")
        kb.line(f"for (int64_t {ic} = 0; {ic} < {C}; ++{ic}) {col}[{ic}] = {zero};")
        kb.close()
    else:
        kb.line(copy)
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
        _emit_gemm_conv(kb, instr, plan, out)
        return
    c = ConvDims(instr, lhs.rank, rhs.rank)
    O = rhs.dims[c.rhs_o]
    acc_t = _acc_type(instr, lhs, rhs)
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
    out_at = _joined(_term(ob, os_[c.out_b]), *(_term(o_sp[k], os_[c.out_s[k]]) for k in range(c.spatial)),
                     _term(oc, os_[c.out_f]))
    val = f"{acc}[{oc}]"
    if odt.kind == "float":
        src = DTYPES["f64" if acc_t == "double" else "f32"]
        dst = DTYPES["f32"] if odt.name in ("bf16", "f16") else odt
        val = convert_expr(val, src, dst)
    kb.line(f"for (int64_t {oc} = 0; {oc} < {O}; ++{oc}) {out.cname}[{out_at}] = {store_expr(odt, val)};")
    for _ in range(closes):
        kb.close()


def _term(v: str, stride: int) -> str | None:
    if v == "0" or stride == 0:
        return None
    return v if stride == 1 else f"{v} * {stride}"


def _joined(*parts) -> str:
    return " + ".join(p for p in parts if p and p != "0") or "0"


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
    # window loops; a position on padding or on a dilation hole is skipped
    inner, any_loop = 0, False
    l_terms, r_terms = [], []
    for k, wd in enumerate(wins):
        w = "0"
        if wd.size > 1:
            w = kb.fresh(f"k{k}")
            kb.loop(w, wd.size)
            inner += 1
            any_loop = True
        conds: list[str] = []
        pos = window_position(kb, o_sp[k], w, wd, lhs.dims[c.lhs_s[k]], res.dims[c.out_s[k]], conds)
        if conds and any_loop:
            kb.line(f"if (!({' && '.join(conds)})) continue;")
        elif conds:
            kb.open(f"if ({' && '.join(conds)})")
            inner += 1
        l_terms.append(_term(pos, ls[c.lhs_s[k]]))
        wk = w if not wd.reversal else (f"({wd.size - 1} - {w})" if w != "0" else str(wd.size - 1))
        r_terms.append(_term(wk, rs[c.rhs_s[k]]))
    lsp = kb.let("int64_t", _joined(*l_terms), "lsp")
    rsp = kb.let("int64_t", _joined(*r_terms), "rsp")
    ic = "0"
    if CG > 1:
        ic = kb.fresh("ic")
        kb.loop(ic, CG)
        inner += 1

    def conv_in(v: str, dt) -> str:
        if is_float:  # loads are float (f32, bf16, f16) or double (f64)
            return v if (acc_t == "double") == (dt.name == "f64") else f"({acc_t}){v}"
        return convert_expr(v, dt, odt)

    def mac(x: str, wv: str) -> str:
        if is_float:
            return f"{acc}[{oc}] += {x} * {wv};"
        s = suffix(odt)
        return f"{acc}[{oc}] = aotc_add_{s}({acc}[{oc}], aotc_mul_{s}({x}, {wv}));"

    w_at = _joined(rsp, _term(ic, rs[c.rhs_i]), _term(oc, rs[c.rhs_o]))
    wv = conv_in(load_expr(rhs.dtype, f"{rbuf}[{w_at}]"), rhs.dtype)
    if g == 1 and bg == 1:
        # the input element is the same for every output feature: hoisted
        x_at = _joined(_term(ob, ls[c.lhs_b]), lsp, _term(ic, ls[c.lhs_f]))
        x = kb.let(acc_t, conv_in(load_expr(lhs.dtype, f"{lbuf}[{x_at}]"), lhs.dtype), "x")
        kb.line(f"for (int64_t {oc} = 0; {oc} < {O}; ++{oc}) {mac(x, wv)}")
    else:
        kb.open(f"for (int64_t {oc} = 0; {oc} < {O}; ++{oc})")
        bsrc = ob
        if bg > 1:
            bsrc = kb.let("int64_t", _joined(ob, f"({oc} / {OBG}) * {BGS}" if BGS != 1 else f"({oc} / {OBG})"),
                          "bin")
        iz = ic
        if g > 1:
            grp = oc if OG == 1 else f"({oc} / {OG})"
            iz = kb.let("int64_t", _joined(f"{grp} * {CG}" if CG != 1 else grp, ic), "iz")
        x_at = _joined(_term(bsrc, ls[c.lhs_b]), lsp, _term(iz, ls[c.lhs_f]))
        kb.line(mac(conv_in(load_expr(lhs.dtype, f"{lbuf}[{x_at}]"), lhs.dtype), wv))
        kb.close()
    for _ in range(inner):
        kb.close()


register(OpRule("convolution", shape=_conv_shape, kernel=_conv_kernel, scratch_bytes=_conv_scratch,
                buffered_operands=True))
