"""Control flow: while and conditional.

Their computations are lowered into sub-programs (`aotc.lower.subprogram`);
the kernel here only moves buffers and calls the sub-programs' execute
functions, giving them a slice of this kernel's arena scratch. The loop state
lives in the while instruction's own output buffers; the body writes the next
state into scratch, copied back after each trip so the body never reads what
it is writing.
"""
from __future__ import annotations

from ..hlo.ir import Instruction
from ..hlo.shape import Shape, TupleShape, leaves
from .registry import OpRule, ShapeError, register

_ALIGN = 64


def _up(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _while_shape(instr: Instruction, shapes: list[Shape]) -> Shape:
    if len(shapes) != 1:
        raise ShapeError("while takes exactly one operand (the initial loop state)")
    if not shapes[0].same_logical(instr.shape):
        raise ShapeError(f"while result {instr.shape} does not match its initial state {shapes[0]}")
    return shapes[0]


def _call_list(names: list[str]) -> str:
    return ", ".join(names) if names else "0"


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
    kb.line(f"unsigned char* const w = (unsigned char*){scratch};")
    for src, dst, s in zip(init, outs, shapes):
        kb.line(f"memcpy({dst.cname}, {src.cname}, {s.nbytes});")
    state = [o.cname for o in outs]
    nxt = [f"w + {o}" for o in offs]
    kb.line(f"void* const state[] = {{{_call_list(state)}}};")
    kb.line(f"void* const next[] = {{{_call_list(nxt)}}};")
    kb.line(f"void* const pred[] = {{w + {pred_off}}};")
    kb.open("for (;;)")
    kb.line(f"{cond.name}_execute(state, pred, w + {sub_off}, 0);")
    kb.line("if (!*(const uint8_t*)pred[0]) break;")
    kb.line(f"{body.name}_execute(state, next, w + {sub_off}, 0);")
    for k, s in enumerate(shapes):
        kb.line(f"memcpy(state[{k}], next[{k}], {s.nbytes});")
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
    from .legacy_c import Index
    names = _branches(instr)
    progs = [kb.subprogram(n) for n in names]
    if len(instr.operands) != len(names) + 1:
        raise ShapeError(f"conditional has {len(names)} branches but {len(instr.operands) - 1} branch operands")
    sub_bytes = max(p.arena_bytes for p in progs)
    arena = f"(unsigned char*){kb.need_scratch(sub_bytes)}" if sub_bytes else "0"
    sel_dt = kb.producers[instr.operands[0]].array_shape.dtype
    sel = kb.operand(instr, 0, Index(()))
    n = len(names)
    if instr.has_attr("branch_computations"):
        # XLA: an out-of-range index runs the last branch
        b = kb.let("int32_t", f"({sel} < 0 || {sel} >= {n}) ? {n - 1} : {sel}", "branch")
    else:
        b = kb.let("int32_t", f"{sel} ? 0 : 1" if sel_dt.name == "pred" else sel, "branch")
    kb.line(f"void* const results[] = {{{_call_list([o.cname for o in outs])}}};")
    kb.open(f"switch ({b})")
    for k, prog in enumerate(progs):
        args = [f"(void*){a.cname}" for a in kb.leaves(instr.operands[k + 1])]
        kb.open(f"{'default' if k == n - 1 else f'case {k}'}:")
        kb.line(f"void* const args[] = {{{_call_list(args)}}};")
        kb.line(f"{prog.name}_execute(args, results, {arena}, 0);")
        kb.line("break;")
        kb.close()
    kb.close()


register(OpRule("while", shape=_while_shape, kernel=_while_kernel, buffered_operands=True))
register(OpRule("conditional", shape=_conditional_shape, kernel=_conditional_kernel, buffered_operands=True))
