"""Checks of the module's ENTRY interface: `entry_computation_layout` agrees with the ENTRY
computation's parameters and result, and every `input_output_alias` names an existing output and
parameter of equal shape. They add to a `Problems` report and never change the module."""
from __future__ import annotations

from .ir import Module
from .opcodes import Op
from .problems import Problems, computation_loc, layout_problem
from .shape import Shape, TupleShape


def check_entry_layout(module: Module, problems: Problems) -> None:
    if not module.has_computation(module.entry):
        return
    entry = module.entry_computation
    if module.entry_params is not None:
        params = [i for i in entry.instructions if i.opcode == Op.PARAMETER and i.parameter_number is not None]
        if len(module.entry_params) != len(params):
            problems.add(f"entry_computation_layout has {len(module.entry_params)} parameter"
                         f"{'s' if len(module.entry_params) != 1 else ''} but ENTRY {entry.name} has {len(params)}",
                         computation_loc(entry))
        for p in params:
            n = p.parameter_number
            if n is None or not 0 <= n < len(module.entry_params):
                continue
            want = module.entry_params[n]
            message = layout_problem(want)
            if message:
                problems.add(f"entry_computation_layout parameter {n}: {message}", p.loc)
            elif not want.same_logical(p.shape):
                problems.add(f"parameter {p.name} is {p.shape.text(False)} but entry_computation_layout "
                             f"gives parameter {n} as {want.text(False)}", p.loc)
    if module.entry_result is not None and entry.has(entry.root):
        root = entry.root_instruction
        message = layout_problem(module.entry_result)
        if message:
            problems.add(f"entry_computation_layout result: {message}", root.loc)
        elif not module.entry_result.same_logical(root.shape):
            problems.add(f"ROOT {root.name} is {root.shape.text(False)} but entry_computation_layout "
                         f"gives the result as {module.entry_result.text(False)}", root.loc)


def _index_text(index: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, index)) + "}"


def _subshape(shape: Shape, index: tuple[int, ...]) -> Shape | None:
    for i in index:
        if not isinstance(shape, TupleShape) or not 0 <= i < len(shape.elements):
            return None
        shape = shape.elements[i]
    return shape


def check_aliases(module: Module, problems: Problems) -> None:
    """input_output_alias entries name existing outputs and parameters of equal shape."""
    if not module.aliases or not module.has_computation(module.entry):
        return
    entry = module.entry_computation
    loc = computation_loc(entry)
    params = {p.parameter_number: p for p in entry.instructions if p.opcode == Op.PARAMETER}
    result = entry.root_instruction.shape if entry.has(entry.root) else None
    seen: set[tuple[int, ...]] = set()
    for a in module.aliases:
        out = _index_text(a.output_index)
        where = f"input_output_alias {out}: ({a.param_number}, {_index_text(a.param_index)})"
        if a.output_index in seen:
            problems.add(f"{where}: output {out} is aliased twice", loc)
            continue
        seen.add(a.output_index)
        out_shape = _subshape(result, a.output_index) if result is not None else None
        param = params.get(a.param_number)
        in_shape = _subshape(param.shape, a.param_index) if param is not None else None
        if result is not None and out_shape is None:
            problems.add(f"{where}: the result {result.text(False)} has no output {out}", loc)
        elif param is None:
            problems.add(f"{where}: ENTRY {entry.name} has no parameter {a.param_number}", loc)
        elif in_shape is None:
            problems.add(f"{where}: parameter {param.name} {param.shape.text(False)} has no element "
                         f"{_index_text(a.param_index)}", loc)
        elif out_shape is not None and not out_shape.same_logical(in_shape):
            problems.add(f"{where}: output {out} is {out_shape.text(False)} but parameter {param.name} "
                         f"is {in_shape.text(False)}", loc)
