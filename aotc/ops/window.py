"""Window geometry shared by the windowed ops, and reduce-window itself.

A window walks over a padded, dilated view of its input that is never
materialized. For each output index, `window_span` computes in closed form (integer
arithmetic) the window indices that land on real input elements, so kernels loop
over exactly those: no bound checks or `continue` guards inside the loops, nothing
a compiler's if-conversion could turn into loads outside the input. Positions on
padding or on holes of the base dilation contribute nothing (reduce-window then
holds just its init value, as XLA:CPU computes it). Convolution lives in
convolution.py and conv_gemm.py; its dimension numbers are decoded here.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from math import gcd

from ..hlo.ir import Instruction, Window, WindowDim
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .elementwise import _arr
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


def check_window(win: Window | None, rank: int, op: str) -> tuple[WindowDim, ...]:
    if win is None:
        raise ShapeError(f"{op} needs a window attribute")
    if len(win.dims) != rank:
        raise ShapeError(f"{op} window has {len(win.dims)} dimensions, expected {rank}")
    for d, w in enumerate(win.dims):
        if w.size < 0 or w.stride < 1 or w.lhs_dilate < 1 or w.rhs_dilate < 1:
            raise ShapeError(f"{op} window dimension {d} has a non-positive size, stride or dilation")
    return win.dims


# ------------------------------------------------------------------ window spans


@dataclass(frozen=True, slots=True)
class Span:
    """The window indices of one dimension that land on input for the current output
    index: `w` runs from `lo` (inclusive) to `hi` (exclusive) in steps of `step`, and
    reads input index `pos` (text using `w`). `partial` is a C condition, true when
    some window index of this output index misses the input ("0": never)."""
    w: str
    lo: str
    hi: str
    step: int
    pos: str
    partial: str
    full: bool  # every window index lands on input for every output index: a plain loop
    size: int  # the window size


def _plus(expr: str, k: int) -> str:
    return expr if k == 0 else f"{expr} + {k}" if k > 0 else f"{expr} - {-k}"


def window_span(kb, o: str, wd: WindowDim, n: int, n_out: int, name: str) -> Span | None:
    """The span of window indices of one dimension for output index `o` (a C variable, or
    "0" when the output dimension has size 1); None when no window index of any output
    index reads the input. Emits the bound computations (per output index) as locals.

    Window index w of output index o reads dilated position q = o*s + w*r - p, a real
    element when 0 <= q <= (n-1)*d and d divides q (s stride, r window dilation, p low
    padding, d base dilation); its input index is q / d."""
    s, r, d, p, size = wd.stride, wd.rhs_dilate, wd.lhs_dilate, wd.pad_lo, wd.size
    if n == 0 or size == 0:
        return None
    last = (n - 1) * d  # last real dilated position
    if o == "0":  # everything is known: list the window indices that land
        hits = [w for w in range(size) if 0 <= w * r - p <= last and (w * r - p) % d == 0]
        if not hits:
            return None
        partial = "0" if len(hits) == size else "1"
        if len(hits) == 1:
            at = str(hits[0])
            return Span(at, at, str(hits[0] + 1), 1, str((hits[0] * r - p) // d), partial, False, size)
        step = hits[1] - hits[0]
        w = kb.fresh(name)
        pos = _plus(w if r == 1 else f"{w} * {r}", -p)
        pos = pos if d == 1 else f"({pos}) / {d}"
        return Span(w, str(hits[0]), str(hits[-1] + 1), step, pos, partial, partial == "0", size)
    o_term = o if s == 1 else f"{o} * {s}"
    w = kb.fresh(name) if size > 1 else "0"
    pos = _plus(" + ".join(t for t in (o_term, (w if r == 1 else f"{w} * {r}") if size > 1 else "") if t), -p)
    pos = pos if d == 1 else f"({pos}) / {d}"
    # w*r >= p - o*s (need) and w*r <= last + p - o*s (room), over o in [0, n_out)
    lo_needed = p > 0
    hi_needed = last + p - (n_out - 1) * s < (size - 1) * r
    if d == 1 and not lo_needed and not hi_needed:
        return Span(w, "0", str(size), 1, pos, "0", True, size)
    need = f"({p} - {o_term})"
    room = f"({last + p} - {o_term})"
    lo, hi = "0", str(size)
    if lo_needed:
        ceil = need if r == 1 else f"({need} + {r - 1}) / {r}"
        lo = kb.let("int64_t", f"{need} > 0 ? {ceil} : 0", f"{name}_lo")
    if hi_needed:
        fl = f"{room} + 1" if r == 1 else f"{room} / {r} + 1"
        hi = kb.let("int64_t", f"{room} < 0 ? 0 : {room} >= {(size - 1) * r} ? {size} : {fl}", f"{name}_hi")
    step = 1
    if d > 1:  # w*r = need (mod d): w = w0 (mod d/g) when g = gcd(r, d) divides need
        g = gcd(r, d)
        step = d // g
        if g > 1:
            hi = kb.let("int64_t", f"{need} % {g} == 0 ? {hi} : 0", f"{name}_hi")
        if step > 1:
            inv = pow(r // g, -1, step)
            w0 = f"{need} / {g}" if g > 1 else need
            w0 = f"{w0} * {inv}" if inv != 1 else w0
            phase = f"(({w0}) % {step} + {step}) % {step}"
            lo = kb.let("int64_t", f"{lo} + (({phase} - {lo}) % {step} + {step}) % {step}", f"{name}_lo")
    if size == 1:  # a loop of at most one trip: the one window index lands or not
        w = kb.fresh(name)
    partial = "1" if d > 1 else " || ".join(c for c in (f"{lo} != 0" if lo_needed else "",
                                                        f"{hi} != {size}" if hi_needed else "") if c)
    return Span(w, lo, hi, step, pos, partial, False, size)


def interior(spans: list[Span]) -> tuple[str, list[Span]] | None:
    """For spans that miss the input only near the borders (no base dilation): the C
    condition under which every window index lands on input for the current output
    index, and the spans as full loops of constant trip count for that case (which
    compilers unroll); None when there is no such split to make."""
    if all(s.full for s in spans) or any(s.partial == "1" for s in spans):
        return None
    edge = " || ".join(f"({s.partial})" for s in spans if s.partial != "0")
    full = [s if s.full else replace(s, lo="0", hi=str(s.size), step=1, partial="0", full=True) for s in spans]
    return f"!({edge})", full


def open_span(kb, span: Span) -> tuple[str, int]:
    """Open the loop of `span` (none for a single constant index); returns the input index
    (a local inside the loop) and the number of scopes opened."""
    if span.full:
        if span.w == "0":
            return kb.let("int64_t", span.pos, "pos"), 0
        kb.loop(span.w, span.hi)
        return kb.let("int64_t", span.pos, "pos"), 1
    if span.step == 1 and span.lo.isdigit() and span.hi.isdigit() and int(span.hi) == int(span.lo) + 1:
        return span.pos, 0  # a single known index: a constant position
    inc = f"++{span.w}" if span.step == 1 else f"{span.w} += {span.step}"
    kb.open(f"for (int64_t {span.w} = {span.lo}; {span.w} < {span.hi}; {inc})")
    return kb.let("int64_t", span.pos, "pos"), 1


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
    wins = check_window(instr.attr("window"), ins[0].rank, "reduce-window")
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
    spans = [window_span(kb, o_vars[d], wd, in_dims[d], out_dims[d], f"w{d}") for d, wd in enumerate(wins)]

    def accumulate(spans: list[Span]) -> None:
        closes, sub = 0, []
        for span in spans:
            pos, opened = open_span(kb, span)
            closes += opened
            sub.append(pos)
        xs = [kb.operand(instr, k, _index(in_dims, sub)) for k in range(n)]
        if n == 1:
            kb.line(f"{accs[0]} = {fn}({accs[0]}, {xs[0]});")
        else:
            kb.line(f"{fn}({', '.join(map(str, accs))}, {', '.join(map(str, xs))}, {', '.join('&' + str(a) for a in accs)});")
        for _ in range(closes):
            kb.close()

    if None not in spans:
        split = interior(spans)
        if split is None:
            accumulate(spans)
        else:  # constant trip counts where the window lies inside the input
            kb.open(f"if ({split[0]})")
            accumulate(split[1])
            kb.close()
            kb.open("else")
            accumulate(spans)
            kb.close()
    lin = kb.linear(_index(out_dims, o_vars))
    for k in range(n):
        kb.line(f"{outs[k].cname}[{lin}] = {store_expr(ins[k].dtype, accs[k])};")
    for v in o_vars:
        if v != "0":
            kb.close()


register(OpRule("reduce-window", shape=_reduce_window_shape, kernel=_reduce_window_kernel))

# ------------------------------------------------------------------ convolution dimension numbers


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


def conv_acc_type(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> str:
    """C type a convolution accumulates in: f32 for every float width, f64 for f64."""
    from .legacy_c import compute_ctype
    odt = instr.array_shape.dtype
    if odt.kind == "float":
        return "double" if "f64" in (odt.name, lhs.dtype.name, rhs.dtype.name) else "float"
    return compute_ctype(odt)


def term(v: str, stride: int) -> str | None:
    if v == "0" or stride == 0:
        return None
    return v if stride == 1 else f"{v} * {stride}"


def joined(*parts) -> str:
    return " + ".join(p for p in parts if p and p != "0") or "0"
