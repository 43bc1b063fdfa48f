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
from functools import reduce
from math import gcd

from ..hlo.dtypes import DTYPES, DType
from ..hlo.ir import Instruction, Window, WindowDim
from ..hlo.shape import ArrayShape, Shape, TupleShape
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type, store_value
from .elementwise import _arr
from .reduce import f32_combiner
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

ZERO, ONE = K.Const(0), K.Const(1)
ALWAYS, NEVER = K.Const(1, K.BOOL), K.Const(0, K.BOOL)


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
    reads input index `pos` (an expression of `w`). `inside` is the condition under
    which every window index of this output index lands on input (None: always;
    NEVER: some index always misses)."""
    w: K.Expr
    lo: K.Expr
    hi: K.Expr
    step: int
    pos: K.Expr
    inside: K.Expr | None
    full: bool  # every window index lands on input for every output index: a plain loop
    size: int  # the window size


def all_of(conds) -> K.Expr | None:
    """The conjunction of conditions (None: always true)."""
    conds = [c for c in conds if c is not None]
    if any(c == NEVER for c in conds):
        return NEVER
    return reduce(lambda a, b: K.Binary("&&", a, b, K.BOOL), conds) if conds else None


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def negate(cond: K.Expr) -> K.Expr:
    """`!cond`, with the negation pushed into comparisons (`a != 0 || b != 3`)."""
    if isinstance(cond, K.Binary) and cond.op in ("&&", "||"):
        return K.Binary("||" if cond.op == "&&" else "&&", negate(cond.a), negate(cond.b), K.BOOL)
    if isinstance(cond, K.Binary) and cond.op in _NEGATED:
        return K.Binary(_NEGATED[cond.op], cond.a, cond.b, K.BOOL)
    return K.Unary("!", cond, K.BOOL)


def span_misses_input(o: K.Expr, wd: WindowDim, n: int) -> bool:
    """Whether no window index of any output index reads the input (`window_span` is None)."""
    if n == 0 or wd.size == 0:
        return True
    if isinstance(o, K.Const):
        last = (n - 1) * wd.lhs_dilate
        return not any(0 <= w * wd.rhs_dilate - wd.pad_lo <= last and (w * wd.rhs_dilate - wd.pad_lo) % wd.lhs_dilate == 0
                       for w in range(wd.size))
    return False


def _sel(cond: K.Expr, a, b) -> K.Expr:
    return K.Select(cond, K.lift(a), K.lift(b), K.INDEX)


def _mod(x: K.Expr, m: int) -> K.Expr:
    """x mod m in [0, m) for any sign of x."""
    return (x % m + m) % m


def window_span(kb, o: K.Expr, wd: WindowDim, n: int, n_out: int, name: str) -> Span | None:
    """The span of window indices of one dimension for output index `o` (a loop variable,
    or Const(0) when the output dimension has size 1); None when no window index of any
    output index reads the input. Emits the bound computations (per output index) as
    locals.

    Window index w of output index o reads dilated position q = o*s + w*r - p, a real
    element when 0 <= q <= (n-1)*d and d divides q (s stride, r window dilation, p low
    padding, d base dilation); its input index is q / d."""
    s, r, d, p, size = wd.stride, wd.rhs_dilate, wd.lhs_dilate, wd.pad_lo, wd.size
    if span_misses_input(o, wd, n):
        return None
    last = (n - 1) * d  # last real dilated position

    def position(w: K.Expr, o_term: K.Expr) -> K.Expr:
        q = o_term + w * r - p
        return q if d == 1 else q // d

    if isinstance(o, K.Const):  # everything is known: list the window indices that land
        hits = [w for w in range(size) if 0 <= w * r - p <= last and (w * r - p) % d == 0]
        inside = None if len(hits) == size else NEVER
        if len(hits) == 1:
            return Span(K.Const(hits[0]), K.Const(hits[0]), K.Const(hits[0] + 1), 1,
                        K.Const((hits[0] * r - p) // d), inside, False, size)
        w = K.Var(kb.fresh(name))
        return Span(w, K.Const(hits[0]), K.Const(hits[-1] + 1), hits[1] - hits[0], position(w, ZERO), inside,
                    inside is None, size)
    o_term = o * s
    w = K.Var(kb.fresh(name)) if size > 1 else ZERO
    pos = position(w, o_term)
    # w*r >= p - o*s (need) and w*r <= last + p - o*s (room), over o in [0, n_out)
    lo_needed = p > 0
    hi_needed = last + p - (n_out - 1) * s < (size - 1) * r
    if d == 1 and not lo_needed and not hi_needed:
        return Span(w, ZERO, K.Const(size), 1, pos, None, True, size)
    need = p - o_term
    room = (last + p) - o_term
    lo: K.Expr = ZERO
    hi: K.Expr = K.Const(size)
    if lo_needed:
        ceil = need if r == 1 else (need + (r - 1)) // r
        lo = kb.let(_sel(need.gt(0), ceil, 0), f"{name}_lo")
    if hi_needed:
        fl = room + 1 if r == 1 else room // r + 1
        hi = kb.let(_sel(room.lt(0), 0, _sel(room.ge((size - 1) * r), size, fl)), f"{name}_hi")
    step = 1
    if d > 1:  # w*r = need (mod d): w = w0 (mod d/g) when g = gcd(r, d) divides need
        g = gcd(r, d)
        step = d // g
        if g > 1:
            hi = kb.let(_sel((need % g).eq(0), hi, 0), f"{name}_hi")
        if step > 1:
            inv = pow(r // g, -1, step)
            w0 = need // g if g > 1 else need
            w0 = w0 * inv
            lo = kb.let(lo + _mod(_mod(w0, step) - lo, step), f"{name}_lo")
    if size == 1:  # a loop of at most one trip: the one window index lands or not
        w = K.Var(kb.fresh(name))
        pos = position(w, o_term)
    inside = NEVER if d > 1 else all_of([lo.eq(0) if lo_needed else None,
                                         hi.eq(size) if hi_needed else None])
    return Span(w, lo, hi, step, pos, inside, False, size)


def interior(spans: list[Span]) -> tuple[K.Expr, list[Span]] | None:
    """For spans that miss the input only near the borders (no base dilation): the
    condition under which every window index lands on input for the current output
    index, and the spans as full loops of constant trip count for that case (which
    compilers unroll); None when there is no such split to make."""
    cond = all_of(s.inside for s in spans)
    if cond is None or cond == NEVER:
        return None
    full = [s if s.full else replace(s, lo=ZERO, hi=K.Const(s.size), step=1, inside=None, full=True) for s in spans]
    return cond, full


def open_span(kb, span: Span, marks=(K.REDUCTION,)) -> tuple[K.Expr, int]:
    """Open the loop of `span` (none for a single constant index); returns the input index
    (a local inside the loop) and the number of loops opened."""
    if isinstance(span.w, K.Const):  # a single known window index
        if isinstance(span.pos, K.Const):
            return span.pos, 0
        return kb.let(span.pos, "pos"), 0
    kb.loop(span.w.name, span.hi, marks, start=span.lo, step=span.step)
    return kb.let(span.pos, "pos"), 1


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
    n = len(instr.operands) // 2
    ins = [kb.producers[o].array_shape for o in instr.operands[:n]]
    in_dims = ins[0].dims
    out_dims = outs[0].dims
    if 0 in out_dims:
        return
    wins = instr.attr("window").dims
    combine = f32_combiner(kb, instr) if n == 1 and ins[0].dtype == DTYPES["f32"] else None
    if combine is not None and len(in_dims) >= 2 and wins[-1] == WindowDim(1) and in_dims[-1] >= CHANNEL_VECTOR:
        _reduce_window_channels(kb, instr, outs[0], in_dims, out_dims, wins, combine)
        return
    fn = kb.scalar_function(instr.attr("to_apply"))
    types = [compute_type(a.dtype) for a in ins]
    # every output element is computed on its own: threads may split the output loops
    o_vars: list[K.Expr] = [kb.loop(kb.fresh(f"o{d}"), m, (K.PARALLEL,)) if m > 1 else ZERO
                            for d, m in enumerate(out_dims)]
    accs = [kb.local(types[k], kb.operand(instr, n + k, Index(())), f"acc{k}") for k in range(n)]
    misses = any(span_misses_input(o_vars[d], wd, in_dims[d]) for d, wd in enumerate(wins))
    spans = [] if misses else [window_span(kb, o_vars[d], wd, in_dims[d], out_dims[d], f"w{d}")
                               for d, wd in enumerate(wins)]

    def accumulate(sub: list[K.Expr]) -> None:
        xs = [kb.operand(instr, k, Index(in_dims, tuple(sub))) for k in range(n)]
        if n == 1:
            kb.assign(accs[0], K.Call(fn, (accs[0], xs[0]), types[0]))
        else:
            kb.emit(K.CallStmt(fn, tuple(accs) + tuple(xs) + tuple(K.Ptr(var=a) for a in accs)))

    if not misses:
        _over_windows(kb, spans, accumulate)
    lin = kb.linear(Index(out_dims, tuple(o_vars)))
    for k in range(n):
        kb.store(outs[k], lin, store_value(ins[k].dtype, accs[k]))
    for m in out_dims:
        if m > 1:
            kb.close()


def _over_windows(kb, spans: list[Span], body) -> None:
    """The loops over a window's positions, `body(positions)` inside: with constant trip
    counts where the window lies inside the input (an interior branch), else as clipped."""
    def nest(spans: list[Span]) -> None:
        opened, sub = 0, []
        for span in spans:
            pos, k = open_span(kb, span)
            opened += k
            sub.append(pos)
        body(sub)
        for _ in range(opened):
            kb.close()

    split = interior(spans)
    if split is None:
        nest(spans)
    else:
        kb.if_(split[0])
        nest(split[1])
        kb.else_()
        nest(spans)
        kb.close()


CHANNEL_VECTOR = 8  # a minor dimension at least this long, untouched by the window, is a vector loop


def _reduce_window_channels(kb, instr: Instruction, out: K.Buf, in_dims, out_dims, wins, combine) -> None:
    """A window over all dimensions but the minor one (a pool over NHWC): each window
    position combines a whole row of the minor dimension into the output row, which holds
    the running values, so the row is one vector loop. The reducer is one f32 op of its
    parameters (`f32_combiner`), applied in the same order as the scalar kernel."""
    rows = out_dims[:-1]
    o_vars: list[K.Expr] = [kb.loop(kb.fresh(f"o{d}"), m, (K.PARALLEL,)) if m > 1 else ZERO
                            for d, m in enumerate(rows)]
    row = kb.linear(Index(out_dims, tuple(o_vars) + (ZERO,)))
    init = kb.operand(instr, 1, Index(()))
    c = kb.loop(kb.fresh("c"), out_dims[-1], (K.VECTOR,))
    kb.store(out, row + c, init)
    kb.close()
    misses = any(span_misses_input(o_vars[d], wd, in_dims[d]) for d, wd in enumerate(wins[:-1]))
    spans = [] if misses else [window_span(kb, o_vars[d], wd, in_dims[d], out_dims[d], f"w{d}")
                               for d, wd in enumerate(wins[:-1])]

    def accumulate(sub: list[K.Expr]) -> None:
        c = kb.loop(kb.fresh("c"), out_dims[-1], (K.VECTOR,))
        x = kb.operand(instr, 0, Index(in_dims, tuple(sub) + (c,)))
        kb.store(out, row + c, combine(K.Load(out, row + c), x))
        kb.close()

    if not misses:
        _over_windows(kb, spans, accumulate)
    for m in rows:
        if m > 1:
            kb.close()


RULES.append(OpRule("reduce-window", shape=_reduce_window_shape, kernel=_reduce_window_kernel))

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


def conv_acc_type(instr: Instruction, lhs: ArrayShape, rhs: ArrayShape) -> DType:
    """The type a convolution accumulates in: f32 for every float width, f64 for f64."""
    odt = instr.array_shape.dtype
    if odt.kind == "float":
        return DTYPES["f64" if "f64" in (odt.name, lhs.dtype.name, rhs.dtype.name) else "f32"]
    return compute_type(odt)


def reversed_index(w: K.Expr, wd: WindowDim) -> K.Expr:
    """The kernel index window index `w` reads (the window may be reversed)."""
    return (wd.size - 1) - w if wd.reversal else w


def dot_terms(pairs) -> K.Expr:
    """sum of index * stride over (index, stride) pairs."""
    total: K.Expr = ZERO
    for v, stride in pairs:
        total = total + v * stride
    return total
