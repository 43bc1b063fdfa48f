"""Window geometry shared by the windowed ops (reduce_window.py, select_and_scatter.py,
convolution.py), and the order XLA:CPU visits a window's positions in.

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
from ..hlo.shape import ArrayShape
from ..kernel import ir as K
from ..kernel.builder import compute_type
from .rule import ShapeError

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
    size: int  # the window size (the end of the loop when every index lands)
    first: int = 0  # the start of that loop (a part of the window: `over_windows`)


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
    full = [s if s.full else replace(s, lo=K.Const(s.first), hi=K.Const(s.size), step=1, inside=None, full=True)
            for s in spans]
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


def peeled_dim(in_dims, out_dims, wins) -> int | None:
    """The window dimension XLA:CPU's loop emitter peels, which sets the order a window's
    positions are visited in (and so which of tied elements a select-and-scatter picks, and
    the bits of a sum). XLA's EmitLoopNest scans the window dimensions from the last while
    the product of their trip counts so far is under 64, and peels the first one whose
    window index is constrained in XLA's simplified indexing map and no longer constrained
    once its last index is taken off (`_constrained`): all positions with a smaller index in
    that dimension are visited first (row-major), then those at the last index (row-major).
    None: no peel, plain row-major order."""
    cumulative = 1
    for d in range(len(wins) - 1, -1, -1):
        if cumulative >= 64:
            break
        w, n, out = wins[d], in_dims[d], out_dims[d]
        cumulative *= _trip_count(w, n, out)
        if w.size < 2 or n == 0 or out == 0:
            continue
        if _constrained(w, n, out - 1, w.size - 1) and not _constrained(w, n, out - 1, w.size - 2):
            return d
    return None


def _constrained(w: WindowDim, n: int, o_hi: int, w_hi: int) -> bool:
    """Whether window index k in [0, w_hi] stays in the constraint XLA's IndexingMap::Simplify
    leaves for `stride*o + rhs_dilate*k - pad_lo` within the input (o in [0, o_hi]): a
    single-valued o or k leaves a bound on the other alone; a constraint always met goes;
    and with no low padding, `g*a + b in [0, ub]` whose bound on a is the same for every b
    becomes a bound on a (XLA's SimplifyAddConstraint)."""
    if w_hi <= 0 or o_hi <= 0:
        return False
    if w.lhs_dilate > 1:
        return True  # the dilation's mod constraint
    ub = n - 1
    if -w.pad_lo >= 0 and w.stride * o_hi + w.rhs_dilate * w_hi - w.pad_lo <= ub:
        return False
    if w.pad_lo != 0:
        return True
    s, r = w.stride, w.rhs_dilate
    while True:
        scaled = [c for c in (s, r) if c > 1]
        g = reduce(gcd, scaled) if scaled else 1
        if g == 1:
            return True
        if s > 1 and r > 1:  # both terms scale: the constraint shrinks by g
            s, r, ub = s // g, r // g, ub // g
            if s * o_hi + r * w_hi <= ub:
                return False
            continue
        rest = w_hi if s > 1 else o_hi  # the range of the unscaled term, from 0
        return (ub - rest) // g != ub // g


def _trip_count(w: WindowDim, n: int, out: int) -> int:
    """The window index's trip count in XLA's simplified map (a single output index bounds
    the window index to the positions that land)."""
    if out != 1:
        return w.size
    last = (n - 1) * w.lhs_dilate
    lands = [k for k in range(w.size) if 0 <= k * w.rhs_dilate - w.pad_lo <= last
             and (k * w.rhs_dilate - w.pad_lo) % w.lhs_dilate == 0]
    return lands[-1] - lands[0] + 1 if lands else 0


def over_windows(kb, spans: list[Span], body, peel: int | None = None) -> None:
    """The loops over a window's positions, `body(positions)` inside, in XLA:CPU's order:
    row-major, or with dimension `peel` (`peeled_dim`) split into its positions before the
    last and its last position, each part a row-major nest of its own."""
    if peel is None or isinstance(spans[peel].w, K.Const):
        _over_windows(kb, spans, body)
        return
    span = spans[peel]
    last = span.size - 1
    whole = span.inside is None
    head = replace(span, hi=_sel(span.hi.lt(last), span.hi, last), size=last, full=span.full,
                   inside=None if whole else all_of([span.inside if span.inside == NEVER else None,
                                                     span.lo.eq(0), span.hi.ge(last)]))
    starts = K.Binary("&&", span.lo.le(last), ((last - span.lo) % span.step).eq(0), K.BOOL) if span.step > 1 \
        else span.lo.le(last)
    tail = replace(span, lo=_sel(starts, last, span.hi), first=last, full=False,
                   inside=None if whole else all_of([span.inside if span.inside == NEVER else None,
                                                     starts, span.hi.eq(span.size)]))
    _over_windows(kb, spans[:peel] + [head] + spans[peel + 1:], body)
    _over_windows(kb, spans[:peel] + [tail] + spans[peel + 1:], body)


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
