"""reduce-window: each output element folds the to_apply computation over the positions of
its window that land on the input, starting from the init value, in XLA:CPU's order
(window.over_windows: row-major, or with the one dimension XLA's loop emitter peels split),
so sums have XLA's bits. Window geometry is window.py's.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction, WindowDim
from ..hlo.shape import ArrayShape, Shape, TupleShape
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type, store_value
from .elementwise import _arr
from .reduce import f32_combiner
from .rule import OpRule, ShapeError
from .window import ZERO, check_window, over_windows, peeled_dim, span_misses_input, window_output_size, window_span

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py


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
    peel = peeled_dim(in_dims, out_dims, wins)

    def accumulate(sub: list[K.Expr]) -> None:
        xs = [kb.operand(instr, k, Index(in_dims, tuple(sub))) for k in range(n)]
        if n == 1:
            kb.assign(accs[0], K.Call(fn, (accs[0], xs[0]), types[0]))
        else:
            kb.emit(K.CallStmt(fn, tuple(accs) + tuple(xs) + tuple(K.Ptr(var=a) for a in accs)))

    if not misses:
        over_windows(kb, spans, accumulate, peel)
    lin = kb.linear(Index(out_dims, tuple(o_vars)))
    for k in range(n):
        kb.store(outs[k], lin, store_value(ins[k].dtype, accs[k]))
    for m in out_dims:
        if m > 1:
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
    peel = peeled_dim(in_dims, out_dims, wins)  # never the minor dimension (a window of 1)

    def accumulate(sub: list[K.Expr]) -> None:
        c = kb.loop(kb.fresh("c"), out_dims[-1], (K.VECTOR,))
        x = kb.operand(instr, 0, Index(in_dims, tuple(sub) + (c,)))
        kb.store(out, row + c, combine(K.Load(out, row + c), x))
        kb.close()

    if not misses:
        over_windows(kb, spans, accumulate, peel)
    for m in rows:
        if m > 1:
            kb.close()


RULES.append(OpRule("reduce-window", shape=_reduce_window_shape, kernel=_reduce_window_kernel))
