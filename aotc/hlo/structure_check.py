"""Structural checks of a module: computation and instruction names, the ENTRY computation,
parameter numbering, operand and callee references, arities from the opcode table, literal and
layout well-formedness, and attribute ranges. They add to a `Problems` report and never change
the module; shapes against op rules and calling conventions are `shape_check`'s."""
from __future__ import annotations

from typing import Any

from .ir import Computation, Instruction, Loc, Module
from .opcodes import OPCODES, VARIADIC, Op
from .problems import Problems, callees, computation_loc, layout_problem
from .shape import ArrayShape, Shape, TupleShape


def _where(loc: Loc | None) -> str:
    return f" (first defined at line {loc.line})" if loc is not None else ""


def check_computation_names(module: Module, problems: Problems) -> None:
    seen: dict[str, Computation] = {}
    for comp in module.computations:
        if comp.name in seen:
            problems.add(f"duplicate computation name {comp.name}{_where(computation_loc(seen[comp.name]))}",
                         computation_loc(comp))
        else:
            seen[comp.name] = comp


def check_entry(module: Module, problems: Problems) -> None:
    entries = [c for c in module.computations if c.is_entry]
    if not entries and not module.has_computation(module.entry):
        problems.add("module has no ENTRY computation", None)
        return
    for extra in entries[1:]:
        problems.add(f"second ENTRY computation {extra.name} (ENTRY is {entries[0].name})", computation_loc(extra))
    if not module.has_computation(module.entry):
        problems.add(f"ENTRY computation {module.entry} is not defined", None)
    elif entries and entries[0].name != module.entry:
        problems.add(f"computation {entries[0].name} is marked ENTRY but the module's entry is {module.entry}",
                     computation_loc(entries[0]))


def check_instruction_names(module: Module, problems: Problems) -> None:
    seen: dict[str, Instruction] = {}
    for _, instr in module.instructions():
        if instr.name in seen:
            problems.add(f"duplicate instruction name {instr.name}{_where(seen[instr.name].loc)}", instr.loc)
        else:
            seen[instr.name] = instr


def check_computation(module: Module, comp: Computation, owner: dict[str, str], problems: Problems,
                      bad: set[str]) -> None:
    """The computation's ROOT, parameters and instructions; an instruction whose structure is broken
    goes into `bad` (its shape is not checked). `owner` maps instruction names to their computation."""
    loc = computation_loc(comp)
    if not comp.instructions:
        problems.add(f"computation {comp.name} has no instructions", loc)
        return
    if not comp.root:
        problems.add(f"computation {comp.name} has no ROOT instruction", loc)
    elif not comp.has(comp.root):
        problems.add(f"ROOT {comp.root} of computation {comp.name} is not defined", loc)
    _check_parameters(comp, problems, bad)
    for instr in comp.instructions:
        if not _check_instruction(module, comp, instr, owner, problems):
            bad.add(instr.name)


def _check_parameters(comp: Computation, problems: Problems, bad: set[str]) -> None:
    by_number: dict[int, Instruction] = {}
    for p in (i for i in comp.instructions if i.opcode == Op.PARAMETER):
        n = p.parameter_number
        if n is None or n < 0:
            problems.add(f"parameter {p.name} has no valid parameter number", p.loc)
            bad.add(p.name)
        elif n in by_number:
            problems.add(f"{p.name}: parameter number {n} is already used by {by_number[n].name}", p.loc)
            bad.add(p.name)
        else:
            by_number[n] = p
    if by_number:
        gap = next(k for k in range(len(by_number) + 1) if k not in by_number)  # never counts to a huge number
        if gap < max(by_number):
            last = by_number[max(by_number)]
            problems.add(f"computation {comp.name} has parameter({max(by_number)}) but no "
                         f"parameter({gap}); parameters must be numbered 0..n-1", last.loc)


# the computation attributes an op cannot do without (conditional: branch_computations or
# true/false); keys as one string each, since select-and-scatter's are also opcode spellings
_REQUIRED_CALLEES = {op: tuple(keys.split()) for op, keys in (
    (Op.WHILE, "condition body"), (Op.CALL, "to_apply"), (Op.FUSION, "calls"), (Op.REDUCE, "to_apply"),
    (Op.REDUCE_WINDOW, "to_apply"), (Op.SORT, "to_apply"), (Op.SCATTER, "to_apply"), (Op.MAP, "to_apply"),
    (Op.SELECT_AND_SCATTER, "select scatter"), (Op.ALL_REDUCE, "to_apply"), (Op.REDUCE_SCATTER, "to_apply"))}


def _check_instruction(module: Module, comp: Computation, instr: Instruction,
                       owner: dict[str, str], problems: Problems) -> bool:
    """Structural checks of one instruction; False if its shape cannot be checked."""
    ok = True
    op = OPCODES.get(instr.opcode)
    if op is None:
        problems.add(f"{instr.name}: unknown opcode {instr.opcode}", instr.loc)
        return False
    if op.arity != VARIADIC and len(instr.operands) != op.arity:
        problems.add(f"{instr.name}: {instr.opcode} takes {op.arity} operand{'s' if op.arity != 1 else ''}, "
                     f"got {len(instr.operands)}", instr.loc)
        ok = False
    for o in instr.operands:
        if not comp.has(o):
            where = f" (it is defined in computation {owner[o]})" if o in owner else ""
            problems.add(f"{instr.name}: operand {o} is not defined in computation {comp.name}{where}", instr.loc)
            ok = False
    given = {key for key, _ in callees(instr)}
    missing = [k for k in _REQUIRED_CALLEES.get(instr.opcode, ()) if k not in given]
    if instr.opcode == Op.CONDITIONAL and not (given & {"branch_computations", "true_computation"}):
        missing = ["branch_computations"]
    if missing:
        problems.add(f"{instr.name}: {instr.opcode} needs {'= and '.join(missing)}=, the computation"
                     f"{'s' if len(missing) > 1 else ''} it calls", instr.loc)
        ok = False
    for key, callee in callees(instr):
        if not module.has_computation(callee):
            problems.add(f"{instr.name}: {key}={callee} names no computation", instr.loc)
            ok = False
    if instr.opcode == Op.CONSTANT and instr.literal is not None and not instr.literal.shape.same_logical(instr.shape):
        problems.add(f"{instr.name}: literal of shape {instr.literal.shape.text(False)} "
                     f"does not match declared {instr.shape.text(False)}", instr.loc)
        ok = False
    message = layout_problem(instr.shape)
    if message:
        problems.add(f"{instr.name}: {message}", instr.loc)
        ok = False
    if ok:
        shapes = [comp.get(o).shape for o in instr.operands]
        message = _attribute_problem(instr, shapes)
        if message:
            problems.add(f"{instr.name}: {message}", instr.loc)
            ok = False
    return ok


# ---------------------------------------------------------------- attributes


def _ints(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    return None


def _braced(dims: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, dims)) + "}"


def _rank(shape: Shape) -> int | None:
    return shape.rank if isinstance(shape, ArrayShape) else None


def _dims_in_range(instr: Instruction, key: str, rank: int | None, what: str, shape: Shape) -> str | None:
    dims = _ints(instr.attr(key))
    if dims is None or rank is None:
        return None
    shown = instr.attr(key) if isinstance(instr.attr(key), int) else _braced(dims)
    for d in dims:
        if not 0 <= d < rank:
            return f"{instr.opcode} {key}={shown} out of range for {what} {shape.text(False)} (rank {rank})"
    if len(set(dims)) != len(dims):
        return f"{instr.opcode} {key}={shown} repeats a dimension"
    return None


def _attribute_problem(instr: Instruction, shapes: list[Shape]) -> str | None:
    op = instr.opcode
    first = shapes[0] if shapes else None
    if op == "broadcast" and instr.has_attr("dimensions") and first is not None:
        problem = _dims_in_range(instr, "dimensions", _rank(instr.shape), "result", instr.shape)
        dims = _ints(instr.attr("dimensions"))
        if problem is None and dims is not None and _rank(first) is not None and len(dims) != _rank(first):
            problem = (f"broadcast dimensions={_braced(dims)} has {len(dims)} entries "
                       f"but operand {first.text(False)} has rank {_rank(first)}")
        return problem
    if op == "transpose" and instr.has_attr("dimensions") and first is not None:
        dims = _ints(instr.attr("dimensions"))
        rank = _rank(first)
        if dims is not None and rank is not None and sorted(dims) != list(range(rank)):
            return (f"transpose dimensions={_braced(dims)} is not a permutation of 0..{rank - 1} "
                    f"for operand {first.text(False)}")
        return None
    if op in (Op.REDUCE, Op.REVERSE, Op.SORT, Op.CONCATENATE, Op.MAP, Op.REDUCE_PRECISION) and first is not None:
        if instr.has_attr("dimensions"):
            return _dims_in_range(instr, "dimensions", _rank(first), "operand", first)
        return None
    if op == "get-tuple-element" and first is not None:
        index = instr.attr("index")
        if not isinstance(first, TupleShape):
            return f"get-tuple-element operand {instr.operands[0]} is not a tuple: {first.text(False)}"
        if isinstance(index, int) and not 0 <= index < len(first.elements):
            return (f"get-tuple-element index={index} out of range for operand {first.text(False)} "
                    f"with {len(first.elements)} element{'s' if len(first.elements) != 1 else ''}")
        return None
    if op == "iota":
        return _dims_in_range(instr, "iota_dimension", _rank(instr.shape), "result", instr.shape)
    if op == "dot" and len(shapes) == 2:
        for side, shape in (("lhs", shapes[0]), ("rhs", shapes[1])):
            for kind in ("contracting", "batch"):
                problem = _dims_in_range(instr, f"{side}_{kind}_dims", _rank(shape), side, shape)
                if problem:
                    return problem
        return None
    if op in (Op.GATHER, Op.SCATTER) and first is not None:
        keys = ("collapsed_slice_dims", "start_index_map", "operand_batching_dims") if op == "gather" else \
            ("inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims")
        for key in keys:
            problem = _dims_in_range(instr, key, _rank(first), "operand", first)
            if problem:
                return problem
        return None
    return None
