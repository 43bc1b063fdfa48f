"""Shape checks: an instruction's declared shape against its op's shape rule (given by the
caller: op definitions live above this layer), and the calling conventions between control flow
and the computations it calls. They add to a `Problems` report and never change the module."""
from __future__ import annotations

from typing import Callable

from .ir import Computation, Instruction, Module
from .opcodes import Op
from .problems import Problems
from .shape import Shape, ShapeError

# opcode -> its shape rule `(instr, operand shapes) -> shape` (raising ShapeError), or None
ShapeRuleLookup = Callable[[str], Callable[[Instruction, list[Shape]], Shape] | None]


def _args_text(shapes: list[Shape]) -> str:
    return ", ".join(s.text(False) for s in shapes)


def check_shape(module: Module, comp: Computation, instr: Instruction, problems: Problems,
                rule_for: ShapeRuleLookup) -> None:
    """The calling conventions of `instr`, then its declared shape against `rule_for(opcode)`."""
    shapes = [comp.get(o).shape for o in instr.operands]
    message = _calling_convention_problem(module, instr, shapes)
    if message:
        problems.add(f"{instr.name}: {message}", instr.loc)
        return
    shape_fn = rule_for(instr.opcode)
    if shape_fn is None:
        return
    try:
        inferred = shape_fn(instr, shapes)
    except ShapeError as e:
        problems.add(str(e), instr.loc)
        return
    if not inferred.same_logical(instr.shape):
        problems.add(f"shape mismatch: {instr.opcode}({_args_text(shapes)}) is {inferred.text(False)}, "
                     f"declared {instr.shape.text(False)}", instr.loc)


def _param_shapes(callee: Computation) -> list[Shape]:
    return [p.shape for p in callee.parameters]


def _root_shape(callee: Computation) -> Shape | None:
    return callee.root_instruction.shape if callee.has(callee.root) else None


def _takes(instr: Instruction, key: str, callee: Computation, n: int) -> str | None:
    got = len(callee.parameters)
    if got != n:
        return (f"{instr.opcode} {key}={callee.name} takes {got} parameter{'s' if got != 1 else ''}, "
                f"expected {n}")
    return None


def _calling_convention_problem(module: Module, instr: Instruction, shapes: list[Shape]) -> str | None:
    """Checks between an instruction and the computations it calls."""
    op = instr.opcode
    callees = {k: module.computation(v) for k, v in instr.attrs
               if isinstance(v, str) and k in ("to_apply", "calls", "condition", "body", "select", "scatter",
                                               "true_computation", "false_computation")}
    if op in (Op.CALL, Op.FUSION):
        key = "to_apply" if op == "call" else "calls"
        callee = callees.get(key)
        if callee is None:
            return None
        problem = _takes(instr, key, callee, len(shapes))
        if problem:
            return problem
        for k, (have, want) in enumerate(zip(shapes, _param_shapes(callee))):
            if not have.same_logical(want):
                return (f"{op} operand {k} is {have.text(False)} but parameter {k} of {callee.name} "
                        f"is {want.text(False)}")
        root = _root_shape(callee)
        if root is not None and not root.same_logical(instr.shape):
            return f"{op} {callee.name} returns {root.text(False)}, declared {instr.shape.text(False)}"
        return None
    if op == "while" and len(shapes) == 1:
        for key in ("condition", "body"):
            callee = callees.get(key)
            if callee is None:
                continue
            problem = _takes(instr, key, callee, 1)
            if problem:
                return problem
            want = _param_shapes(callee)[0]
            if not want.same_logical(shapes[0]):
                return (f"while {key}={callee.name} takes {want.text(False)} but the loop state is "
                        f"{shapes[0].text(False)}")
            root = _root_shape(callee)
            expect = "pred[]" if key == "condition" else shapes[0].text(False)
            if root is not None and root.text(False) != expect:
                return f"while {key}={callee.name} returns {root.text(False)}, expected {expect}"
        if not shapes[0].same_logical(instr.shape):
            return f"while loop state is {shapes[0].text(False)}, declared {instr.shape.text(False)}"
        return None
    if op == "conditional" and shapes:
        branches = [module.computation(b) for b in (instr.attr("branch_computations") or ())]
        if not branches:
            branches = [c for c in (callees.get("true_computation"), callees.get("false_computation")) if c]
        if len(branches) != len(shapes) - 1:
            return f"conditional {len(branches)} branch computations but {len(shapes) - 1} branch operands"
        for k, callee in enumerate(branches):
            problem = _takes(instr, "branch", callee, 1)
            if problem:
                return problem
            want = _param_shapes(callee)[0]
            if not want.same_logical(shapes[k + 1]):
                return (f"conditional branch {callee.name} takes {want.text(False)} but operand {k + 1} is "
                        f"{shapes[k + 1].text(False)}")
            root = _root_shape(callee)
            if root is not None and not root.same_logical(instr.shape):
                return f"conditional branch {callee.name} returns {root.text(False)}, declared {instr.shape.text(False)}"
        return None
    reducer = callees.get("to_apply")
    if reducer is not None:
        expected = {
            Op.REDUCE: len(shapes),
            Op.REDUCE_WINDOW: len(shapes),
            Op.SORT: 2 * len(shapes),
            Op.MAP: len(shapes),
            Op.SCATTER: 2 * ((len(shapes) - 1) // 2),
            Op.ALL_REDUCE: 2,
            Op.REDUCE_SCATTER: 2,
        }.get(op)
        if expected is not None:
            return _takes(instr, "to_apply", reducer, expected)
    if op == "select-and-scatter":
        for key in (Op.SELECT, Op.SCATTER):
            callee = callees.get(key)
            if callee is not None:
                problem = _takes(instr, key, callee, 2)
                if problem:
                    return problem
    return None
