"""Structural and shape verification of a parsed HLO module.

`verify` checks what every later stage takes for granted: names resolve,
arities match the opcode table, no cycles, parameters numbered 0..n-1,
attributes in range, layouts well formed, and every shape agrees with the op's
shape rule from `aotc.ops.registry`. It reports the first problem in source
order as one located `AotcError`. It never changes the module and knows no op
semantics beyond attribute ranges and the calling conventions of control flow.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ..errors import AotcError, located
from .ir import COMPUTATION_ATTRS, COMPUTATION_LIST_ATTRS, Computation, Instruction, Loc, Module
from .opcodes import OPCODES, VARIADIC
from .shape import ArrayShape, Shape, ShapeError, TupleShape, leaves
from .opcodes import Op

# opcode -> its shape rule `(instr, operand shapes) -> shape` (raising ShapeError), or None
ShapeRuleLookup = Callable[[str], Callable[[Instruction, list[Shape]], Shape] | None]

_FAR = (1 << 62, 0)  # sort key of problems without a location: after everything located


@dataclass(order=True)
class _Problem:
    key: tuple[int, int]
    seq: int
    message: str = field(compare=False)
    loc: Loc | None = field(compare=False)


class _Problems:
    """Collects problems; the earliest in source order wins."""

    def __init__(self) -> None:
        self.items: list[_Problem] = []

    def add(self, message: str, loc: Loc | None) -> None:
        key = (loc.line, loc.col) if loc is not None else _FAR
        self.items.append(_Problem(key, len(self.items), message, loc))

    def first(self) -> _Problem | None:
        return min(self.items) if self.items else None


def verify(module: Module, source_text: str | None = None, shape_rule: ShapeRuleLookup | None = None) -> None:
    """Raise one located AotcError for the first problem (in source order) in `module`.
    `shape_rule(opcode)` gives the op's shape rule (the op definitions own them: this layer
    takes them as a parameter); without it only structure is checked."""
    problems = _Problems()
    bad: set[str] = set()  # instructions whose structure is broken: no shape checks on them
    _check_computation_names(module, problems)
    _check_entry(module, problems)
    _check_instruction_names(module, problems)
    owner: dict[str, str] = {}  # instruction name -> computation defining it (first one)
    for comp, instr in module.instructions():
        owner.setdefault(instr.name, comp.name)
    for comp in module.computations:
        _check_computation(module, comp, owner, problems, bad)
        _check_instruction_cycles(comp, problems, bad)
    _check_call_cycles(module, problems)
    _check_entry_layout(module, problems)
    _check_aliases(module, problems)
    if shape_rule is not None:
        for comp in module.computations:
            for instr in comp.instructions:
                if instr.name not in bad:
                    _check_shape(module, comp, instr, problems, shape_rule)
    worst = problems.first()
    if worst is None:
        return
    if worst.loc is None:
        raise AotcError(worst.message, file=module.source)
    raise located(worst.message, worst.loc, source_text)


# ---------------------------------------------------------------- module level


def _comp_loc(comp: Computation) -> Loc | None:
    if comp.loc is not None:
        return comp.loc
    return comp.instructions[0].loc if comp.instructions else None


def _where(loc: Loc | None) -> str:
    return f" (first defined at line {loc.line})" if loc is not None else ""


def _check_computation_names(module: Module, problems: _Problems) -> None:
    seen: dict[str, Computation] = {}
    for comp in module.computations:
        if comp.name in seen:
            problems.add(f"duplicate computation name {comp.name}{_where(_comp_loc(seen[comp.name]))}",
                         _comp_loc(comp))
        else:
            seen[comp.name] = comp


def _check_entry(module: Module, problems: _Problems) -> None:
    entries = [c for c in module.computations if c.is_entry]
    if not entries and not module.has_computation(module.entry):
        problems.add("module has no ENTRY computation", None)
        return
    for extra in entries[1:]:
        problems.add(f"second ENTRY computation {extra.name} (ENTRY is {entries[0].name})", _comp_loc(extra))
    if not module.has_computation(module.entry):
        problems.add(f"ENTRY computation {module.entry} is not defined", None)
    elif entries and entries[0].name != module.entry:
        problems.add(f"computation {entries[0].name} is marked ENTRY but the module's entry is {module.entry}",
                     _comp_loc(entries[0]))


def _check_instruction_names(module: Module, problems: _Problems) -> None:
    seen: dict[str, Instruction] = {}
    for _, instr in module.instructions():
        if instr.name in seen:
            problems.add(f"duplicate instruction name {instr.name}{_where(seen[instr.name].loc)}", instr.loc)
        else:
            seen[instr.name] = instr


# ---------------------------------------------------------------- per computation


def _check_computation(module: Module, comp: Computation, owner: dict[str, str], problems: _Problems,
                       bad: set[str]) -> None:
    loc = _comp_loc(comp)
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


def _check_parameters(comp: Computation, problems: _Problems, bad: set[str]) -> None:
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
        missing = sorted(set(range(max(by_number) + 1)) - set(by_number))
        if missing:
            last = by_number[max(by_number)]
            problems.add(f"computation {comp.name} has parameter({max(by_number)}) but no "
                         f"parameter({missing[0]}); parameters must be numbered 0..n-1", last.loc)


def _check_instruction(module: Module, comp: Computation, instr: Instruction,
                       owner: dict[str, str], problems: _Problems) -> bool:
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
    for key, callee in _callees(instr):
        if not module.has_computation(callee):
            problems.add(f"{instr.name}: {key}={callee} names no computation", instr.loc)
            ok = False
    if instr.opcode == Op.CONSTANT and instr.literal is not None and not instr.literal.shape.same_logical(instr.shape):
        problems.add(f"{instr.name}: literal of shape {instr.literal.shape.text(False)} "
                     f"does not match declared {instr.shape.text(False)}", instr.loc)
        ok = False
    message = _layout_problem(instr.shape)
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


def _callees(instr: Instruction) -> Iterable[tuple[str, str]]:
    """(attribute key, computation name) for every computation reference."""
    for key, value in instr.attrs:
        if key in COMPUTATION_ATTRS and isinstance(value, str):
            yield key, value
        elif key in COMPUTATION_LIST_ATTRS and isinstance(value, (tuple, list)):
            for v in value:
                yield key, v


def _layout_problem(shape: Shape) -> str | None:
    for _, leaf in leaves(shape):
        if leaf.layout is not None and sorted(leaf.layout) != list(range(leaf.rank)):
            return f"layout {{{','.join(map(str, leaf.layout))}}} of {leaf.text(False)} is not a permutation of 0..{leaf.rank - 1}" \
                if leaf.rank else f"layout {{{','.join(map(str, leaf.layout))}}} of scalar {leaf.text(False)} must be empty"
    return None


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


# ---------------------------------------------------------------- cycles


def _strongly_connected(nodes: list[str], edges: dict[str, list[str]]) -> dict[str, int]:
    """Tarjan's algorithm, iterative: node -> component id."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    comp_of: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = 0
    n_comps = 0
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            succs = edges.get(node, [])
            if i < len(succs):
                work.append((node, i + 1))
                nxt = succs[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp_of[w] = n_comps
                    if w == node:
                        break
                n_comps += 1
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return comp_of


def _path(src: str, dst: str, edges: dict[str, list[str]], scc: dict[str, int]) -> list[str]:
    """Shortest path src -> ... -> dst inside one strongly connected component
    (a cycle when src == dst)."""
    prev: dict[str, str] = {}
    seen = {src}
    frontier = [src]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for succ in edges.get(node, []):
                if succ == dst:
                    path = [node]
                    while path[-1] != src:
                        path.append(prev[path[-1]])
                    return path[::-1] + [dst]
                if succ not in seen and scc.get(succ) == scc[src]:
                    seen.add(succ)
                    prev[succ] = node
                    following.append(succ)
        frontier = following
    return [src, dst]


def _check_instruction_cycles(comp: Computation, problems: _Problems, bad: set[str]) -> None:
    names = [i.name for i in comp.instructions]
    edges = {i.name: [o for o in i.operands if comp.has(o)] for i in comp.instructions}
    scc = _strongly_connected(names, edges)
    sizes: dict[int, int] = {}
    for c in scc.values():
        sizes[c] = sizes.get(c, 0) + 1
    reported: set[int] = set()
    for instr in comp.instructions:
        c = scc[instr.name]
        cyclic = sizes[c] > 1 or instr.name in edges[instr.name]
        if cyclic:
            bad.add(instr.name)
            if c not in reported:
                reported.add(c)
                path = _path(instr.name, instr.name, edges, scc)
                problems.add(f"{instr.name} depends on itself: {' -> '.join(path)}", instr.loc)


def _check_call_cycles(module: Module, problems: _Problems) -> None:
    names = [c.name for c in module.computations]
    edges: dict[str, list[str]] = {}
    for comp in module.computations:
        edges.setdefault(comp.name, []).extend(
            callee for i in comp.instructions for _, callee in _callees(i) if module.has_computation(callee))
    scc = _strongly_connected(names, edges)
    sizes: dict[int, int] = {}
    for c in scc.values():
        sizes[c] = sizes.get(c, 0) + 1
    reported: set[int] = set()
    for comp in module.computations:
        c = scc.get(comp.name)
        for instr in comp.instructions:
            for key, callee in _callees(instr):
                if c in reported or not module.has_computation(callee) or scc.get(callee) != c:
                    continue
                if sizes[c] == 1 and callee != comp.name:
                    continue
                reported.add(c)
                path = [comp.name] + (_path(callee, comp.name, edges, scc) if callee != comp.name else [comp.name])
                problems.add(f"recursive computation call via {key}={callee}: {' -> '.join(path)}", instr.loc)


# ---------------------------------------------------------------- entry layout


def _check_entry_layout(module: Module, problems: _Problems) -> None:
    if not module.has_computation(module.entry):
        return
    entry = module.entry_computation
    if module.entry_params is not None:
        params = [i for i in entry.instructions if i.opcode == Op.PARAMETER and i.parameter_number is not None]
        if len(module.entry_params) != len(params):
            problems.add(f"entry_computation_layout has {len(module.entry_params)} parameter"
                         f"{'s' if len(module.entry_params) != 1 else ''} but ENTRY {entry.name} has {len(params)}",
                         _comp_loc(entry))
        for p in params:
            n = p.parameter_number
            if n is None or not 0 <= n < len(module.entry_params):
                continue
            want = module.entry_params[n]
            message = _layout_problem(want)
            if message:
                problems.add(f"entry_computation_layout parameter {n}: {message}", p.loc)
            elif not want.same_logical(p.shape):
                problems.add(f"parameter {p.name} is {p.shape.text(False)} but entry_computation_layout "
                             f"gives parameter {n} as {want.text(False)}", p.loc)
    if module.entry_result is not None and entry.has(entry.root):
        root = entry.root_instruction
        message = _layout_problem(module.entry_result)
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


def _check_aliases(module: Module, problems: _Problems) -> None:
    """input_output_alias entries name existing outputs and parameters of equal shape."""
    if not module.aliases or not module.has_computation(module.entry):
        return
    entry = module.entry_computation
    loc = _comp_loc(entry)
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


# ---------------------------------------------------------------- shapes


def _args_text(shapes: list[Shape]) -> str:
    return ", ".join(s.text(False) for s in shapes)


def _check_shape(module: Module, comp: Computation, instr: Instruction, problems: _Problems, rule_for) -> None:
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

