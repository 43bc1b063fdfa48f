"""Sort, topk and custom-call TopK: shape rules and emission.

All three order an index permutation of each slice with a stable bottom-up
merge sort (scratch from the arena), asking "does element b come before element
a", so equal elements keep their original order; then they permute (or, for
top-k, cut) the operands into the outputs. `sort` calls its comparator
computation as a C function; `topk` and custom-call TopK compare by XLA's total
order (-NaN < -inf < ... < +inf < +NaN) as XLA:CPU does, ties keeping the lower
index first; TopK's comparator computation is not called, as on XLA:CPU.
"""
from __future__ import annotations

from typing import Callable

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, TupleShape, row_major_strides
from .elementwise import _arr, suffix
from .registry import OpRule, ShapeError, register

_IDX = 8  # bytes of one permutation entry (int64_t)

# less(eb, ea) -> C condition "the element at linear index eb sorts before the one at ea"
Less = Callable[[str, str], str]


def emit_sorted_permutation(kb, n: int, less: Less, base: str, stride: int) -> str:
    """Emit a stable merge sort of positions 0..n-1 of one slice (elements at `base + p*stride`)
    into scratch; returns the C name of the int64_t array holding the sorted positions."""
    perm, tmp = kb.fresh("perm"), kb.fresh("tmp")
    kb.line(f"int64_t* {perm} = (int64_t*){kb.scratch};")
    kb.line(f"int64_t* {tmp} = {perm} + {n};")
    p = kb.fresh("p")
    kb.loop(p, n)
    kb.line(f"{perm}[{p}] = {p};")
    kb.close()
    w, lo = kb.fresh("width"), kb.fresh("lo")
    mid, hi, a, b, t = (kb.fresh(x) for x in ("mid", "hi", "a", "b", "t"))
    ea, eb = kb.fresh("ea"), kb.fresh("eb")

    def at(pos: str) -> str:
        return f"{base} + {pos} * {stride}" if stride != 1 else f"{base} + {pos}" if base != "0" else pos

    kb.open(f"for (int64_t {w} = 1; {w} < {n}; {w} *= 2)")
    kb.open(f"for (int64_t {lo} = 0; {lo} < {n}; {lo} += 2 * {w})")
    kb.line(f"const int64_t {mid} = {lo} + {w} < {n} ? {lo} + {w} : {n};")
    kb.line(f"const int64_t {hi} = {lo} + 2 * {w} < {n} ? {lo} + 2 * {w} : {n};")
    kb.line(f"int64_t {a} = {lo}, {b} = {mid}, {t} = {lo};")
    kb.open(f"while ({a} < {mid} && {b} < {hi})")
    kb.line(f"const int64_t {ea} = {at(f'{perm}[{a}]')};")
    kb.line(f"const int64_t {eb} = {at(f'{perm}[{b}]')};")
    cond = less(eb, ea)
    kb.line(f"{tmp}[{t}++] = ({cond}) ? {perm}[{b}++] : {perm}[{a}++];")
    kb.close()
    kb.line(f"while ({a} < {mid}) {tmp}[{t}++] = {perm}[{a}++];")
    kb.line(f"while ({b} < {hi}) {tmp}[{t}++] = {perm}[{b}++];")
    kb.close()
    sw = kb.fresh("swap")
    kb.line(f"int64_t* const {sw} = {perm};")
    kb.line(f"{perm} = {tmp};")
    kb.line(f"{tmp} = {sw};")
    kb.close()
    return perm


def emit_selected_top(kb, n: int, k: int, less: Less, base: str) -> str:
    """Emit a stable selection of the first k of positions 0..n-1 (elements at `base + p`) by
    insertion into a sorted list of k; returns the int64_t array of their positions in order.
    A later element moves ahead of a held one only if it sorts strictly before it."""
    top, cnt, i, q, ei = (kb.fresh(x) for x in ("top", "cnt", "i", "q", "ei"))
    at = (lambda pos: f"{base} + {pos}") if base != "0" else (lambda pos: pos)
    kb.line(f"int64_t* const {top} = (int64_t*){kb.scratch};")
    kb.line(f"int64_t {cnt} = 0;")
    kb.loop(i, n)
    kb.line(f"const int64_t {ei} = {at(i)};")
    kb.line(f"if ({cnt} == {k} && !({less(ei, at(f'{top}[{k - 1}]'))})) continue;")
    kb.line(f"int64_t {q} = {cnt} < {k} ? {cnt}++ : {k - 1};")
    kb.open(f"while ({q} > 0 && {less(ei, at(f'{top}[{q} - 1]'))})")
    kb.line(f"{top}[{q}] = {top}[{q} - 1];")
    kb.line(f"--{q};")
    kb.close()
    kb.line(f"{top}[{q}] = {i};")
    kb.close()
    return top


def _slice_loops(kb, dims: tuple[int, ...], skip: int) -> tuple[str, int]:
    """Open loops over every dimension but `skip`; returns (C base offset, number of loops)."""
    strides = row_major_strides(dims)
    terms, loops = [], 0
    for d, m in enumerate(dims):
        if d == skip or m == 1:
            continue
        v = kb.fresh(f"o{d}")
        kb.loop(v, m)
        loops += 1
        terms.append(v if strides[d] == 1 else f"{v} * {strides[d]}")
    base = kb.let("int64_t", " + ".join(terms), "base") if terms else "0"
    return base, loops


def _operand_value(kb, instr: Instruction, k: int, at: str) -> str:
    from .legacy_c import load_expr
    buf = kb.buffers[instr.operands[k]]
    return load_expr(buf.shape.dtype, f"{buf.cname}[{at}]")


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
    if not dims:
        for k, out in enumerate(outs):
            kb.line(f"{out.cname}[0] = {kb.buffers[instr.operands[k]].cname}[0];")
        return
    (d,) = instr.attr("dimensions")
    n, stride = dims[d], row_major_strides(dims)[d]
    fn = kb.scalar_function(instr.attr("to_apply"))
    nops = len(instr.operands)

    def less(eb: str, ea: str) -> str:
        args = []
        for k in range(nops):
            args += [_operand_value(kb, instr, k, eb), _operand_value(kb, instr, k, ea)]
        return f"{fn}({', '.join(args)})"

    base, loops = _slice_loops(kb, dims, d)
    perm = emit_sorted_permutation(kb, n, less, base, stride)
    j = kb.fresh("j")
    kb.loop(j, n)
    dst = f"{base} + {j} * {stride}" if stride != 1 else f"{base} + {j}"
    src = f"{base} + {perm}[{j}] * {stride}" if stride != 1 else f"{base} + {perm}[{j}]"
    for k, out in enumerate(outs):
        kb.line(f"{out.cname}[{dst}] = {kb.buffers[instr.operands[k]].cname}[{src}];")
    kb.close()
    for _ in range(loops):
        kb.close()


register(OpRule("sort", shape=_sort_shape, kernel=_sort_kernel, scratch_bytes=_sort_scratch,
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
    if instr.opcode == "custom-call" and instr.attr("custom_call_target") != "TopK":
        return 0
    if not isinstance(x, ArrayShape) or not x.rank:
        return 0
    k = _topk_k(instr)
    return _IDX * k if k <= _SELECT_MAX_K else 2 * _IDX * x.dims[-1]


def _emit_topk(kb, instr: Instruction, outs, less: Less) -> None:
    x = kb.producers[instr.operands[0]].array_shape
    vals, idxs = outs
    n, k = x.dims[-1], vals.shape.dims[-1]
    if k == 0 or x.size == 0:
        return
    rows = x.size // n
    r = kb.fresh("row")
    kb.loop(r, rows)
    base = kb.let("int64_t", f"{r} * {n}", "base") if rows > 1 else "0"
    if k <= _SELECT_MAX_K:
        perm = emit_selected_top(kb, n, k, less, base)
    else:
        perm = emit_sorted_permutation(kb, n, less, base, 1)
    j = kb.fresh("j")
    kb.loop(j, k)
    out_at = f"{r} * {k} + {j}" if rows > 1 else j
    src = f"{base} + {perm}[{j}]" if base != "0" else f"{perm}[{j}]"
    kb.line(f"{vals.cname}[{out_at}] = {kb.buffers[instr.operands[0]].cname}[{src}];")
    kb.line(f"{idxs.cname}[{out_at}] = (int32_t){perm}[{j}];")
    kb.close()
    kb.close()


def _topk_kernel(kb, instr: Instruction, outs) -> None:
    dt = kb.producers[instr.operands[0]].array_shape.dtype
    op = ">" if instr.opcode == "custom-call" or instr.attr("largest", True) else "<"

    def key(e: str) -> str:
        v = _operand_value(kb, instr, 0, e)
        return f"aotc_totalorder_{suffix(dt)}({v})" if dt.kind == "float" else v

    def less(eb: str, ea: str) -> str:
        return f"{key(eb)} {op} {key(ea)}"

    if dt.kind not in ("float", "sint", "uint", "pred"):
        raise ShapeError(f"{instr.opcode} of {dt.name} values is not supported")
    _emit_topk(kb, instr, outs, less)


register(OpRule("topk", shape=_topk_shape, kernel=_topk_kernel, scratch_bytes=_topk_scratch,
                buffered_operands=True))


def _custom_call_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    target = instr.attr("custom_call_target")
    if target != "TopK":
        return instr.shape  # checked when lowered: only TopK compiles
    if len(shapes) != 1:
        raise ShapeError(f"custom-call TopK takes one operand, got {len(shapes)}")
    x = _arr(shapes[0], "TopK operand")
    out = instr.shape
    if not isinstance(out, TupleShape) or len(out.elements) != 2 or not isinstance(out.elements[0], ArrayShape):
        raise ShapeError(f"custom-call TopK must return (values, s32 indices), declared {out}")
    if len(instr.called_computations()) != 1:
        raise ShapeError("custom-call TopK needs exactly one comparator in called_computations")
    return _topk_result(instr, x, out.elements[0].dims[-1] if out.elements[0].rank else 0)


def _custom_call_kernel(kb, instr: Instruction, outs) -> None:
    from ..errors import located
    target = instr.attr("custom_call_target")
    if target != "TopK":
        raise located(f"aotc cannot compile custom-call target \"{target}\" (instruction {instr.name}); "
                      f"only \"TopK\" is supported", instr.loc)
    # XLA:CPU's TopK runtime ignores the comparator (XLA only forms TopK from a
    # total-order greater-than sort): largest first in total order, ties by index
    _topk_kernel(kb, instr, outs)


register(OpRule("custom-call", shape=_custom_call_shape, kernel=_custom_call_kernel, scratch_bytes=_topk_scratch,
                buffered_operands=True))
