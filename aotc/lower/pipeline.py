"""The lowering pipeline, as one readable list of stages: checked module and
signature in, `Program` out. Each stage's result can be dumped by name
(`aotc compile --dump-after STAGE`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Callable

from ..hlo.ir import Computation, Instruction, Literal, Module
from ..hlo.opcodes import Op
from ..hlo.shape import ArrayShape
from ..passes import PASS_NAMES, run_graph_passes
from ..passes.batchnorm import expand_batch_norm
from ..passes.widen import widen_narrow_convolutions
from .assemble import build_program
from .delayout import remove_layouts
from .dynamic import pad_dynamic
from .expand import expand_one_device
from .flatten import flatten_feeds
from .fused import Fused, form_fusions
from .fusion import plan_fusion
from .inline import inline_calls
from .names import NameSupply
from .order import topo_order
from .program import Program
from .simplify import simplify
from .split_reduce import split_large_reductions
from .subprogram import lower_control_flow

SPLIT = (("split", split_large_reductions),)
STAGES = ("bind", "expand", "inline", "dynamic", "delayout", "batchnorm", "widen", "simplify", *PASS_NAMES, "split", "fusion", "subprograms",
          "program")


@dataclass(frozen=True, slots=True)
class LowerResult:
    module: Module  # the simplified entry computation's module
    fusion: Fused
    program: Program


def lower(module: Module, sig, *, name: str, source: str, target: str = "host", source_text: str | None = None,
          dump: Callable[[str, object], None] | None = None, names: NameSupply | None = None,
          programs: dict | None = None, weights: str = "bound", fma: bool = False,
          custom_calls: tuple[str, ...] = (), conv_algorithm: str = "direct",
          stream_min_bytes: int = 0) -> LowerResult:
    """Lower `module` to the Program `name`; `names` is the supply of the whole .c file and
    `programs` the sub-programs lowered so far (a sub-program shares its caller's; the
    top-level call creates them). With `weights="file"` bound parameters stay parameters,
    whose values a weights file supplies at run time: no code depends on them. `fma`: the
    target has fused multiply-adds, so products added once are fused, as XLA:CPU fuses them.
    `custom_calls`: the custom-call targets the application implements (docs/custom_calls.md).
    `conv_algorithm`: direct, or winograd2 / winograd4 for stride-1 3x3 convolutions (docs/winograd.md).
    `stream_min_bytes`: outputs of at least this size are written with non-temporal stores
    (kernel/stream.py; 0: none). Sub-programs get none: a loop body's outputs are read again."""
    dump = dump or (lambda stage, obj: None)
    names = names or NameSupply(reserved=(f"{name}_execute",), prefix=name)
    m = bind_parameters(module, sig) if weights == "bound" else module  # bound parameters become constants
    m = bind_tokens(m, sig)                             # entry token parameters: fresh tokens (after-all)
    dump("bind", m)
    m = expand_one_device(m, source_text)               # collectives, async pairs, markers: as on one device
    dump("expand", m)
    m, renamed = inline_calls(m, source_text)           # call/fusion/map bodies spliced into callers
    m = flatten_feeds(m)                                # infeed/recv values nesting tuples: one flat tuple
    dump("inline", m)
    m, sig, dynamic = pad_dynamic(m, sig, renamed, source_text)  # dynamic dims at their bound, sizes as values
    dump("dynamic", m)
    m = remove_layouts(m)                               # bitcasts become reshape/transpose; all row-major
    dump("delayout", m)
    m, _ = expand_batch_norm(m)                         # batch-norm ops as XLA's BatchNormExpander writes them
    dump("batchnorm", m)
    m, _ = widen_narrow_convolutions(m)                 # f8/f4/s4 convolutions in f32/s8, as XLA:CPU's
    dump("widen", m)
    fetch_refs = [(renamed.get(f.instruction, f.instruction), f.shape_index) for f in sig.fetches]
    updates = [(k, f.update_output) for k, f in enumerate(sig.feeds)
               if f.kind == "variable" and not f.readonly and f.update_output is not None]
    root = m.entry_computation.root
    refs = fetch_refs + [(root, idx) for _, idx in updates]
    m, live = simplify(m, refs)                         # identities, tuple plumbing, dead code
    m = _topo_sorted(m)
    dump("simplify", m)
    m, live = run_graph_passes(m, live, dump)           # XLA's rewrites, constant folding, CSE (to a fixpoint)
    m, live = run_graph_passes(m, live, dump, SPLIT, 1)  # large reductions with few results: in chunks, for threads
    m = _topo_sorted(m)
    entry = m.entry_computation
    plan = plan_fusion(entry, {n for n, _ in live}, source_text)   # kernels, fused values, views, epilogues
    fused = form_fusions(m, entry, plan.roles, plan.order, plan.epilogues)  # as fusion instructions
    dump("fusion", fused.module)
    var_refs = [(k, live[len(fetch_refs) + j]) for j, (k, _) in enumerate(updates)]
    subs = lower_control_flow(m, entry, plan.order, name, target, source, source_text, names,  # loop and
                              {} if programs is None else programs,  # branch bodies
                              partial(lower, fma=fma, custom_calls=custom_calls,
                                      conv_algorithm=conv_algorithm))
    dump("subprograms", subs)
    program = build_program(fused, live[:len(fetch_refs)], var_refs, sig,   # slots, kernels, arena
                            name=name, source=source, target=target, source_text=source_text, names=names,
                            subprograms=subs, weights_file=weights == "file", fma=fma, custom_calls=custom_calls,
                            conv_algorithm=conv_algorithm, stream_min_bytes=stream_min_bytes)
    if dynamic:
        program = replace(program, dynamic_results=dynamic)
    dump("program", program)
    return LowerResult(m, fused, program)


def _topo_sorted(m: Module) -> Module:
    entry = Computation(m.entry, tuple(topo_order(m.entry_computation)), m.entry_computation.root, True)
    return m.with_computations(tuple(entry if c.is_entry else c for c in m.computations))


def bind_tokens(m: Module, sig) -> Module:
    """Each token parameter of the entry computation that is no feed becomes `after-all()`:
    a token carries no data, so the generated API has no argument for it."""
    entry = m.entry_computation
    fed = {f.hlo_name for f in sig.feeds}
    if not any(i.opcode == Op.PARAMETER and isinstance(i.shape, ArrayShape) and i.shape.is_token
               and i.name not in fed for i in entry.instructions):
        return m
    out = [Instruction(i.name, "after-all", i.shape, (), (), loc=i.loc)
           if i.opcode == Op.PARAMETER and isinstance(i.shape, ArrayShape) and i.shape.is_token and i.name not in fed
           else i for i in entry.instructions]
    comp = Computation(entry.name, tuple(out), entry.root, True, entry.has_signature, entry.loc)
    return m.with_computations(tuple(comp if c.is_entry else c for c in m.computations))


def bind_parameters(m: Module, sig) -> Module:
    """Replace every bound parameter of the entry computation by a constant holding its value."""
    if not sig.bound:
        return m
    bound = {b.hlo_name: b for b in sig.bound}
    entry = m.entry_computation
    out: list[Instruction] = []
    for ins in entry.instructions:
        b = bound.get(ins.name)
        if b is not None:
            ins = Instruction(ins.name, "constant", ins.shape, (), (), Literal(ins.shape, b.array), loc=ins.loc)
        out.append(ins)
    comp = Computation(entry.name, tuple(out), entry.root, True, entry.has_signature, entry.loc)
    return m.with_computations(tuple(comp if c.is_entry else c for c in m.computations))
