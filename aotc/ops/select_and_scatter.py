"""select-and-scatter (the gradient of max pooling): for each source element, the window
of the operand it belongs to selects one element with the `select` computation, and the
source value is combined into the result there with the `scatter` computation. Window
geometry comes from window.py; this module owns only the op's shape rule and kernel.

The order is XLA:CPU's (its SelectAndScatterExpander: a reduce-window over the operand and
its indices, then a scatter): window positions in XLA's reduce-window order
(window.over_windows: row-major, or split at the dimension XLA's loop emitter peels, which
with window padding decides ties), positions on padding skipped, the first real element
selected, then a later element `x` replaces the selected `s` when `select(s, x)` is false
(under GE the first maximum wins, a NaN is replaced by the next element).
Source elements scatter in row-major order, so overlapping windows add in XLA's order.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import Shape
from ..kernel import ir as K
from ..kernel.builder import Index, compute_type, load_value, store_value
from .elementwise import _arr
from .rule import OpRule, ShapeError
from .window import check_window, over_windows, peeled_dim, span_misses_input, window_output_size, window_span

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

U8 = DTYPES["u8"]


def _shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 3:
        raise ShapeError("select-and-scatter needs an operand, a source and an init value")
    operand, source, init = (_arr(s, n) for s, n in zip(shapes, ("operand", "source", "init value")))
    wins = check_window(instr.attr("window"), operand.rank, "select-and-scatter")
    if any(w.lhs_dilate != 1 or w.rhs_dilate != 1 for w in wins):
        raise ShapeError("select-and-scatter window must not be dilated")
    want = tuple(window_output_size(n, w) for n, w in zip(operand.dims, wins))
    if source.dims != want:
        raise ShapeError(f"select-and-scatter source {source.text(False)} does not match the window's "
                         f"output dimensions {list(want)}")
    if source.dtype != operand.dtype or init.rank != 0 or init.dtype != operand.dtype:
        raise ShapeError(f"select-and-scatter source and init value must be {operand.dtype.name} "
                         f"like the operand, got {source.text(False)} and {init.text(False)}")
    for key in ("select", "scatter"):
        if instr.attr(key) is None:
            raise ShapeError(f"select-and-scatter needs a {key} computation")
    return operand.with_layout(None)


def _kernel(kb, instr: Instruction, outs) -> None:
    out = outs[0]
    operand = kb.producers[instr.operands[0]].array_shape
    source = kb.producers[instr.operands[1]].array_shape
    dt, ct = operand.dtype, compute_type(operand.dtype)
    select = kb.scalar_function(instr.attr("select"))
    scatter = kb.scalar_function(instr.attr("scatter"))
    wins = instr.attr("window").dims
    # 1. the result starts as the init value
    if operand.size == 0:
        return
    init = kb.let(kb.operand(instr, 2, Index(())), "init")
    i = kb.loop(kb.fresh("i"), operand.size, (K.PARALLEL, K.VECTOR))
    kb.store(out, i, store_value(dt, init))
    kb.close()
    if source.size == 0:
        return

    # 2. each source element in row-major order (not parallel: windows may overlap)
    s_vars: list[K.Expr] = [kb.loop(kb.fresh(f"s{d}"), m) if m > 1 else K.Const(0)
                            for d, m in enumerate(source.dims)]
    if any(span_misses_input(s_vars[d], wd, operand.dims[d]) for d, wd in enumerate(wins)):
        for m in source.dims:  # no window has a real element: every source value is dropped
            if m > 1:
                kb.close()
        return
    spans = [window_span(kb, s_vars[d], wd, operand.dims[d], source.dims[d], f"w{d}") for d, wd in enumerate(wins)]
    best = kb.local(ct, K.Const(0, ct), "best")
    at = kb.local(K.INDEX, K.Const(-1), "at")

    def consider(sub: list[K.Expr]) -> None:
        x = kb.let(kb.operand(instr, 0, Index(operand.dims, tuple(sub))), "x")
        keep = K.Call(select, (best, x), U8)
        kb.if_(K.Binary("||", at.lt(0), K.Binary("==", keep, K.Const(0, U8), K.BOOL), K.BOOL))
        kb.assign(best, x)
        kb.assign(at, kb.linear(Index(operand.dims, tuple(sub))))
        kb.close()

    over_windows(kb, spans, consider, peeled_dim(operand.dims, source.dims, wins))
    kb.if_(at.ge(0))
    src = kb.operand(instr, 1, Index(source.dims, tuple(s_vars)))
    cur = load_value(dt, K.Load(out, at))
    kb.store(out, at, store_value(dt, K.Call(scatter, (cur, src), ct)))
    kb.close()
    for m in source.dims:
        if m > 1:
            kb.close()


RULES.append(OpRule("select-and-scatter", shape=_shape, kernel=_kernel))
