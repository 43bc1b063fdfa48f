"""Inlining: splices the bodies of `call`, `fusion` and `map` into their callers.

A `map`'s computation works on scalars; spliced in, each of its instructions works on the
map's whole shape (constants are broadcast), which is the same arithmetic element by
element. After this pass no computation calls another through call/fusion/map; computations
still referenced as reducers or comparators (`to_apply`) remain. Returns the
module and a map from each removed call's name to the instruction that now
holds its value, so references by name (config fetches) can follow.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..errors import located
from ..hlo.ir import Computation, Instruction, Module
from ..hlo.opcodes import Op, calls_inline
from ..hlo.shape import ArrayShape
from ..ops.registry import KEEPS_INDEX, has
from ..hlo.ir import name_maker
from .order import topo_order

MAX_PREFIX = 64  # deeper call chains name spliced instructions after their innermost call only


@dataclass(slots=True)
class _Frame:
    """A computation being spliced: what is left of its body, its names in the output,
    the call instruction it replaces (None at the top), the prefix of its new names and,
    inside a map, the dimensions its scalar instructions are widened to."""
    body: Iterator[Instruction]
    subst: dict[str, str]
    site: Instruction | None
    prefix: str
    widen: tuple[int, ...] = ()


def inline_calls(m: Module, source_text: str | None = None) -> tuple[Module, dict[str, str]]:
    unique = name_maker(m)
    renamed: dict[str, str] = {}
    orders: dict[str, list[Instruction]] = {}

    def order(name: str) -> list[Instruction]:
        if name not in orders:
            orders[name] = topo_order(m.computation(name))
        return orders[name]

    def expand(comp: Computation) -> Computation:
        """`comp` with every call spliced in, nested calls too: a walk with an explicit
        stack of callee frames, so the depth of nesting costs no Python recursion and the
        work is the size of what comes out."""
        out: list[Instruction] = []
        top = _Frame(iter(order(comp.name)), {}, None, "")
        frames = [top]
        while frames:
            f = frames[-1]
            ins = next(f.body, None)
            if ins is None:  # a callee is done: its call's value is the callee's root
                frames.pop()
                if f.site is not None:
                    callee_root = f.subst[m.computation(f.site.called_computations()[0]).root]
                    frames[-1].subst[f.site.name] = callee_root
                    if frames[-1] is top and comp.is_entry:
                        renamed[f.site.name] = callee_root
                continue
            ops = tuple(f.subst.get(o, o) for o in ins.operands)
            if f.widen:
                _check_scalar(ins, f.site, source_text)
            if calls_inline(ins.opcode) or ins.opcode == Op.MAP:
                callee = ins.called_computations()[0]
                params = {ci.name: ops[ci.parameter_number] for ci in order(callee) if ci.opcode == Op.PARAMETER}
                prefix = f"{f.prefix}{ins.name}."  # the chain of call sites, while it reads
                widen = f.widen + (ins.shape.dims if ins.opcode == Op.MAP else ())
                frames.append(_Frame(iter(order(callee)), params, ins,
                                     prefix if len(prefix) <= MAX_PREFIX else f"{ins.name}.", widen))
                continue
            if f is top:
                out.append(ins.with_(operands=ops))
            elif ins.opcode != Op.PARAMETER:
                new = unique(f"{f.prefix}{ins.name}")
                f.subst[ins.name] = new
                if not f.widen:
                    out.append(ins.with_(name=new, operands=ops))
                elif ins.opcode == Op.CONSTANT:  # one scalar, broadcast to the map's shape
                    scalar = unique(f"{new}.scalar")
                    out.append(ins.with_(name=scalar))
                    out.append(Instruction(new, Op.BROADCAST, ArrayShape(ins.shape.dtype, f.widen), (scalar,),
                                           (("dimensions", ()),), loc=ins.loc))
                else:
                    out.append(ins.with_(name=new, operands=ops, shape=ArrayShape(ins.shape.dtype, f.widen)))
        root = top.subst.get(comp.root, comp.root)
        return Computation(comp.name, tuple(out), root, comp.is_entry, comp.has_signature, comp.loc)

    # expand only what stays: the entry, and what the kept instructions still call
    # (reducers, comparators, loop and branch bodies); computations reached only through
    # the inlined calls go
    done: dict[str, Computation] = {}
    todo = [m.entry]
    while todo:
        name = todo.pop()
        if name in done:
            continue
        done[name] = expand(m.computation(name))
        for ins in done[name].instructions:
            todo.extend(ins.called_computations())
    return m.with_computations(tuple(done[c.name] for c in m.computations if c.name in done)), renamed


def _check_scalar(ins: Instruction, site: Instruction, source_text: str | None) -> None:
    """A map's computation is spliced in element by element: refuse what is not a scalar
    op that computes each element from the same element of its operands."""
    scalar = isinstance(ins.shape, ArrayShape) and not ins.shape.dims
    if scalar and (ins.opcode in (Op.PARAMETER, Op.CONSTANT, Op.MAP) or calls_inline(ins.opcode)
                   or has(ins.opcode, KEEPS_INDEX)):
        return
    raise located(f"map {site.name}: {ins.opcode} {ins.name} ({ins.shape.text(False)}) is not a scalar "
                  f"elementwise op, and aotc applies a map's computation element by element",
                  ins.loc or site.loc, source_text)
