"""Control flow: while and conditional.

Their computations are lowered into sub-programs (`aotc.lower.subprogram`);
the kernel here only moves buffers and calls the sub-programs' execute
functions, giving them a slice of this kernel's arena scratch. The loop state
lives in the while instruction's own output buffers; the body writes the next
state into scratch, copied back after each trip so the body never reads what
it is writing.
"""
from __future__ import annotations

from ..hlo.dtypes import DTYPES
from ..hlo.ir import Instruction
from ..hlo.shape import Shape, TupleShape, leaves
from ..kernel import ir as K
from ..kernel.builder import Index
from .rule import OpRule, ShapeError

RULES: list[OpRule] = []  # this family's op definitions, gathered by registry.py

_ALIGN = 64


def _up(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _while_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 1:
        raise ShapeError("while takes exactly one operand (the initial loop state)")
    if not shapes[0].same_logical(instr.shape):
        raise ShapeError(f"while result {instr.shape} does not match its initial state {shapes[0]}")
    return shapes[0]


def _view(kb, scratch: K.Buf, offset: int, dtype, base: str) -> tuple[K.Var, K.Buf]:
    """A local pointer to `dtype` elements at byte `offset` of scratch, and its array."""
    v = K.Var(kb.fresh(base), None)
    kb.emit(K.Let(v, K.Ptr(scratch, K.Const(offset), elem=dtype, byte_view=True)))
    return v, K.Buf(v.name, dtype)


def _memcpy(kb, dst: K.Expr, src: K.Expr, nbytes: int) -> None:
    kb.emit(K.CallStmt("memcpy", (dst, src, K.Const(nbytes))))


def _while_kernel(kb, instr: Instruction, outs) -> None:
    cond = kb.subprogram(instr.attr("condition"))
    body = kb.subprogram(instr.attr("body"))
    init = kb.leaves(instr.operands[0])
    shapes = [s for _, s in leaves(instr.shape)]
    # scratch: [next state leaves][pred][sub-program arena]
    offs, off = [], 0
    for s in shapes:
        offs.append(off)
        off += _up(s.nbytes)
    pred_off = off
    sub_off = off + _ALIGN
    scratch = kb.need_scratch(sub_off + max(cond.arena_bytes, body.arena_bytes))
    for src, dst, s in zip(init, outs, shapes):
        _memcpy(kb, K.Ptr(dst), K.Ptr(src), s.nbytes)
    state = tuple(K.Ptr(o) for o in outs)
    nxt = tuple(_view(kb, scratch, o, s.dtype, f"next{k}")[0] for k, (o, s) in enumerate(zip(offs, shapes)))
    pred_v, pred = _view(kb, scratch, pred_off, DTYPES["pred"], "pred")
    arena = _view(kb, scratch, sub_off, DTYPES["u8"], "arena")[0]
    kb.repeat()
    kb.emit(K.Checkpoint())  # every trip: a cancelled run or one past its deadline stops here
    kb.emit(K.Exec(cond.name, state, (pred_v,), arena))
    kb.if_(K.Unary("!", K.Load(pred, K.Const(0)), K.BOOL))
    kb.emit(K.Break())
    kb.close()
    kb.emit(K.Exec(body.name, state, nxt, arena))
    for dst, src, s in zip(state, nxt, shapes):  # the body never reads the state it is writing
        _memcpy(kb, dst, src, s.nbytes)
    kb.close()


def _conditional_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if not shapes:
        raise ShapeError("conditional needs a branch index or predicate")
    sel = shapes[0]
    if isinstance(sel, TupleShape) or sel.rank != 0 or sel.dtype.name not in ("pred", "s32"):
        raise ShapeError(f"conditional selector must be a pred or s32 scalar, got {sel}")
    return instr.shape


def _branches(instr: Instruction) -> list[str]:
    if instr.has_attr("branch_computations"):
        return list(instr.attr("branch_computations"))
    return [instr.attr("true_computation"), instr.attr("false_computation")]


def _conditional_kernel(kb, instr: Instruction, outs) -> None:
    names = _branches(instr)
    progs = [kb.subprogram(n) for n in names]
    if len(instr.operands) != len(names) + 1:
        raise ShapeError(f"conditional has {len(names)} branches but {len(instr.operands) - 1} branch operands")
    sub_bytes = max(p.arena_bytes for p in progs)
    arena = K.Ptr(kb.need_scratch(sub_bytes), elem=DTYPES["u8"], byte_view=True) if sub_bytes else None
    sel_dt = kb.producers[instr.operands[0]].array_shape.dtype
    sel = kb.operand(instr, 0, Index(()))
    results = tuple(K.Ptr(o) for o in outs)
    n = len(names)

    def taken(k: int) -> K.Expr:
        """When branch k (not the last) runs: a true predicate takes the true computation;
        an index takes its branch, and an index out of range falls through to the last one
        (XLA's rule)."""
        if sel_dt.name == "pred" and not instr.has_attr("branch_computations"):
            return sel
        return sel.eq(k)

    if n > 1 and instr.has_attr("branch_computations"):
        kb.emit(K.Comment("XLA: an index out of range runs the last branch"))
    for k, prog in enumerate(progs):
        run = K.Exec(prog.name, tuple(K.Ptr(a) for a in kb.leaves(instr.operands[k + 1])), results, arena)
        if k == n - 1:
            kb.emit(run)
            break
        kb.if_(taken(k))
        kb.emit(run)
        kb.else_()
    for _ in range(n - 1):
        kb.close()


RULES.append(OpRule("while", shape=_while_shape, kernel=_while_kernel, buffered_operands=True,
                    runs=lambda i: (i.attr("condition"), i.attr("body"))))
RULES.append(OpRule("conditional", shape=_conditional_shape, kernel=_conditional_kernel, buffered_operands=True,
                    runs=lambda i: tuple(_branches(i))))
