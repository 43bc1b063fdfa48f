"""Sort, topk and custom-call TopK: shape rules and emission.

All three order an index permutation of each slice with a stable bottom-up
merge sort (scratch from the arena; a top-k of at most 16 selects by insertion
instead), asking "does element b come before element a", so equal elements
keep their original order; then they permute (or, for top-k, cut) the operands
into the outputs. The kernels are kernel IR: `while` loops are `Repeat`s left
by `Break`, the comparator a call of its scalar function. `sort` calls its comparator
computation as a C function; `topk` and custom-call TopK compare by XLA's total
order (-NaN < -inf < ... < +inf < +NaN) as XLA:CPU does, ties keeping the lower
index first; TopK's comparator computation is not called, as on XLA:CPU. The TopK
custom-call target is defined here (a rule with `target`), gathered by the registry.
"""
from __future__ import annotations

from typing import Callable

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, TupleShape, row_major_strides
from ..kernel import ir as K
from ..kernel.builder import load_value
from .elementwise import _arr, suffix
from .rule import OpRule, ShapeError
from ..hlo.opcodes import Op

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_IDX = 8  # bytes of one permutation entry (int64_t)
S64 = DTYPES["s64"]

# less(eb, ea) -> "the element at linear index eb sorts before the one at ea"
Less = Callable[[K.Expr, K.Expr], K.Expr]
# at(pos) -> the linear index of a slice's element at position pos
At = Callable[[K.Expr], K.Expr]


def _index_array(kb, base: str, init: K.Expr, mutable: bool) -> tuple[K.Var, K.Buf]:
    """A local `int64_t*` (bound once, or reassignable) and the array it points to."""
    v = K.Var(kb.fresh(base), None)
    kb.emit(K.Decl(v, init) if mutable else K.Let(v, init))
    return v, K.Buf(v.name, S64)


def _scratch_indices(kb) -> K.Ptr:
    return K.Ptr(kb.scratch, K.Const(0), elem=S64, byte_view=True)


def _both(a: K.Expr, b: K.Expr) -> K.Expr:
    return K.Binary("&&", a, b, K.BOOL)


def emit_sorted_permutation(kb, n: int, less: Less, at: At) -> K.Buf:
    """Emit a stable merge sort of positions 0..n-1 of one slice (elements at `at(p)`) into
    scratch; returns the int64_t array holding the sorted positions."""
    perm_v, perm = _index_array(kb, "perm", _scratch_indices(kb), True)
    tmp_v, tmp = _index_array(kb, "tmp", K.Ptr(perm, K.Const(n)), True)
    p = kb.loop(kb.fresh("p"), n)
    kb.store(perm, p, p)
    kb.close()
    w = kb.local(S64, K.Const(1), "width")
    kb.while_(w.lt(n))
    span = kb.let(w * 2, "span")  # two runs of `width` merge into one
    lo = kb.local(S64, K.Const(0), "lo")
    kb.while_(lo.lt(n))
    mid = kb.let(K.Call("aotc_min_s64", (lo + w, K.Const(n)), S64), "mid")
    hi = kb.let(K.Call("aotc_min_s64", (lo + span, K.Const(n)), S64), "hi")
    a, b, t = kb.local(S64, lo, "a"), kb.local(S64, mid, "b"), kb.local(S64, lo, "t")
    kb.while_(_both(a.lt(mid), b.lt(hi)))
    ea = kb.let(at(K.Load(perm, a)), "ea")
    eb = kb.let(at(K.Load(perm, b)), "eb")
    kb.if_(less(eb, ea))  # only a strictly earlier element overtakes: equal ones keep their order
    _take(kb, tmp, t, perm, b)
    kb.else_()
    _take(kb, tmp, t, perm, a)
    kb.close()
    kb.assign(t, t + 1)
    kb.close()
    for src, end in ((a, mid), (b, hi)):  # the rest of the run not yet used up
        kb.while_(src.lt(end))
        _take(kb, tmp, t, perm, src)
        kb.assign(t, t + 1)
        kb.close()
    kb.assign(lo, lo + span)
    kb.close()
    swap = kb.let(K.Ptr(perm), "swap")
    kb.assign(perm_v, K.Ptr(tmp))
    kb.assign(tmp_v, swap)
    kb.assign(w, span)
    kb.close()
    return perm


def _take(kb, dst: K.Buf, t: K.Var, src: K.Buf, s: K.Var) -> None:
    """dst[t] = src[s], then s moves on."""
    kb.store(dst, t, K.Load(src, s))
    kb.assign(s, s + 1)


def emit_selected_top(kb, n: int, k: int, less: Less, at: At) -> K.Buf:
    """Emit a stable selection of the first k of positions 0..n-1 (elements at `at(p)`) by
    insertion into a sorted list of k; returns the int64_t array of their positions in order.
    A later element moves ahead of a held one only if it sorts strictly before it."""
    _, top = _index_array(kb, "top", _scratch_indices(kb), False)
    cnt = kb.local(S64, K.Const(0), "cnt")
    i = kb.loop(kb.fresh("i"), n)
    ei = kb.let(at(i), "ei")
    # a full list takes only an element sorting before its last one (cnt never exceeds k)
    kb.if_(K.Binary("||", cnt.lt(k), less(ei, at(K.Load(top, K.Const(k - 1)))), K.BOOL))
    kb.if_(cnt.lt(k))
    kb.assign(cnt, cnt + 1)
    kb.close()
    q = kb.local(S64, cnt - 1, "q")  # the free slot: the next one, or the last one's
    kb.while_(_both(q.gt(0), less(ei, at(K.Load(top, q - 1)))))
    kb.store(top, q, K.Load(top, q - 1))
    kb.assign(q, q - 1)
    kb.close()
    kb.store(top, q, i)
    kb.close()
    kb.close()
    return top


def _slice_loops(kb, dims: tuple[int, ...], skip: int) -> tuple[K.Expr, int]:
    """Open loops over every dimension but `skip`; returns (base offset, number of loops)."""
    strides = row_major_strides(dims)
    base: K.Expr = K.Const(0)
    loops = 0
    for d, m in enumerate(dims):
        if d == skip or m == 1:
            continue
        v = kb.loop(kb.fresh(f"o{d}"), m)
        loops += 1
        base = base + v * strides[d]
    return kb.let(base, "base"), loops


def _operand_value(kb, instr: Instruction, k: int, at: K.Expr) -> K.Expr:
    buf = kb.buffers[instr.operands[k]]
    return load_value(buf.dtype, K.Load(buf, at))


# ------------------------------------------------------------------ sort


def _sort_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if not shapes:
        raise ShapeError("sort needs at least one operand")
    arrs = [_arr(s, f"sort operand {k}") for k, s in enumerate(shapes)]
    for k, a in enumerate(arrs):
        if a.dims != arrs[0].dims:
            raise ShapeError(f"sort operand {k} {a.text(False)} does not match operand 0 {arrs[0].text(False)}")
    dims = instr.attr("dimensions")
    if dims is None or len(dims) != 1:
        raise ShapeError("sort needs dimensions={d} with exactly one dimension")
    if not 0 <= dims[0] < max(arrs[0].rank, 1):
        raise ShapeError(f"sort dimension {dims[0]} is out of range for rank {arrs[0].rank}")
    if instr.attr("to_apply") is None:
        raise ShapeError("sort needs a to_apply comparator")
    outs = tuple(a.with_layout(None) for a in arrs)
    return outs[0] if len(outs) == 1 else TupleShape(outs)


def _sort_length(instr: Instruction, shapes: list[Shape]) -> int:
    a = shapes[0]
    return a.dims[instr.attr("dimensions")[0]] if isinstance(a, ArrayShape) and a.rank else 1


def _sort_scratch(instr: Instruction, shapes: list[Shape]) -> int:
    return 2 * _IDX * _sort_length(instr, shapes)


def _sort_kernel(kb, instr: Instruction, outs) -> None:
    shapes = [kb.producers[o].array_shape for o in instr.operands]
    dims = shapes[0].dims
    if shapes[0].size == 0:
        return
    srcs = [kb.buffers[o] for o in instr.operands]
    if not dims:
        for src, out in zip(srcs, outs):
            kb.store(out, K.Const(0), K.Load(src, K.Const(0)))
        return
    (d,) = instr.attr("dimensions")
    n, stride = dims[d], row_major_strides(dims)[d]
    fn = kb.scalar_function(instr.attr("to_apply"))
    nops = len(instr.operands)

    def less(eb: K.Expr, ea: K.Expr) -> K.Expr:
        args: list[K.Expr] = []
        for k in range(nops):
            args += [_operand_value(kb, instr, k, eb), _operand_value(kb, instr, k, ea)]
        return K.Call(fn, tuple(args), K.BOOL)

    base, loops = _slice_loops(kb, dims, d)
    perm = emit_sorted_permutation(kb, n, less, lambda pos: base + pos * stride)
    j = kb.loop(kb.fresh("j"), n)
    for src, out in zip(srcs, outs):  # the stored elements, permuted (halves as their bits)
        kb.store(out, base + j * stride, K.Load(src, base + K.Load(perm, j) * stride))
    kb.close()
    for _ in range(loops):
        kb.close()


RULES.append(OpRule("sort", shape=_sort_shape, kernel=_sort_kernel, scratch_bytes=_sort_scratch,
                buffered_operands=True))

# ------------------------------------------------------------------ topk / custom-call TopK


def _topk_result(instr: Instruction, x: ArrayShape, k: int) -> Shape:
    if x.rank < 1:
        raise ShapeError(f"top-k needs an operand of rank >= 1, got {x.text(False)}")
    if not 0 <= k <= x.dims[-1]:
        raise ShapeError(f"top-k k={k} is out of range for the last dimension of {x.text(False)}")
    dims = x.dims[:-1] + (k,)
    return TupleShape((ArrayShape(x.dtype, dims), ArrayShape(DTYPES["s32"], dims)))


def _topk_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    x = _arr(shapes[0], "topk operand")
    k = instr.attr("k")
    if k is None:
        raise ShapeError("topk needs a k attribute")
    return _topk_result(instr, x, k)


# top-k by insertion (n compares, plus up to k per insertion) instead of a full sort
_SELECT_MAX_K = 16


def _topk_k(instr: Instruction) -> int:
    out = instr.shape
    return out.elements[0].dims[-1] if isinstance(out, TupleShape) and out.elements[0].rank else 0


def _topk_scratch(instr: Instruction, shapes: list[Shape]) -> int:
    x = shapes[0]
    if not isinstance(x, ArrayShape) or not x.rank:
        return 0
    k = _topk_k(instr)
    return _IDX * k if k <= _SELECT_MAX_K else 2 * _IDX * x.dims[-1]


def _emit_topk(kb, instr: Instruction, outs, less: Less) -> None:
    x = kb.producers[instr.operands[0]].array_shape
    vals, idxs = outs
    n, k = x.dims[-1], vals.dims[-1]
    if k == 0 or x.size == 0:
        return
    rows = x.size // n
    r = kb.loop(kb.fresh("row"), rows)
    base = kb.let(r * n, "base") if rows > 1 else K.Const(0)
    if k <= _SELECT_MAX_K:
        perm = emit_selected_top(kb, n, k, less, lambda pos: base + pos)
    else:
        perm = emit_sorted_permutation(kb, n, less, lambda pos: base + pos)
    j = kb.loop(kb.fresh("j"), k)
    out_at = r * k + j if rows > 1 else j
    src = kb.buffers[instr.operands[0]]
    kb.store(vals, out_at, K.Load(src, base + K.Load(perm, j)))
    kb.store(idxs, out_at, K.Cast(K.Load(perm, j), idxs.dtype))
    kb.close()
    kb.close()


def _topk_kernel(kb, instr: Instruction, outs) -> None:
    dt = kb.producers[instr.operands[0]].array_shape.dtype
    op = ">" if instr.opcode == Op.CUSTOM_CALL or instr.attr("largest", True) else "<"

    def key(e: K.Expr) -> K.Expr:
        v = _operand_value(kb, instr, 0, e)
        if dt.kind != "float":
            return v
        sfx = suffix(dt)  # the key's signed integer order is XLA's total order
        return K.Call(f"aotc_totalorder_{sfx}", (v,), DTYPES["s64" if sfx == "f64" else "s32"])

    def less(eb: K.Expr, ea: K.Expr) -> K.Expr:
        return K.Binary(op, key(eb), key(ea), K.BOOL)

    if dt.kind not in ("float", "sint", "uint", "pred"):
        raise ShapeError(f"{instr.opcode} of {dt.name} values is not supported")
    _emit_topk(kb, instr, outs, less)


RULES.append(OpRule("topk", shape=_topk_shape, kernel=_topk_kernel, scratch_bytes=_topk_scratch,
                buffered_operands=True))


def _topk_target_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 1:
        raise ShapeError(f"custom-call TopK takes one operand, got {len(shapes)}")
    x = _arr(shapes[0], "TopK operand")
    out = instr.shape
    if not isinstance(out, TupleShape) or len(out.elements) != 2 or not isinstance(out.elements[0], ArrayShape):
        raise ShapeError(f"custom-call TopK must return (values, s32 indices), declared {out}")
    if len(instr.called_computations()) != 1:
        raise ShapeError("custom-call TopK needs exactly one comparator in called_computations")
    return _topk_result(instr, x, out.elements[0].dims[-1] if out.elements[0].rank else 0)


# custom-call TopK: XLA:CPU's TopK runtime ignores the comparator (XLA only forms TopK from
# a total-order greater-than sort): largest first in total order, ties by index
RULES.append(OpRule("custom-call", target="TopK", shape=_topk_target_shape, kernel=_topk_kernel,
                    scratch_bytes=_topk_scratch, buffered_operands=True))
