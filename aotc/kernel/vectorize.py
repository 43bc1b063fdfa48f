"""Choosing the loops that run as a vector body plus a scalar tail.

An innermost loop marked `vector` is marked `simd` when every value it computes
from its variable is f32 arithmetic of the runtime's SIMD vocabulary
(runtime_c/aotc_simd.h, the same bits as the scalar helpers), every such load
and store is contiguous in the loop variable, and no buffer is read at another
element than the one the loop writes. A pred value (0 or 1) computed from the
loop variable is a lane mask when it compares f32 vector values (< <= > >= ==,
false on NaN as in C) or combines masks with & and |; a select on a mask picks
lane by lane. Lanes are independent elements, so the
width changes nothing in the results: a loop whose count is unknown, a multiple
of 16 (such as the 16 partial results of a reduction) or at least
`WIDE_MIN_TRIP` is also marked `wide`, and runs at the widest width the target
has (16 lanes with AVX-512, else 8); a short one runs 8 lanes. A long or
unknown-length `wide` loop whose body calls a long-latency function of the
vocabulary (exp, tanh, log, sqrt, a division...) is also marked `interleave`:
its vector body runs INTERLEAVE_COPIES independent vectors per trip, their
statements interleaved, so the chains of several vectors overlap where the core
would otherwise wait on one (a loop of one vector per trip issued a 10-op chain
with exp and tanh at 5 cycles per element on Zen 3, 3.5 interleaved by four). A
loop stepping over blocks of lanes that such an inner loop runs (a reduction's
lane loop, `strided_lanes`) is marked `interleave` too: it runs that many blocks
per trip. The
printer writes the vector body and the scalar tail; this pass only decides.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from . import ir as K
from .simplify import terms

F32 = DTYPES["f32"]
SIMD = "simd"
WIDE = "wide"
INTERLEAVE = "interleave"
INTERLEAVE_COPIES = 4  # vectors per trip of an `interleave` loop
# calls and operators whose latency is long enough for interleaving to pay
LONG_LATENCY_CALLS = frozenset({"aotc_exp_f32", "aotc_exp_nonpos_f32", "aotc_tanh_f32", "aotc_logistic_f32", "aotc_log_f32",
                                "aotc_erf_f32", "aotc_sqrt_f32", "aotc_rsqrt_f32"})
LANES = 8  # the width of a loop not marked `wide`
WIDE_MIN_TRIP = 32
WIDE_MULTIPLE = 16  # every width the vocabulary has divides it

# scalar helper -> the name of its vector form in the vocabulary (aotc_v8_exp, aotc_vf_exp)
VECTOR_CALLS = {
    "aotc_exp_f32": "exp", "aotc_exp_nonpos_f32": "exp_nonpos", "aotc_tanh_f32": "tanh", "aotc_logistic_f32": "logistic", "aotc_log_f32": "log",
    "aotc_erf_f32": "erf", "aotc_max_f32": "max", "aotc_min_f32": "min", "aotc_sqrt_f32": "sqrt",
    "aotc_rsqrt_f32": "rsqrt", "aotc_abs_f32": "abs", "aotc_neg_f32": "neg",
    "aotc_pick_gt_f32": "pick_gt", "aotc_pick_lt_f32": "pick_lt", "aotc_flag_nan_f32": "flag_nan",
    "aotc_fma_f32": "fma",
}
VECTOR_BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
# comparison -> (vocabulary name, operands swapped); each is false when a lane is NaN, as in C
MASK_COMPARE = {"<": ("lt", False), ">": ("gt", False), ">=": ("ge", False), "<=": ("ge", True),
                "==": ("eq", False)}
MASK_LOGIC = {"&": "and", "|": "or"}
MASK_TYPES = (DTYPES["u8"], DTYPES["pred"])


def mark_simd(body: tuple[K.Stmt, ...]) -> tuple[tuple[K.Stmt, ...], bool]:
    out, changed = [], False
    for s in body:
        if isinstance(s, K.Loop):
            inner, c = mark_simd(s.body)
            s = K.Loop(s.var, s.start, s.stop, inner, s.step, s.marks)
            changed |= c
            if K.VECTOR in s.marks and SIMD not in s.marks and vectorizable(s):
                wide = {WIDE} if s.trip < 0 or s.trip % WIDE_MULTIPLE == 0 or s.trip >= WIDE_MIN_TRIP else set()
                if wide and (s.trip < 0 or s.trip >= INTERLEAVE_COPIES * WIDE_MULTIPLE) and long_latency(s.body):
                    wide.add(INTERLEAVE)
                s = K.Loop(s.var, s.start, s.stop, s.body, s.step, s.marks | {SIMD} | wide)
                changed = True
            elif INTERLEAVE not in s.marks and strided_lanes(s):
                s = K.Loop(s.var, s.start, s.stop, s.body, s.step, s.marks | {INTERLEAVE})
                changed = True
        elif isinstance(s, K.If):
            t, c1 = mark_simd(s.then)
            e, c2 = mark_simd(s.orelse)
            s, changed = K.If(s.cond, t, e), changed or c1 or c2
        out.append(s)
    return tuple(out), changed


def strided_lanes(s: K.Loop) -> bool:
    """Whether `s` steps over blocks of lanes that its one inner loop runs as whole widest
    vectors with a long-latency body (a reduction's lane loop: `for j step 16 { for l < 16
    { lane[l] = lane[l] + f(x[j + l]) } }`), at least INTERLEAVE_COPIES blocks of a static
    count: then INTERLEAVE_COPIES blocks run per trip of `s`, their f interleaved and the
    lanes still updated block after block."""
    body = [b for b in s.body if not isinstance(b, K.Comment)]
    if len(body) != 1 or not isinstance(body[0], K.Loop) or s.trip < INTERLEAVE_COPIES:
        return False
    inner = body[0]
    vec = vector_vars(inner)
    return (SIMD in inner.marks and WIDE in inner.marks and inner.start == K.Const(0) and inner.trip == s.step
            and s.step % WIDE_MULTIPLE == 0 and long_latency(inner.body)
            and all(not isinstance(b, K.Let) or b.var.name in vec for b in inner.body))


def long_latency(body: tuple[K.Stmt, ...]) -> bool:
    """Whether a value the loop body computes calls a long-latency function or divides."""
    return any(isinstance(n, K.Call) and n.fn in LONG_LATENCY_CALLS or isinstance(n, K.Binary) and n.op == "/"
               for s in body for e in K.stmt_exprs(s) for n in K.nodes(e))


def vector_vars(loop: K.Loop) -> set[str]:
    """The loop variable and the locals of its body that vary with it (lane by lane)."""
    names = {loop.var.name}
    for s in loop.body:
        if isinstance(s, K.Let) and K.free_vars(s.value) & names:
            names.add(s.var.name)
    return names


def contiguous(index: K.Expr, var: str, vec: set[str]) -> bool:
    """Whether `index` is the loop variable plus something that does not vary with it."""
    t = terms(index, {})
    hits = [(a, c) for a, c in t.items() if K.free_vars(a) & vec]
    return len(hits) == 1 and hits[0][1] == 1 and hits[0][0] == K.Var(var)


def vectorizable(loop: K.Loop) -> bool:
    if loop.step != 1 or (0 <= loop.trip < LANES):
        return False
    var = loop.var.name
    vec = vector_vars(loop)
    stored: dict[str, K.Expr] = {}
    loaded: dict[str, set] = {}
    masks: set[str] = set()
    for s in loop.body:
        if isinstance(s, K.Comment):
            continue
        if isinstance(s, K.Let):
            if s.var.name in vec and s.value.ty in MASK_TYPES:
                if not is_mask(s.value, vec, masks, lambda x: _vector_expr(x, var, vec, loaded, masks)):
                    return False
                masks.add(s.var.name)
            elif s.var.name in vec and not _vector_expr(s.value, var, vec, loaded, masks):
                return False
            continue
        if isinstance(s, K.Store):
            if s.buf.dtype != F32 or not contiguous(s.index, var, vec) or s.buf.name in stored:
                return False
            if K.free_vars(s.value) & vec and not _vector_expr(s.value, var, vec, loaded, masks):
                return False
            if not K.free_vars(s.value) & vec and s.value.ty != F32:
                return False
            stored[s.buf.name] = s.index
            continue
        return False
    # a buffer the loop writes is read only at the element it writes
    return all(idxs <= {stored[b]} for b, idxs in loaded.items() if b in stored)


def is_mask(e: K.Expr, vec: set[str], masks: set[str], vector) -> bool:
    """Whether the lane-varying pred value `e` is a lane mask: a mask variable, a comparison
    of f32 values `vector` accepts, or & / | of masks (each possibly cast to u8)."""
    if isinstance(e, K.Cast) and e.ty in MASK_TYPES:
        e = e.a
    if isinstance(e, K.Var):
        return e.name in masks
    if not isinstance(e, K.Binary) or not K.free_vars(e) & vec:
        return False
    if e.op in MASK_COMPARE:
        return e.a.ty == F32 and e.b.ty == F32 and vector(e.a) and vector(e.b)
    if e.op in MASK_LOGIC and e.ty in MASK_TYPES:
        return all(bool(K.free_vars(x) & vec) and is_mask(x, vec, masks, vector) for x in (e.a, e.b))
    return False


def _vector_expr(e: K.Expr, var: str, vec: set[str], loaded: dict[str, set], masks: set[str] = frozenset()) -> bool:
    """Whether the lane-varying expression `e` is f32 arithmetic of the vocabulary."""
    if not K.free_vars(e) & vec:
        for ld in K.loads(e):
            loaded.setdefault(ld.buf.name, set()).add(ld.index)
        return e.ty == F32
    if e.ty != F32:
        return False
    if isinstance(e, K.Var):
        return True
    if isinstance(e, K.Load):
        loaded.setdefault(e.buf.name, set()).add(e.index)
        return contiguous(e.index, var, vec)
    if isinstance(e, K.Binary):
        return e.op in VECTOR_BINARY and all(_vector_expr(x, var, vec, loaded, masks) for x in (e.a, e.b))
    if isinstance(e, K.Call):
        return e.fn in VECTOR_CALLS and all(_vector_expr(x, var, vec, loaded, masks) for x in e.args)
    if isinstance(e, K.Select):
        return (bool(K.free_vars(e.cond) & vec)
                and is_mask(e.cond, vec, masks, lambda x: _vector_expr(x, var, vec, loaded, masks))
                and all(_vector_expr(x, var, vec, loaded, masks) for x in (e.a, e.b)))
    return False
