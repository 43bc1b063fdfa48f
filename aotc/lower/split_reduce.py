"""Large reductions with few results, split in two so that threads share them.

A reduce whose results are fewer than `FEW_RESULTS` cannot be threaded over its
results. When it folds at least `SPLIT_MIN` elements per result, over trailing
dimensions, with a reducer that is one associative op of its two parameters
(trait `associative`, as XLA:CPU regroups too), it becomes

    partial = reduce(reshape(x, [kept..., CHUNKS, n / CHUNKS]), over the last dimension)
    result  = reduce(partial, over the CHUNKS dimension)

The reshape is a view and `partial` has `CHUNKS` rows per result, which the
kernel threads over. `CHUNKS` depends on nothing but the shapes, so the order of
operations, and so the bits, are the same for every thread count and target.
The pass returns (module, changed) like the graph passes; it runs once, after
them, because it trades one value for two for the sake of the schedule.
"""
from __future__ import annotations

from ..hlo.ir import Instruction, Module
from ..hlo.shape import ArrayShape
from ..ops.registry import has
from ..ops.rule import ASSOCIATIVE
from ..passes.rewrite import Graph, Names, op, sweep
from ..hlo.opcodes import Op

FEW_RESULTS = 16
SPLIT_MIN = 1 << 18
CHUNKS = 16


def split_large_reductions(m: Module) -> tuple[Module, bool]:
    def rule(g: Graph, names: Names, ins: Instruction) -> list[Instruction] | None:
        if ins.opcode != Op.REDUCE or len(ins.operands) != 2 or not _regroupable(m, ins.attr("to_apply")):
            return None
        x = g.get(ins.operands[0])
        if not isinstance(x.shape, ArrayShape):
            return None
        dims = x.array_shape.dims
        rdims = sorted(ins.attr("dimensions") or ())
        rank = len(dims)
        if not rdims or rdims != list(range(rank - len(rdims), rank)):
            return None
        kept = dims[:rank - len(rdims)]
        n = 1
        for d in rdims:
            n *= dims[d]
        results = 1
        for d in kept:
            results *= d
        if results >= FEW_RESULTS or n < SPLIT_MIN or n % CHUNKS:
            return None
        base = ins.name
        rows = op(names.fresh(f"{base}.rows"), "reshape", x.array_shape.with_dims((*kept, CHUNKS, n // CHUNKS)),
                  (x.name,), ins)
        part = op(names.fresh(f"{base}.partial"), "reduce", ins.array_shape.with_dims((*kept, CHUNKS)),
                  (rows.name, ins.operands[1]), ins, _with_dims(ins, (len(kept) + 1,)))
        whole = op(base, "reduce", ins.shape, (part.name, ins.operands[1]), ins, _with_dims(ins, (len(kept),)))
        return [rows, part, whole]

    return sweep(m, rule)


def _regroupable(m: Module, reducer: str | None) -> bool:
    """Whether the reducer computation is one associative op of its two parameters."""
    if reducer is None:
        return False
    comp = m.computation(reducer)
    root = comp.get(comp.root)
    params = {i.name for i in comp.instructions if i.opcode == Op.PARAMETER}
    return (len(comp.instructions) == 3 and len(params) == 2 and set(root.operands) == params
            and has(root.opcode, ASSOCIATIVE))


def _with_dims(ins: Instruction, dims: tuple[int, ...]) -> tuple:
    return tuple((k, dims if k == "dimensions" else v) for k, v in ins.attrs)
