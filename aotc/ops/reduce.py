"""Reduce (incl. variadic): shape rule and emission.

The reducer computation becomes a small static C function (see
`aotc.lower.scalar_fn`); the kernel loops over the kept dimensions, holds one
accumulator per operand, and walks the reduced dimensions innermost, reading
inputs through the element expressions so elementwise producers fuse in.
"""
from __future__ import annotations

from ..hlo.ir import Instruction
from ..hlo.shape import ArrayShape, Shape, TupleShape
from .elementwise import _arr
from .registry import OpRule, ShapeError, register


def _reduce_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) % 2 or not shapes:
        raise ShapeError("reduce needs N operands followed by N init values")
    n = len(shapes) // 2
    ins = [_arr(s, f"operand {k}") for k, s in enumerate(shapes[:n])]
    inits = [_arr(s, f"init {k}") for k, s in enumerate(shapes[n:])]
    dims = instr.attr("dimensions")
    if dims is None:
        raise ShapeError("reduce needs a dimensions attribute")
    for d in dims:
        if not 0 <= d < ins[0].rank:
            raise ShapeError(f"dimensions value {d} is out of range for rank {ins[0].rank}")
    for k, (a, i) in enumerate(zip(ins, inits)):
        if a.dims != ins[0].dims:
            raise ShapeError(f"reduce operand {k} {a.text(False)} does not match {ins[0].text(False)}")
        if i.rank != 0 or i.dtype != a.dtype:
            raise ShapeError(f"reduce init {k} must be a {a.dtype.name} scalar, got {i.text(False)}")
    kept = tuple(n for d, n in enumerate(ins[0].dims) if d not in dims)
    outs = tuple(ArrayShape(a.dtype, kept) for a in ins)
    return outs[0] if n == 1 else TupleShape(outs)


def _reduce_kernel(kb, instr: Instruction, outs) -> None:
    from ..lower.elemental import Index, compute_ctype, store_expr
    n = len(instr.operands) // 2
    ins = [kb.producers[o] for o in instr.operands[:n]]
    in_dims = ins[0].array_shape.dims
    rdims = tuple(instr.attr("dimensions"))
    kept = [d for d in range(len(in_dims)) if d not in rdims]
    fn = kb.scalar_function(instr.attr("to_apply"))
    o_vars = []
    for j, d in enumerate(kept):
        kb.loop(f"o{j}", in_dims[d])
        o_vars.append(f"o{j}")
    accs = []
    for k in range(n):
        init = kb.operand(instr, n + k, Index(()))
        acc = kb.fresh(f"acc{k}")
        kb.line(f"{compute_ctype(ins[k].array_shape.dtype)} {acc} = {init};")
        accs.append(acc)
    sub = [""] * len(in_dims)
    for j, d in enumerate(kept):
        sub[d] = o_vars[j]
    laned = n == 1 and bool(rdims) and _lanes_apply(kb, instr, in_dims, rdims)
    if laned:
        _lane_reduction(kb, instr, in_dims, sorted(rdims), sub, accs[0], fn)
        rdims = ()  # its loops are closed already
    else:
        for j, d in enumerate(rdims):
            kb.loop(f"r{j}", in_dims[d])
            sub[d] = f"r{j}"
    xs = [] if laned else [kb.operand(instr, k, Index(in_dims, tuple(sub))) for k in range(n)]
    if laned:
        pass  # reduced in lanes above
    elif not rdims:
        # XLA returns the operands of a reduce over no dimensions unchanged (no reducer call)
        for acc, x in zip(accs, xs):
            kb.line(f"{acc} = {x};")
    elif n == 1:
        kb.line(f"{accs[0]} = {fn}({accs[0]}, {xs[0]});")
    else:
        ptrs = ", ".join(f"&{a}" for a in accs)
        kb.line(f"{fn}({', '.join(accs)}, {', '.join(xs)}, {ptrs});")
    for _ in rdims:
        kb.close()
    out_dims = tuple(in_dims[d] for d in kept)
    lin = kb.linear(Index(out_dims, tuple(o_vars)))
    for k in range(n):
        kb.line(f"{outs[k].cname}[{lin}] = {store_expr(ins[k].array_shape.dtype, accs[k])};")
    for _ in kept:
        kb.close()


# reductions whose combiner is one of these associative, commutative ops of its two
# parameters keep LANES partial results (vectorizable; XLA:CPU reassociates too)
_ASSOCIATIVE = frozenset({"add", "multiply", "maximum", "minimum", "and", "or"})
LANES = 8


def _lanes_apply(kb, instr: Instruction, in_dims, rdims) -> bool:
    if kb.scalar_computation is None:
        return False
    comp = kb.scalar_computation(instr.attr("to_apply"))
    root = comp.root_instruction
    params = {p.name for p in comp.parameters}
    simple = (root.opcode in _ASSOCIATIVE and len(comp.instructions) == 3 and set(root.operands) == params
              and len(params) == 2)
    last = len(in_dims) - 1
    return simple and max(rdims) == last and in_dims[last] >= 2 * LANES


def _lane_reduction(kb, instr: Instruction, in_dims, rdims, sub, acc: str, fn: str) -> None:
    """acc = fold of fn over the reduced dimensions, the innermost (contiguous) one in
    LANES interleaved partial results combined at the end."""
    from ..lower.elemental import Index, compute_ctype
    ctype = compute_ctype(kb.producers[instr.operands[0]].array_shape.dtype)
    lanes = kb.fresh("lane")
    kb.line(f"{ctype} {lanes}[{LANES}];")
    kb.line(f"for (int l = 0; l < {LANES}; ++l) {lanes}[l] = {acc};")
    *outer, inner = rdims
    for j, d in enumerate(outer):
        kb.loop(f"r{j}", in_dims[d])
        sub[d] = f"r{j}"
    n = in_dims[inner]
    kb.line("int64_t j = 0;")
    kb.open(f"for (; j + {LANES} <= {n}; j += {LANES})")
    kb.loop("l", LANES)
    sub[inner] = "(j + l)"
    x = kb.operand(instr, 0, Index(in_dims, tuple(sub)))
    kb.line(f"{lanes}[l] = {fn}({lanes}[l], {x});")
    kb.close()
    kb.close()
    kb.open(f"for (; j < {n}; ++j)")
    sub[inner] = "j"
    x = kb.operand(instr, 0, Index(in_dims, tuple(sub)))
    kb.line(f"{lanes}[0] = {fn}({lanes}[0], {x});")
    kb.close()
    for _ in outer:
        kb.close()
    kb.line(f"{acc} = {lanes}[0];")
    kb.line(f"for (int l = 1; l < {LANES}; ++l) {acc} = {fn}({acc}, {lanes}[l]);")


register(OpRule("reduce", shape=_reduce_shape, kernel=_reduce_kernel))
